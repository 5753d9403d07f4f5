"""Tests of arbiter/check.py: what ``ecarte check`` reports, and that nothing a bot
sends reaches the terminal raw."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import arbiter.check
from arbiter.check import (
    PROBE_FIELD,
    CheckReport,
    GameProblem,
    QuitResult,
    UnknownsResult,
    add_unknowns,
    check_bot,
    format_check,
    terminal_safe,
)
from arbiter.cli import UsageError, build_parser, cmd_check
from arbiter.config import ConfigError
from arbiter.faults import ArbiterError, FaultReason

BOTS = Path(__file__).parent / "bots"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        pytest.param("x\x1b[2J", "x\\x1b[2J", id="escape-sequence"),
        pytest.param("a\x00b\x07\x7f\x85", "a\\x00b\\x07\\x7f\\x85", id="c0-del-c1"),
        pytest.param("evil\u202egnp.exe", "evil\\u202egnp.exe", id="bidi-override"),
        pytest.param("two\nlines\r", "two\\nlines\\r", id="newlines"),
        pytest.param("Écarté bot 李 🃏, v1.0", "Écarté bot 李 🃏, v1.0", id="printable-kept"),
    ],
)
def test_terminal_safe(text: str, shown: str) -> None:
    assert terminal_safe(text) == shown


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        pytest.param([], '"name":"x\\x1b[2J\\x07\\u202e"', id="offending-line"),
        pytest.param(["field"], 'unknown field "\\x1b[2J\\x07\\u202e"', id="detail"),
        pytest.param(["crash"], "its stderr ends: cannot play\\x1b[2J\\x07\\u202e", id="stderr"),
    ],
)
async def test_check_escapes_what_a_hostile_bot_sends(argv: list[str], shown: str) -> None:
    command = [sys.executable, str(BOTS / "proto_terminal_escapes.py"), *argv]
    report = await check_bot(command, games=2)
    assert not report.passed
    text = "\n".join(format_check(report))
    assert "FAIL game 1: " in text
    assert shown in text
    assert all(ch == "\n" or ch.isprintable() for ch in text), text


@pytest.mark.parametrize("flood", [False, True], ids=["panic", "panic-after-long-lines"])
async def test_a_crash_quotes_the_last_stderr_lines_and_stays_small(flood: bool) -> None:
    """A Rust-style panic: the cause is two lines above the last one, and is quoted;
    fifty long lines before it do not make the record large."""
    command = [sys.executable, str(BOTS / "proto_panic.py"), *(["flood"] if flood else [])]
    report = await check_bot(command, games=1)
    (problem,) = report.game_problems
    assert problem.reason == "disconnected"
    assert problem.detail.endswith(
        "its stderr ends: thread 'main' panicked at src/main.rs:312:5: | "
        "index out of bounds: the len is 5 but the index is 7\\x1b[2J | "
        "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace"
    )
    assert len(problem.detail) < 500
    text = problem.text()
    # check keeps no stderr log: the hint points at the quote, not at a run directory.
    assert "fix: the bot exited: the end of its stderr (quoted) shows why" in text
    assert "logs" not in text


async def test_check_with_no_game_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every game aborted by an arbiter error: reported as such, not blamed on the bot."""

    async def aborted_game(spec: Any, sessions: Any) -> Any:
        raise ArbiterError(f"game {spec.game_id} aborted by an arbiter error: RuntimeError()")

    monkeypatch.setattr(arbiter.check, "play_game", aborted_game)
    report = await check_bot([sys.executable, "-m", "engines.random.bot"], seed="s")
    assert not report.passed
    lines = format_check(report)
    assert lines[:2] == [
        "rules: default; time: 2000 ms per decision; seed: 's' (--seed repeats these games)",
        "no games were recorded",
    ]
    assert lines[2] == (
        "FAIL game 1: game 0 aborted by an arbiter error: RuntimeError()\n"
        "    this is an error of the arbiter, not of the bot: please report it"
    )
    assert lines[-1] == "1 problem(s) found"


async def test_check_with_no_games_asked() -> None:
    report = await check_bot([sys.executable, "-m", "engines.random.bot"], games=0)
    assert not report.passed
    lines = format_check(report)
    assert lines[1] == "no games were recorded"


