"""Tests of arbiter/check.py: what ``ecarte check`` reports, and that nothing a bot
sends reaches the terminal raw."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

import arbiter.check
from arbiter.check import check_bot, terminal_safe
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
    lines: list[str] = []
    command = [sys.executable, str(BOTS / "proto_terminal_escapes.py"), *argv]
    assert not await check_bot(command, games=2, out=lines.append)
    text = "\n".join(lines)
    assert "FAIL game 1: " in text
    assert shown in text
    assert all(ch == "\n" or ch.isprintable() for ch in text), text


async def test_check_with_no_game_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every game aborted by an arbiter error: reported as such, not blamed on the bot."""

    async def aborted_game(spec: Any, sessions: Any) -> Any:
        raise ArbiterError(f"game {spec.game_id} aborted by an arbiter error: RuntimeError()")

    monkeypatch.setattr(arbiter.check, "play_game", aborted_game)
    lines: list[str] = []
    ok = await check_bot([sys.executable, "-m", "engines.random.bot"], out=lines.append)
    assert not ok
    assert lines[0] == "no games were recorded"
    assert lines[1] == (
        "FAIL game 1: game 0 aborted by an arbiter error: RuntimeError()\n"
        "    this is an error of the arbiter, not of the bot: please report it"
    )
    assert lines[-1] == "1 problem(s) found"


async def test_check_with_no_games_asked() -> None:
    lines: list[str] = []
    assert not await check_bot(
        [sys.executable, "-m", "engines.random.bot"], games=0, out=lines.append
    )
    assert lines[0] == "no games were recorded"


def test_every_fault_reason_has_advice() -> None:
    """The report's "fix:" line exists for every fault a checked bot can commit."""
    assert set(arbiter.check.ADVICE) == set(FaultReason)
    assert all(text and text == text.strip() for text in arbiter.check.ADVICE.values())
