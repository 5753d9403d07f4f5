"""``OUT/report.html``: its content, and the page as a person meets it in a browser."""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import shutil
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from arbiter.cards import Card
from arbiter.cli import main as cli_main
from arbiter.html_report import replay_of
from arbiter.journal import read_journal
from arbiter.record import GameRecord
from arbiter.rules import new_game
from arbiter.view import observe

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
# Chromium as the brief for these machines says: no network of its own, no first-run work.
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

CONFIG = f"""
name: report-test
engines:
  - name: r1
    builtin: random
    options: {{seed: 1}}
  - name: greedy
  - name: cheat
    command: [{sys.executable}, {ROOT / "tests" / "bots" / "proto_illegal_card.py"}]
games_per_pairing: 2
seed: 77
time_control:
  per_move_ms: 2000
faults:
  withdraw_after: 2
concurrency: 2
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 6-game run through the CLI: one engine breaks the rules every game."""
    base = tmp_path_factory.mktemp("report")
    cfg = base / "t.yaml"
    cfg.write_text(CONFIG)
    # Exit status 3: the run finished, with faults.
    assert cli_main(["tournament", str(cfg), "--out", str(base / "out"), "--quiet"]) == 3
    return base / "out"


def _records(out: Path) -> list[GameRecord]:
    return sorted(read_journal(out / "games.jsonl").records, key=lambda r: r.game_id)


class _Page(HTMLParser):
    """The parts of the page the tests look at: elements by id, resources, inline data."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: dict[str, str] = {}
        self.external: list[str] = []
        self.scripts: dict[str, str] = {}
        self._script: str | None = None
        self.tables: dict[str, list[list[str]]] = {}
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids[a["id"] or ""] = tag
        for key in ("src", "href", "data", "poster"):
            if a.get(key):
                self.external.append(f"<{tag} {key}={a[key]}>")
        if tag == "link":
            self.external.append("<link>")
        if tag == "script":
            self._script = a.get("id") or f"#{len(self.scripts)}"
            self.scripts[self._script] = ""
        if tag == "table":
            self._table = a.get("id") or ""
            self.tables[self._table] = []
        if tag == "tr" and self._table is not None:
            self._row = []
        if tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "script":
            self._script = None
        if tag in ("td", "th") and self._row is not None and self._cell is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        if tag == "tr" and self._table is not None and self._row is not None:
            self.tables[self._table].append(self._row)
            self._row = None
        if tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._script is not None:
            self.scripts[self._script] += data
        if self._cell is not None:
            self._cell.append(data)


def _parse(out: Path) -> _Page:
    page = _Page()
    page.feed((out / "report.html").read_text(encoding="utf-8"))
    return page


def test_report_of_a_small_run_holds_every_section(run: Path) -> None:
    records = _records(run)
    assert len(records) == 6
    assert (run / "report.html").stat().st_mode & 0o777 == 0o600
    page = _parse(run)
    # Self-contained: no resource is fetched from anywhere.
    assert page.external == []
    assert all(
        i in page.ids
        for i in (
            "chart-standings",
            "chart-crosstable",
            "chart-pairs",
            "chart-history",
            "chart-margins",
            "faults-table",
            "games-table",
            "replay",
        )
    )
    # Standings: the ranks and Elo of standings.json, each with its interval.
    standings = json.loads((run / "standings.json").read_text())
    rows = page.tables["standings-table"][1:]
    assert [r[1] for r in rows] == [s["engine"] for s in standings["ratings"]]
    for row, s in zip(rows, standings["ratings"], strict=True):
        assert row[2] == f"{s['elo']:+.0f}"
        assert re.fullmatch(r"[+-]\d+ … [+-]\d+", row[3])
    # The faults: every forfeit of the cheat, by reason.
    faults = page.tables["faults-table"]
    by_engine = {r[0]: r[1:] for r in faults[1:]}
    cheat_games = [r for r in records if "cheat" in r.engines]
    assert {r.termination.reason for r in cheat_games} <= {"illegal_action", "withdrawn"}
    header = faults[0][1:-1]
    for reason in header:
        n = sum(1 for r in cheat_games if r.termination.reason == reason)
        assert by_engine["cheat"][header.index(reason)] == str(n)
    assert by_engine["r1"][-1] == by_engine["greedy"][-1] == "0"
    # Every game, and its replay: as many deals, each from its deal to its last action.
    games = json.loads(page.scripts["report-games"])
    assert [g[0] for g in games] == [r.game_id for r in records]
    assert [g[7] for g in games] == [r.termination.reason for r in records]
    replays: dict[str, Any] = json.loads(
        gzip.decompress(base64.b64decode(page.scripts["report-replays"]))
    )
    figures = json.loads(page.scripts["report-figures"])
    assert {p["a"] + "/" + p["b"] for p in figures["pairings"]} == {
        "cheat/greedy",
        "cheat/r1",
        "greedy/r1",
    }
    assert figures["history"]["series"]["greedy"]
    for rec in records:
        deals = replays[str(rec.game_id)]["deals"]
        assert len(deals) == len(rec.deals)
        for deal, rd in zip(deals, rec.deals, strict=True):
            first, last = deal["steps"][0], deal["steps"][-1]
            nd, dealer = 1 - rd.dealer, rd.dealer
            # 3-2 packets: positions 1-3 and 7-8 to the non-dealer, 4-6 and 9-10 to the dealer.
            assert sorted([first[3 + nd][i : i + 2] for i in range(0, 10, 2)]) == sorted(
                rd.deck[0:3] + rd.deck[6:8]
            )
            assert sorted([first[3 + dealer][i : i + 2] for i in range(0, 10, 2)]) == sorted(
                rd.deck[3:6] + rd.deck[8:10]
            )
            assert deal["turnup"] == rd.deck[10]
            assert [last[8], last[9]] == rd.tricks or rec.termination.reason != "normal"
        # What the other seat is told of a discard or a declined king holds no card.
        for deal, rd in zip(deals, rec.deals, strict=True):
            for step, action in zip(deal["steps"][1:], rd.actions, strict=False):
                if action.action.startswith("discard "):
                    assert not any(c in step[2] for c in action.action.split()[1:])
                    assert step[2].endswith(f"draws {len(action.action.split()) - 1}")
                if action.action == "no-mark":
                    assert step[2] == ""
    withdrawn = [r for r in records if r.termination.reason == "withdrawn"]
    assert all(replays[str(r.game_id)]["deals"] == [] for r in withdrawn)


def test_each_seat_in_a_replay_holds_what_it_was_shown(run: Path) -> None:
    for rec in _records(run):
        st = new_game(rec.rules, rec.first_dealer)
        for deal, rd in zip(replay_of(rec)["deals"], rec.deals, strict=True):
            st.deal([Card.parse(c) for c in rd.deck])
            states = [st.clone()]
            for a in rd.actions:
                st.apply_text(a.seat, a.action)
                states.append(st.clone())
            for step, state in zip(deal["steps"], states, strict=False):
                for seat in (0, 1):
                    view = observe(state, seat)
                    assert step[3 + seat] == "".join(view.hand)
                    assert step[5 + seat] == "".join(c for d in view.discards for c in d)


def test_the_other_seat_sees_a_fault_without_its_detail(run: Path) -> None:
    """An illegal card's detail lists the offender's legal cards: the fault's last step
    shows it only to the offender's seat (and to all cards), the reason to the other."""
    faulted = [r for r in _records(run) if r.termination.reason == "illegal_action" and r.deals]
    assert faulted
    for rec in faulted:
        end = rec.termination
        assert end.offender is not None and "legal: " in (end.detail or "")
        who, full, public = replay_of(rec)["deals"][-1]["steps"][-1][:3]
        assert who == end.offender
        assert "legal: " in full and end.detail in full
        assert public == f"illegal_action by {rec.engines[end.offender]}"


