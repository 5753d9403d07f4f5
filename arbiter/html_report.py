"""``OUT/report.html``: the statistics and every game of a run in one offline page.

The page is one self-contained HTML file: the template (Jinja2), the chart library
(Chart.js and two of its plugins, vendored in ``arbiter/static/`` by
``tools/vendor-js/update.sh``), the page's own script and all the data are inlined,
so it opens with no network.  The figures are those of :mod:`arbiter.report` and
:mod:`arbiter.stats`; nothing is computed twice in JavaScript.

Replays are computed here, not in the page: each record is played again through the
rules, and after every action each seat's hand and discards are read as
:func:`arbiter.view.observe` shows them to that seat, and the texts of the step are
made from the public events, so a seat's view in the page holds what that seat was
shown and nothing else.  A step carries both hands, both discards, the trick, the
scores and two texts: the whole action (``discards 7S 8H``) and what the other seat
saw of it (``discards and draws 2``, or nothing for a declined king).  The page
picks per view.  The replays are gzip-compressed and
base64-encoded in the page (they repeat a lot: about a tenth of their JSON size) and
unpacked by the browser's own ``DecompressionStream`` when a game is first opened.
"""

from __future__ import annotations

import base64
import gzip
import json
import math
from collections.abc import Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, Final

import jinja2

from arbiter.cards import CARD_NUMBER, CARD_TEXT, cards_text
from arbiter.journal import write_private
from arbiter.record import GameRecord
from arbiter.report import Report, build_report, result_of
from arbiter.rules import Event, State, new_game
from arbiter.show import SCORE_WORDS
from arbiter.stats import GameOutcome, crosstable, fit_ratings
from arbiter.view import event_to_struct
from protocol.view import (
    Accepted,
    CardPlayed,
    Exchanged,
    GameEvent,
    Marked,
    Proposed,
    Refused,
    Scored,
    Stood,
    TrickWon,
)

__all__ = ["HISTORY_POINTS", "render_report", "replay_of", "write_report"]

HISTORY_POINTS: Final = 24
"""How many points of the "rating as games accumulate" curves are fitted."""

_SCRIPTS: Final = (
    "chart.umd.min.js",
    "chartjs-chart-error-bars.min.js",
    "chartjs-chart-matrix.min.js",
)


def _static(name: str) -> str:
    text = resources.files("arbiter").joinpath("static", name).read_text(encoding="utf-8")
    if "</script" in text.lower():  # would end the inline <script> element early
        raise ValueError(f"arbiter/static/{name} cannot be inlined: it contains '</script'")
    return text