def test_report_of_a_bot_that_answered_everything_and_quit() -> None:
    """The report is plain data: the lines follow from it, with the bot's name escaped."""
    report = CheckReport(
        warning=None,
        handshake="mybot\x1b[2J 1.0 by me",
        games=2,
        game_problems=(),
        stopped_early=False,
        seen=frozenset({"propose", "answer", "discard", "mark", "card"}),
        quit=QuitResult.EXITED,
    )
    assert report.passed and report.problems == () and report.missing == ()
    assert format_check(report) == [
        "handshake: ok (mybot\\x1b[2J 1.0 by me)",
        "decision stand or propose (non-dealer): ok",
        "decision accept or refuse (dealer): ok",
        "decision discard: ok",
        "decision mark the king of trumps: ok",
        "decision play a card: ok",
        "quit: ok (exited by itself)",
        "PASS: the bot follows the protocol",
    ]


def test_report_orders_game_faults_before_decisions_and_quit() -> None:
    """Game faults come first; a missing decision kind is not a problem when games failed."""
    fault = GameProblem(game=1, reason="timeout", detail="no reply\x07", line="")
    report = CheckReport(
        warning="sandbox unavailable",
        handshake=None,
        games=1,
        game_problems=(fault,),
        stopped_early=True,
        seen=frozenset({"propose"}),
        quit=QuitResult.HUNG,
    )
    assert not report.passed and len(report.problems) == 2
    lines = format_check(report)
    assert lines[:3] == [
        "sandbox unavailable",
        "FAIL game 1: timeout: no reply\\x07\n    fix: answer within the request's time_ms "
        "(and clock_ms), and flush stdout after each line (print(..., flush=True)): an "
        "unflushed reply never reaches the arbiter",
        "(stopped after game 1: the bot keeps failing)",
    ]
    assert lines[-2:] == [
        "FAIL did not exit within 2 seconds of quit: exit when you read "
        '{"type":"quit"} or reach end of input',
        "2 problem(s) found",
    ]
    assert not any("never answered:" in line for line in lines)


def test_report_counts_never_answered_kinds_when_no_game_failed() -> None:
    report = CheckReport(
        warning=None,
        handshake="b 1 by a",
        games=4,
        game_problems=(),
        stopped_early=False,
        seen=frozenset({"propose", "answer", "card"}),
        quit=QuitResult.NOT_RUNNING,
    )
    assert report.missing == ("discard", "mark the king of trumps")
    assert format_check(report)[-2:] == [
        "FAIL never answered: discard, mark the king of trumps (in 4 games; try --games more)",
        "1 problem(s) found",
    ]


def test_every_fault_reason_has_advice() -> None:
    """The report's "fix:" line exists for every fault a checked bot can commit."""
    assert set(arbiter.check.ADVICE) == set(FaultReason)
    assert all(text and text == text.strip() for text in arbiter.check.ADVICE.values())


@pytest.mark.parametrize(
    ("mode", "reason"),
    [("top", "disconnected"), ("nested", "disconnected"), ("type", "invalid_message")],
)
async def test_check_fails_a_bot_that_trips_on_unknown_fields_or_types(
    mode: str, reason: str
) -> None:
    """PROTOCOL.md §2.5: the plain games pass; the probed replay fails, citing §2.5."""
    report = await check_bot([sys.executable, str(BOTS / "proto_strict_reader.py"), mode], games=2)
    assert report.unknowns is UnknownsResult.FAILED and not report.passed
    (problem,) = report.game_problems
    assert problem.game == 3 and problem.reason == reason and problem.probed
    text = "\n".join(format_check(report))
    assert f"FAIL game 3: {reason}: " in text
    assert "fix: ignore fields you do not know, at any depth, and messages whose type you do " in (
        text
    )
    assert "(PROTOCOL.md §2.5: " in text


def test_add_unknowns_reaches_every_level() -> None:
    request = (
        b'{"type":"request","id":1,"time_ms":5,"clock_ms":null,"view":{"rules":{"target":5},'
        b'"events":[{"type":"stand","seat":0}],"legal":["KS"]}}'
    )
    notice, probed = add_unknowns(request)
    assert json.loads(notice)["type"] not in {"request", "action"}
    message = json.loads(probed)
    assert next(iter(message)) == PROBE_FIELD  # first: "type" is not always first
    view = message["view"]
    assert PROBE_FIELD in view and PROBE_FIELD in view["rules"]
    assert PROBE_FIELD in view["events"][0]
    (event,) = add_unknowns(b'{"type":"event","event":{"type":"stand","seat":0}}')
    assert PROBE_FIELD in json.loads(event)["event"]