def test_report_command_rewrites_the_same_page(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = (run / "report.html").read_bytes()
    (run / "report.html").unlink()
    assert cli_main(["report", str(run)]) == 0
    assert capsys.readouterr().out.strip() == f"report: {run / 'report.html'}"
    assert (run / "report.html").read_bytes() == before


def test_report_of_a_merged_run_is_the_report_of_the_run(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    merged = tmp_path / "merged"
    assert cli_main(["merge", str(run), "--out", str(merged)]) == 0
    assert cli_main(["report", str(merged)]) == 0
    capsys.readouterr()
    assert (merged / "report.html").read_bytes() == (run / "report.html").read_bytes()


def test_report_of_a_missing_journal_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli_main(["report", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err
    assert err == f"ecarte report: error: no journal at {tmp_path / 'nothing'}\n"


# ----------------------------------------------------------------------------- in a browser


def _shown(card: str) -> str:
    """A card as the page writes it: ``T`` as 10, the suit as its symbol."""
    return card[0].replace("T", "10") + {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}[card[1]]


def _need_browser() -> str:
    if CHROMIUM is None:
        if os.environ.get("ECARTE_REQUIRE_BROWSER"):
            pytest.fail("ECARTE_REQUIRE_BROWSER is set but no chromium is installed")
        pytest.skip("no chromium installed (apt install chromium)")
    return CHROMIUM


def _terminal_crosstable_rows(run: Path, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The engines of ``ecarte stats``'s crosstable, top to bottom, as printed."""
    capsys.readouterr()
    assert cli_main(["stats", str(run)]) == 0
    text = capsys.readouterr().out
    block = text[text.index("== crosstable") :].split("\n\n")[0].splitlines()
    return [line.split()[0] for line in block[2:]]


@pytest.mark.slow
def test_replay_steps_through_a_deal_in_a_headless_browser(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from playwright.sync_api import sync_playwright

    chromium = _need_browser()
    records = _records(run)
    ranked = _terminal_crosstable_rows(run, capsys)
    assert sorted(ranked) == ["cheat", "greedy", "r1"] and ranked != sorted(ranked)
    # A deal in which a seat discarded: its cards must show in that seat's view only.
    game, deal_index, me, discard = next(
        (rec, i, a.seat, a.action.split()[1:])
        for rec in records
        for i, d in enumerate(rec.deals)
        for a in d.actions
        if a.action.startswith("discard ")
    )
    deal = game.deals[deal_index]
    # The deal, every action, and the fault that ended the game (after its last deal).
    steps = len(deal.actions) + 1
    if game.termination.reason != "normal" and deal_index == len(game.deals) - 1:
        steps += 1
    errors: list[str] = []
    requests: list[str] = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            str(tmp_path / "profile"),
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_FLAGS,
            viewport={"width": 1200, "height": 900},
        )
        try:
            page = browser.new_page()
            page.on("pageerror", lambda exc: errors.append(f"page error: {exc}"))
            page.on(
                "console",
                lambda msg: (
                    errors.append(f"console {msg.type}: {msg.text}")
                    if msg.type in ("error", "warning")
                    else None
                ),
            )
            page.on("request", lambda req: requests.append(req.url))
            page.goto((run / "report.html").as_uri())
            page.wait_for_selector("body[data-ready='1']")
            # Every chart was drawn by the library.
            drawn = page.evaluate(
                "[...document.querySelectorAll('canvas')].map(c => !!Chart.getChart(c))"
            )
            assert drawn == [True] * 5
            # The crosstable's rows (top to bottom) and columns (left to right) are in
            # the order of the terminal's, where they are read.
            rows, columns = page.evaluate(
                """() => {
                  const c = Chart.getChart(document.getElementById("chart-crosstable"));
                  const seen = (s) => s.getLabels()
                    .map((label, i) => [s.getPixelForValue(i), label])
                    .sort((a, b) => a[0] - b[0]).map((p) => p[1]);
                  return [seen(c.scales.y), seen(c.scales.x)];
                }"""
            )
            assert rows == ranked and columns == ranked
            # The games list filters by engine, result and fault.
            page.select_option("#filter-engine", "cheat")
            page.select_option("#filter-fault", "illegal_action")
            shown = page.locator("#games-table tbody tr:visible").count()
            assert shown == sum(r.termination.reason == "illegal_action" for r in records)
            page.select_option("#filter-result", "won")
            assert page.locator("#games-table tbody tr:visible").count() == 0
            for sel in ("#filter-engine", "#filter-fault", "#filter-result"):
                page.select_option(sel, "")
            # Open the game and its deal; step through it with the keys and the buttons.
            page.click(f"#games-table tbody tr[data-game='{game.game_id}']")
            page.wait_for_selector("#replay:not([hidden])")
            page.click(f"#replay-deals button[data-deal='{deal_index}']")
            where = page.locator("#step-where")
            assert where.text_content() == (
                f"deal {deal.number} of {len(game.deals)}, step 1 of {steps}"
            )

            def cards(seat: int) -> list[str | None]:
                shown: list[str | None] = page.eval_on_selector_all(
                    f"#seat-{seat} .card:not(.small)", "els => els.map(e => e.dataset.card ?? null)"
                )
                return shown

            dealer = deal.dealer
            assert sorted(c or "" for c in cards(dealer)) == sorted(
                deal.deck[3:6] + deal.deck[8:10]
            )
            for n in range(2, steps + 1):
                page.keyboard.press("ArrowRight")
                assert where.text_content() == (
                    f"deal {deal.number} of {len(game.deals)}, step {n} of {steps}"
                )
                assert page.locator("#replay-log li").count() == n
            page.click("#step-prev")
            page.click("#step-next")
            assert page.locator("#replay-log li").count() == steps
            all_log = page.locator("#replay-log").inner_text()
            assert all(_shown(c) in all_log for c in discard)
            # As the other seat: this seat's cards are face down, the stock hidden, the
            # discard a count; in this seat's own view its discarded cards are shown.
            other = 1 - me
            page.click(f"[data-view='{other}']")
            page.click("#step-last")
            assert set(cards(me)) == {None}
            assert all(c is not None for c in cards(other))
            assert page.locator("#middle .card.small").count() == 0
            log_other = page.locator("#replay-log").inner_text()
            shown = page.eval_on_selector_all(
                f"#seat-{me} .card", "els => els.map(e => e.dataset.card ?? null)"
            )
            assert not any(c in shown for c in discard)
            page.click(f"[data-view='{me}']")
            page.click("#step-last")
            shown = page.eval_on_selector_all(
                f"#seat-{me} .card.small", "els => els.map(e => e.dataset.card ?? null)"
            )
            assert set(discard) <= set(shown)
            assert set(cards(other)) == {None}
            log_mine = page.locator("#replay-log").inner_text()
            assert "discards and draws" in log_other
            assert not any(_shown(c) in log_other for c in discard)
            assert all(_shown(c) in log_mine for c in discard)
        finally:
            browser.close()
    assert errors == []
    assert [u for u in requests if not u.startswith("file:")] == []
