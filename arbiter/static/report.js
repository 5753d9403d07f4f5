// The report page: charts from the inlined figures, the games list and the replay.
// Every figure is computed by the arbiter; this script only lays them out.
"use strict";
(function () {
  const figures = JSON.parse(document.getElementById("report-figures").textContent);
  const games = JSON.parse(document.getElementById("report-games").textContent);
  const PALETTE = ["#2f6db5", "#d9822b", "#3c9d5d", "#b63b3b", "#7d5bb5", "#8a6d3b", "#d45fa0", "#5b8a8a"];
  const colourOf = (i) => PALETTE[i % PALETTE.length];

  Chart.register(
    ChartErrorBars.BarWithErrorBarsController,
    ChartErrorBars.BarWithErrorBar,
  );
  Chart.defaults.animation = false; // a report, not a show: draw at once
  Chart.defaults.maintainAspectRatio = false;

  function chart(id, config) {
    const canvas = document.getElementById(id);
    return canvas ? new Chart(canvas, config) : null;
  }

  // ---- standings: Elo with the 95 % interval as error bars
  if (figures.standings) {
    const rows = figures.standings.filter((r) => r.elo !== null);
    chart("chart-standings", {
      type: "barWithErrorBars",
      data: {
        labels: rows.map((r) => r.engine),
        datasets: [{
          label: "Elo (95 % interval)",
          data: rows.map((r) => ({
            x: r.elo,
            xMin: r.lower === null ? r.elo : r.lower,
            xMax: r.upper === null ? r.elo : r.upper,
          })),
          backgroundColor: rows.map((r) => colourOf(figures.engines.indexOf(r.engine)) + "99"),
        }],
      },
      options: { indexAxis: "y", plugins: { legend: { display: false } },
                 scales: { x: { title: { display: true, text: "Elo" } } } },
    });
  }

  // ---- crosstable as a heat map (row's score against column)
  const names = figures.crosstable_order; // as the terminal's crosstable: best first
  const heat = (score) => {
    const t = score / 100; // 0 red … 0.5 pale … 1 green
    const r = Math.round(t < 0.5 ? 200 : 200 - (t - 0.5) * 2 * 150);
    const g = Math.round(t < 0.5 ? 60 + t * 2 * 160 : 220 - (t - 0.5) * 2 * 40);
    const b = Math.round(t < 0.5 ? 60 + t * 2 * 140 : 200 - (t - 0.5) * 2 * 120);
    return `rgb(${r},${g},${b})`;
  };
  const cellLabels = {
    id: "cellLabels",
    afterDatasetsDraw(c) {
      const ctx = c.ctx;
      ctx.save();
      ctx.font = "12px system-ui, sans-serif";
      ctx.textAlign = "center";
      ctx.textBaseline = "middle";
      c.getDatasetMeta(0).data.forEach((el, i) => {
        const v = c.data.datasets[0].data[i];
        const p = el.getCenterPoint();
        ctx.fillStyle = "#111";
        ctx.fillText(`${v.v.toFixed(0)} %`, p.x, p.y);
      });
      ctx.restore();
    },
  };
  chart("chart-crosstable", {
    type: "matrix",
    data: {
      datasets: [{
        label: "score %",
        data: figures.crosstable.map((c) => ({ x: c.col, y: c.row, v: c.score, w: c.wins, l: c.losses })),
        backgroundColor: (ctx) => heat(ctx.raw ? ctx.raw.v : 50),
        borderColor: "#fff",
        borderWidth: 1,
        width: ({ chart: c }) => (c.chartArea || {}).width / names.length - 2,
        height: ({ chart: c }) => (c.chartArea || {}).height / names.length - 2,
      }],
    },
    options: {
      plugins: {
        legend: { display: false },
        tooltip: { callbacks: {
          title: (items) => `${items[0].raw.y} vs ${items[0].raw.x}`,
          label: (item) => `${item.raw.v} % (${item.raw.w}–${item.raw.l})`,
        } },
      },
      scales: {
        x: { type: "category", labels: names, offset: true, grid: { display: false }, position: "top" },
        // The matrix plugin reverses its y axis by default, which put the first row at
        // the bottom: unreversed, rows read top to bottom as in the terminal.
        y: { type: "category", labels: names, offset: true, reverse: false, grid: { display: false } },
      },
    },
    plugins: [cellLabels],
  });

  // ---- duplicate pairs won / split / lost per pairing
  const pairLabels = figures.pairings.map((p) => `${p.a} vs ${p.b}`);
  chart("chart-pairs", {
    type: "bar",
    data: {
      labels: pairLabels,
      datasets: [
        { label: "won", data: figures.pairings.map((p) => p.won), backgroundColor: "#3c9d5d" },
        { label: "split", data: figures.pairings.map((p) => p.split), backgroundColor: "#b9c0cc" },
        { label: "lost", data: figures.pairings.map((p) => p.lost), backgroundColor: "#c0262d" },
      ],
    },
    options: { indexAxis: "y", scales: { x: { stacked: true, ticks: { precision: 0 },
                                              title: { display: true, text: "pairs" } },
                                         y: { stacked: true } } },
  });

  // ---- ratings as games accumulate
  chart("chart-history", {
    type: "line",
    data: {
      datasets: figures.history.engines.map((e, i) => ({
        label: e,
        data: figures.history.series[e].map(([k, elo]) => ({ x: k, y: elo })),
        borderColor: colourOf(figures.engines.indexOf(e)),
        backgroundColor: colourOf(figures.engines.indexOf(e)),
        pointRadius: 2,
        tension: 0.2,
      })),
    },
    options: { scales: { x: { type: "linear", title: { display: true, text: "games" } },
                         y: { title: { display: true, text: "Elo" } } } },
  });

  // ---- points-per-deal margins with their intervals
  const withMargin = figures.pairings.filter((p) => p.margin !== null);
  chart("chart-margins", {
    type: "barWithErrorBars",
    data: {
      labels: withMargin.map((p) => `${p.a} vs ${p.b}`),
      datasets: [{
        label: "points per deal",
        data: withMargin.map((p) => ({ x: p.margin.mean, xMin: p.margin.lower, xMax: p.margin.upper })),
        backgroundColor: withMargin.map((p) => (p.margin.mean >= 0 ? "#3c9d5d99" : "#c0262d99")),
      }],
    },
    options: { indexAxis: "y", plugins: { legend: { display: false } },
               scales: { x: { title: { display: true, text: "points per deal (first engine − second)" } } } },
  });

  // ---- the games list
  // A game: [id, engine0, engine1, winner, score0, score1, deals, end, offender, pair, corrupted]
  const tbody = document.querySelector("#games-table tbody");
  const fEngine = document.getElementById("filter-engine");
  const fResult = document.getElementById("filter-result");
  const fFault = document.getElementById("filter-fault");
  for (const e of names) fEngine.add(new Option(e, e));
  for (const r of [...new Set(games.map((g) => g[7]).filter((r) => r !== "normal"))].sort()) {
    fFault.add(new Option(r, r));
  }
  const rows = games.map((g) => {
    const tr = document.createElement("tr");
    tr.dataset.game = g[0];
    const cells = [
      [g[0], "num"], [g[1]], [g[2]], [`${g[4]}–${g[5]}`, "num"], [g[3 + 0] === 0 ? g[1] : g[2]],
      [g[6], "num"], [g[7] === "normal" ? "normal" : `${g[7]} (${g[8] >= 0 ? g[1 + g[8]] : "?"})`, g[7] === "normal" ? "" : "fault"],
      [g[9]],
    ];
    for (const [text, cls] of cells) {
      const td = document.createElement("td");
      td.textContent = text;
      if (cls) td.className = cls;
      tr.appendChild(td);
    }
    tr.addEventListener("click", () => openGame(g));
    tbody.appendChild(tr);
    return [g, tr];
  });
  function applyFilters() {
    const engine = fEngine.value, result = fResult.value, fault = fFault.value;
    let shown = 0;
    for (const [g, tr] of rows) {
      let ok = !engine || g[1] === engine || g[2] === engine;
      const winnerName = g[1 + g[3]];
      if (result === "won") ok = ok && (!engine || winnerName === engine);
      if (result === "lost") ok = ok && (!engine || winnerName !== engine);
      if (result === "seat0") ok = ok && g[3] === 0;
      if (result === "seat1") ok = ok && g[3] === 1;
      if (fault === "none") ok = ok && g[7] === "normal";
      else if (fault === "any") ok = ok && g[7] !== "normal";
      else if (fault) ok = ok && g[7] === fault;
      tr.hidden = !ok;
      if (ok) shown += 1;
    }
    document.getElementById("games-count").textContent = `${shown} of ${games.length} games`;
  }
  for (const el of [fEngine, fResult, fFault]) el.addEventListener("change", applyFilters);
  applyFilters();

  // ---- the replay
  // A step: [who, full text, public text (1: same), hand0, hand1, discards0, discards1,
  //          trick, tricks0, tricks1, score0, score1, stock, vulnerable bits, marked]
  let replays = null;
  async function loadReplays() {
    if (replays) return replays;
    const b64 = document.getElementById("report-replays").textContent.trim();
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    replays = JSON.parse(await new Response(stream).text());
    return replays;
  }
  const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  const withSuits = (text) => text.replace(/\b([789TAJQK])([SHDC])\b/g,
    (m, r, su) => (r === "T" ? "10" : r) + SUITS[su]);
  const split = (s) => (s.match(/../g) || []);
  function cardEl(card, small) {
    const span = document.createElement("span");
    span.className = "card" + (small ? " small" : "");
    if (card === null) {
      span.classList.add("back");
      span.title = "hidden";
    } else {
      const rank = card[0] === "T" ? "10" : card[0];
      span.textContent = rank + SUITS[card[1]];
      span.dataset.card = card;
      if (card[1] === "H" || card[1] === "D") span.classList.add("red");
    }
    return span;
  }
  function cardsEl(cards, small) {
    const box = document.createElement("span");
    box.className = "cards";
    for (const c of cards) box.appendChild(cardEl(c, small));
    return box;
  }
  const state = { game: null, data: null, deal: 0, step: 0, view: "all" };
  const sees = (who) => state.view === "all" || who < 0 || String(who) === state.view;
  // Steps a seat's view shows: its own, the deal's, and the other seat's public ones
  // (a declined king is a decision the other seat never learns of).
  function visibleSteps(deal) {
    return deal.steps.map((s, i) => i).filter((i) => {
      const s = deal.steps[i];
      return sees(s[0]) || s[2] !== "";
    });
  }
  function textOf(s) {
    return sees(s[0]) || s[2] === 1 ? s[1] : s[2];
  }
  async function openGame(g) {
    const section = document.getElementById("replay");
    const data = (await loadReplays())[String(g[0])];
    for (const [, tr] of rows) tr.classList.toggle("open", tr.dataset.game === String(g[0]));
    Object.assign(state, { game: g, data, deal: 0, step: 0 });
    section.hidden = false;
    document.getElementById("replay-title").textContent =
      `Game ${g[0]}: ${g[1]} (seat 0) vs ${g[2]} (seat 1) — ${g[1 + g[3]]} wins ${g[4]}–${g[5]}` +
      (g[7] === "normal" ? "" : `, ${g[7]}`);
    const deals = document.getElementById("replay-deals");
    deals.replaceChildren();
    const lbl = document.createElement("span");
    lbl.textContent = "deal:";
    deals.appendChild(lbl);
    data.deals.forEach((d, i) => {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = String(d.n);
      b.dataset.deal = String(i);
      b.addEventListener("click", () => { state.deal = i; state.step = 0; draw(); });
      deals.appendChild(b);
    });
    if (!data.deals.length) {
      const p = document.createElement("span");
      p.textContent = `no deal was played (${g[7]})`;
      deals.appendChild(p);
    }
    draw();
    section.scrollIntoView({ block: "start" });
  }
  function seatRow(el, seat, s) {
    const g = state.game;
    el.replaceChildren();
    const who = document.createElement("span");
    who.className = "who";
    const deal = state.data.deals[state.deal];
    const vul = (s[13] >> seat) & 1;
    who.textContent = `${g[1 + seat]} · seat ${seat}` + (deal.dealer === seat ? " · dealer" : "") +
      (vul ? " · vulnerable" : "");
    el.appendChild(who);
    const hand = split(s[3 + seat]);
    const mine = state.view === "all" || state.view === String(seat);
    el.appendChild(cardsEl(mine ? hand : hand.map(() => null)));
    const disc = split(s[5 + seat]);
    if (disc.length) {
      const l = document.createElement("span");
      l.className = "label";
      l.textContent = "discards";
      el.appendChild(l);
      el.appendChild(cardsEl(mine ? disc : disc.map(() => null), true));
    }
    el.dataset.seat = String(seat);
  }
  function draw() {
    const deal = state.data.deals[state.deal];
    document.querySelectorAll("#replay-deals button").forEach((b) =>
      b.classList.toggle("on", b.dataset.deal === String(state.deal)));
    if (!deal) return;
    const visible = visibleSteps(deal);
    state.step = Math.max(0, Math.min(state.step, visible.length - 1));
    const s = deal.steps[visible[state.step]];
    seatRow(document.getElementById("seat-1"), 1, s);
    seatRow(document.getElementById("seat-0"), 0, s);
    const middle = document.getElementById("middle");
    middle.replaceChildren();
    const part = (label, node) => {
      const box = document.createElement("span");
      const l = document.createElement("span");
      l.className = "label";
      l.textContent = label + " ";
      box.append(l, node);
      middle.appendChild(box);
    };
    part("turn-up", cardsEl([deal.turnup]));
    part("trick", cardsEl(split(s[7])));
    const stock = split(s[12]);
    part(`stock ${stock.length}`, cardsEl(state.view === "all" ? stock : [], true));
    const side = document.getElementById("side");
    const g = state.game;
    side.innerHTML = "";
    const lines = [
      `score ${g[1]} ${s[10]} – ${s[11]} ${g[2]}`,
      `tricks ${s[8]} – ${s[9]}`,
      s[14] >= 0 ? `king marked by ${g[1 + s[14]]}` : "",
    ];
    for (const t of lines.filter(Boolean)) {
      const d = document.createElement("div");
      d.textContent = t;
      side.appendChild(d);
    }
    const log = document.getElementById("replay-log");
    log.replaceChildren();
    // Only what has happened so far: a seat does not know the plays still to come.
    visible.slice(0, state.step + 1).forEach((i, n) => {
      const li = document.createElement("li");
      li.textContent = withSuits(textOf(deal.steps[i]));
      if (n === state.step) li.className = "current";
      log.appendChild(li);
    });
    const cur = log.querySelector(".current");
    if (cur) cur.scrollIntoView({ block: "nearest" });
    document.getElementById("step-where").textContent =
      `deal ${deal.n} of ${state.data.deals.length}, step ${state.step + 1} of ${visible.length}`;
  }
  function step(delta) {
    if (!state.data || !state.data.deals.length) return;
    const deal = state.data.deals[state.deal];
    const n = visibleSteps(deal).length;
    const next = state.step + delta;
    if (next >= n && state.deal + 1 < state.data.deals.length) {
      state.deal += 1;
      state.step = 0;
    } else if (next < 0 && state.deal > 0) {
      state.deal -= 1;
      state.step = visibleSteps(state.data.deals[state.deal]).length - 1;
    } else {
      state.step = Math.max(0, Math.min(next, n - 1));
    }
    draw();
  }
  document.getElementById("step-prev").addEventListener("click", () => step(-1));
  document.getElementById("step-next").addEventListener("click", () => step(1));
  document.getElementById("step-first").addEventListener("click", () => { state.step = 0; draw(); });
  document.getElementById("step-last").addEventListener("click", () => { state.step = 1e9; draw(); });
  document.querySelectorAll("[data-view]").forEach((b) => b.addEventListener("click", () => {
    state.view = b.dataset.view;
    document.querySelectorAll("[data-view]").forEach((o) =>
      o.setAttribute("aria-pressed", String(o === b)));
    state.step = 0;
    if (state.data) draw();
  }));
  document.addEventListener("keydown", (ev) => {
    if (!state.data || ev.target instanceof HTMLSelectElement) return;
    const keys = { ArrowRight: 1, ArrowLeft: -1 };
    if (ev.key in keys) { step(keys[ev.key]); ev.preventDefault(); }
    else if (ev.key === "Home") { state.step = 0; draw(); ev.preventDefault(); }
    else if (ev.key === "End") { state.step = 1e9; draw(); ev.preventDefault(); }
  });
  window.reportReadyMs = performance.now(); // read by bench/bench_report.py
  document.body.dataset.ready = "1";
})();