async def test_check_warns_about_replies_inside_the_grace_margin() -> None:
    """The third reply of each process takes 350 ms against 200 ms allowed: accepted,
    thanks to grace, in the plain game and in its probed replay."""
    report = await check_bot(
        [sys.executable, str(BOTS / "proto_clock_sleeper.py")],
        games=1,
        time_per_move=200,
        grace_ms=1000,
    )
    assert report.late is not None
    assert report.late.count == 2 and report.late.slowest_ms >= 350
    assert report.late.allowed_ms == 200
    assert any(
        line.startswith("warning: 2 replies came late and passed only thanks to the 1000 ms ")
        and "(PROTOCOL.md §5.2)" in line
        for line in format_check(report)
    )


def test_check_command_takes_clock_and_rules(capsys: pytest.CaptureFixture[str]) -> None:
    random_bot = f"{sys.executable} -m engines.random.bot"
    args = build_parser().parse_args(
        [
            *["check", random_bot, "--games", "2", "--clock", "3000", "--increment", "50"],
            *["--rules", "cavendish", "--rule", "target=7", "--rule", "must_trump=false"],
            *["--seed", "88"],
        ]
    )
    assert cmd_check(args) in (0, 1)  # two games may not show every decision
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (
        "rules: cavendish with must_trump=false, target=7; "
        "time: game clock 3000 ms + 50 ms per decision; seed: 88 (--seed repeats these games)"
    )
    # The bundled engine ignores what it does not know (PROTOCOL.md §2.5).
    assert "unknown fields and message types: ok (ignored)" in out


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["--rule", "targ=7"], "unknown rules option 'targ'"),
        (["--rule", "target"], "--rule 'target': expected KEY=VALUE, e.g. --rule target=7"),
        (["--rules", "vegas"], "unknown rules preset 'vegas'"),
        (["--increment", "10"], "--increment needs --clock"),
    ],
)
def test_check_command_rejects_bad_rules_and_time(options: list[str], error: str) -> None:
    args = build_parser().parse_args(["check", "true", *options])
    with pytest.raises((UsageError, ConfigError), match=re.escape(error)):
        cmd_check(args)


async def test_check_catches_a_missing_flush_even_with_pythonunbuffered_set(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A bot tested from a shell with PYTHONUNBUFFERED=1 would pass and then fail in a
    tournament: check runs it without that variable, and names the fix."""
    monkeypatch.setenv("PYTHONUNBUFFERED", "1")
    report = await check_bot(
        [sys.executable, str(BOTS / "proto_no_flush.py")], games=1, time_per_move=300
    )
    assert not report.passed
    text = "\n".join(format_check(report))
    assert "FAIL game 1: timeout: no reply within" in text
    assert "fix: answer within the request's time_ms (and clock_ms), and flush stdout" in text


async def test_check_findings_carry_the_fix_for_their_cause() -> None:
    """A debug print on stdout: the fix says to log to stderr, not only "send JSON"."""
    report = await check_bot([sys.executable, str(BOTS / "proto_garbage.py")], games=1)
    text = "\n".join(format_check(report))
    assert "FAIL game 1: invalid_message: malformed JSON" in text
    assert "fix: write logs and debug output to stderr: stdout carries protocol lines only" in text


async def test_each_check_deals_from_its_own_seed_and_names_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fixed seed would let a bot tell a check from a tournament by its first hand."""
    seeds: list[object] = []

    async def no_game(spec: Any, sessions: Any) -> Any:
        seeds.append(spec.seed)
        raise ArbiterError("stop")

    monkeypatch.setattr(arbiter.check, "play_game", no_game)
    settings = []
    for seed in (None, None, 7):
        report = await check_bot([sys.executable, "-m", "engines.random.bot"], games=1, seed=seed)
        settings.append(report.setting)
    assert seeds[0] != seeds[1] and seeds[2] == 7
    for used, setting in zip(seeds, settings, strict=True):
        assert setting.endswith(f"; seed: {used} (--seed repeats these games)")


def test_a_warning_naming_a_bots_file_is_printed_escaped() -> None:
    """The link warning names a file the bot chose: its name may hold escape codes."""
    report = CheckReport(
        warning="warning: engine 'checked': book.txt ... to /b/\x1b[31mRED\x07.txt ...",
        handshake=None,
        games=0,
        game_problems=(),
        stopped_early=False,
        seen=frozenset(),
        quit=QuitResult.NOT_RUNNING,
    )
    first = format_check(report)[0]
    assert "\x1b" not in first and "\x07" not in first and "\\x1b[31mRED" in first
