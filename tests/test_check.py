"""Tests of arbiter/check.py: what ``ecarte check`` reports, and that nothing a bot
sends reaches the terminal raw."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import arbiter.check
from arbiter.check import (
    CheckReport,
    GameProblem,
    QuitResult,
    check_bot,
    format_check,
    terminal_safe,
)
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


async def test_check_with_no_game_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every game aborted by an arbiter error: reported as such, not blamed on the bot."""

    async def aborted_game(spec: Any, sessions: Any) -> Any:
        raise ArbiterError(f"game {spec.game_id} aborted by an arbiter error: RuntimeError()")

    monkeypatch.setattr(arbiter.check, "play_game", aborted_game)
    report = await check_bot([sys.executable, "-m", "engines.random.bot"])
    assert not report.passed
    lines = format_check(report)
    assert lines[0] == "no games were recorded"
    assert lines[1] == (
        "FAIL game 1: game 0 aborted by an arbiter error: RuntimeError()\n"
        "    this is an error of the arbiter, not of the bot: please report it"
    )
    assert lines[-1] == "1 problem(s) found"


async def test_check_with_no_games_asked() -> None:
    report = await check_bot([sys.executable, "-m", "engines.random.bot"], games=0)
    assert not report.passed
    lines = format_check(report)
    assert lines[0] == "no games were recorded"


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
        "FAIL game 1: timeout: no reply\\x07\n    fix: reply within time_ms, and flush stdout "
        "after every line",
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