def _inline_json(data: Any) -> str:
    """JSON that is safe inside a ``<script>`` element (no ``</script>`` can close it)."""
    text = json.dumps(data, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# ----------------------------------------------------------------------------- replays


def _event_text(ev: GameEvent, names: Sequence[str]) -> str:
    match ev:
        case Stood(seat=s):
            return f"{names[s]} stands"
        case Proposed(seat=s):
            return f"{names[s]} proposes"
        case Accepted(seat=s):
            return f"{names[s]} accepts"
        case Refused(seat=s):
            return f"{names[s]} refuses"
        case Exchanged(seat=s, count=n):
            return f"{names[s]} discards and draws {n}"
        case Marked(seat=s, card=c):
            return f"{names[s]} marks the king {c}"
        case CardPlayed(seat=s, card=c):
            return f"{names[s]} plays {c}"
        case TrickWon(seat=s, trick=t):
            return f"{names[s]} wins trick {t}"
        case Scored(seat=s, points=p, reason=r):
            return f"{names[s]} scores {p} ({SCORE_WORDS.get(r, r)})"
    return ""


def _snapshot(st: State, who: int, full: str, public: str, trick: list[str]) -> list[Any]:
    """One replay step: ``[who, full, public, hand0, hand1, disc0, disc1, trick, tricks0,
    tricks1, score0, score1, stock, vulnerable bits, marked]`` (cards as concatenated
    text, the stock in deck order).

    Each seat's hand and discards are what :func:`arbiter.view.observe` shows that seat
    (its ``hand`` and ``discards``; the tests compare them step by step), read straight
    from the state: a whole view per seat and step would rebuild every event each time.
    """
    return [
        who,
        full,
        public if public != full else 1,  # 1: the same as the whole text
        cards_text(st.hands[0]),
        cards_text(st.hands[1]),
        "".join(cards_text(m) for m in st.discards[0]),
        "".join(cards_text(m) for m in st.discards[1]),
        "".join(trick),
        st.tricks[0],
        st.tricks[1],
        st.scores[0],
        st.scores[1],
        "".join(CARD_TEXT[c] for c in st.deck[st.stock_pos :]),
        int(st.vulnerable[0]) | int(st.vulnerable[1]) << 1,
        st.marked,
    ]


def replay_of(record: GameRecord) -> dict[str, Any]:
    """A game's replay data: per deal its dealer, turn-up and steps (see :func:`_snapshot`)."""
    names = record.engines
    st = new_game(record.rules, record.first_dealer)
    deals: list[dict[str, Any]] = []
    for deal in record.deals:
        st.deal([CARD_NUMBER[c] for c in deal.deck])
        turnup = CARD_TEXT[st.turnup]
        opening = f"deal {deal.number}: {names[deal.dealer]} deals, turns up {turnup}"
        opening = "; ".join(
            [opening, *(_event_text(event_to_struct(e), names) for e in st.events[1:])]
        )
        steps = [_snapshot(st, -1, opening, opening, [])]
        for a in deal.actions:
            seen = len(st.events)
            st.apply_text(a.seat, a.action)
            new = [event_to_struct(e) for e in st.events[seen:]]
            public = "; ".join(_event_text(e, names) for e in new)
            full = public
            if a.action.startswith("discard"):
                # The cards are the discarding seat's secret: only the count is public.
                cards = a.action.split()[1:]
                own = " ".join([names[a.seat], "discards", *cards, f"and draws {len(cards)}"])
                full = "; ".join([own, *(_event_text(e, names) for e in new[1:])])
            elif a.action == "no-mark":
                full = f"{names[a.seat]} does not mark the king"
            if a.substituted:
                full += " (played by the arbiter)"
                public = public and public + " (played by the arbiter)"
            # A finished trick stays on the table for the step that finished it.
            if any(isinstance(e, TrickWon) for e in new):
                trick = [CARD_TEXT[v] for k, _s, v in st.events if k == Event.CARD][-2:]
            else:
                trick = [CARD_TEXT[c] for c in st.trick_cards]
            steps.append(_snapshot(st, a.seat, full, public, trick))
        deals.append({"n": deal.number, "dealer": deal.dealer, "turnup": turnup, "steps": steps})
    end = record.termination
    if end.reason != "normal" and deals:
        who = end.offender if end.offender is not None else -1
        public = f"{end.reason}" + (f" by {names[who]}" if who >= 0 else "")
        text = public
        if end.detail:
            text += f": {end.detail}"
        if end.line:
            text += f" — line: {end.line}"
        last = list(deals[-1]["steps"][-1])
        # The detail and the line are the offender's own (an illegal action's detail lists
        # its legal cards, i.e. its hand): the other seat's view shows only the reason.
        last[0:3] = [who, text, public if who >= 0 else 1]
        deals[-1]["steps"].append(last)
    return {"deals": deals}


# ----------------------------------------------------------------------------- figures


def _elo_text(x: float) -> str:
    if math.isinf(x):
        return "+∞" if x > 0 else "−∞"
    return f"{x:+.0f}"


def _history(outcomes: Sequence[GameOutcome]) -> dict[str, Any]:
    """Each engine's rating fitted on the first k games, for HISTORY_POINTS values of k."""
    n = len(outcomes)
    engines = sorted({e for o in outcomes for e in o.engines})
    points: list[int] = sorted(
        {math.ceil(n * i / HISTORY_POINTS) for i in range(1, HISTORY_POINTS + 1)}
    )
    series: dict[str, list[list[float]]] = {e: [] for e in engines}
    for k in points:
        try:
            table = fit_ratings(outcomes[:k])
        except ValueError:  # some engines not yet connected by games
            continue
        for row in table.rows:
            if math.isfinite(row.rating):
                series[row.engine].append([k, round(row.rating, 1)])
    return {"engines": engines, "series": series}


def _figures(report: Report, records_outcomes: Sequence[GameOutcome]) -> dict[str, Any]:
    data: dict[str, Any] = {"engines": report.engines, "games": len(report.results)}
    if report.ratings is not None:
        # standings.json's rows, the score in per cent for the page.
        data["standings"] = [
            {**row, "score": round(100 * row["score"], 1)} for row in report.rating_rows()
        ]
    table = crosstable(report.outcomes)
    # The terminal's order (best first): rows top to bottom, columns left to right.
    data["crosstable_order"] = list(table.engines)
    data["crosstable"] = [
        {
            "row": row,
            "col": col,
            "wins": c.wins,
            "losses": c.losses,
            "score": round(100 * c.score, 1),
        }
        for i, row in enumerate(table.engines)
        for j, col in enumerate(table.engines)
        if (c := table.cells[i][j]) is not None
    ]
    data["pairings"] = []
    for h, ppd in report.h2h:
        margin = ppd.pair_estimate or ppd.game_estimate
        data["pairings"].append(
            {
                "a": h.engine_a,
                "b": h.engine_b,
                "games": h.games,
                "wins": h.wins,
                "losses": h.losses,
                "won": h.pairs_won,
                "split": h.pairs_split,
                "lost": h.pairs_lost,
                "margin": None
                if margin is None or not math.isfinite(margin.error)
                else {
                    "mean": round(margin.mean, 3),
                    "lower": round(margin.lower, 3),
                    "upper": round(margin.upper, 3),
                    "unit": margin.unit.name.lower(),
                    "deals": ppd.deals,
                },
            }
        )
    data["history"] = _history(records_outcomes)
    return data


# ----------------------------------------------------------------------------- the page


def render_report(
    records: Iterable[GameRecord], *, title: str = "tournament", seed: int = 0
) -> str:
    """The whole page for these records (any order; shown in game-id order).

    ``seed`` seeds the bootstrap of the rating intervals, as for ``standings.json``.
    """
    ordered = sorted(records, key=lambda r: r.game_id)
    results = [result_of(r) for r in ordered]
    report = build_report(results, seed=seed)
    figures = _figures(report, [r.outcome for r in results])
    games = [
        [
            r.game_id,
            r.engines[0],
            r.engines[1],
            r.winner,
            r.scores[0],
            r.scores[1],
            len(r.deals),
            r.termination.reason,
            -1 if r.termination.offender is None else r.termination.offender,
            r.pair_id or "",
            int(r.corrupted),
        ]
        for r in ordered
    ]
    replays = {str(r.game_id): replay_of(r) for r in ordered}
    packed = gzip.compress(json.dumps(replays, separators=(",", ":")).encode(), mtime=0)
    reasons = sorted({reason for row in report.faults.values() for reason in row})
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("arbiter", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    env.filters["elo"] = _elo_text
    return env.get_template("report.html.j2").render(
        title=title,
        report=report,
        faults=report.faults,
        fault_reasons=reasons,
        figures_json=_inline_json(figures),
        games_json=_inline_json(games),
        replays_b64=base64.b64encode(packed).decode("ascii"),
        scripts=[_static(name) for name in _SCRIPTS],
        page_script=_static("report.js"),
    )


def write_report(out: Path, records: Iterable[GameRecord], *, title: str, seed: int = 0) -> Path:
    """Write ``out/report.html`` (owner-only, like every file under ``OUT/``); its path."""
    path = out / "report.html"
    write_private(path, render_report(records, title=title, seed=seed).encode("utf-8"))
    return path
