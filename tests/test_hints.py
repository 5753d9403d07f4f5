"""Tests of arbiter.hints: each fault cause gets the advice that fixes it."""

from __future__ import annotations

import pytest

from arbiter.faults import InvalidMessage
from arbiter.game import fault_line
from arbiter.hints import fix_hint
from arbiter.record import Termination
from protocol.messages import decode_from_bot


def _decode_detail(line: bytes) -> str:
    with pytest.raises(InvalidMessage) as info:
        decode_from_bot(line)
    return info.value.detail


@pytest.mark.parametrize(
    ("reason", "detail", "line", "advice"),
    [
        # A debug print on stdout read as the reply.
        ("invalid_message", _decode_detail(b"thinking..."), "thinking...", "to stderr"),
        ("invalid_message", "unrequested line", '{"type": "action"}', "to stderr"),
        (
            "invalid_message",
            "reply id 3 does not answer request 4 (stale or mismatched id)",
            None,
            "echo the id",
        ),
        (
            "invalid_message",
            _decode_detail(b'{"type": "action", "id": 1, "action": "stand", "ation": 1}'),
            None,
            "only the fields",
        ),
        ("timeout", "no reply within 1.100 s", None, "flush stdout"),
        ("timeout", "did not read its input within 5.000 s", None, "keep reading stdin"),
        ("no_handshake", "no hello within 10000 ms of starting", None, "flush stdout"),
        (
            "disconnected",
            "exited with code 1; its stderr ends: ModuleNotFoundError: No module named 'protocol'",
            None,
            "the Python that has the package installed",
        ),
        ("disconnected", "exited with code 0", None, "keeps running"),
        (
            "disconnected",
            "exited with code 101; its stderr ends: panicked | note; its stderr log: "
            "run/logs/mybot.stderr.log",
            None,
            "its stderr log run/logs/mybot.stderr.log shows why",
        ),
        (
            "disconnected",
            "killed by SIGSEGV; its stderr log: run/logs/mybot.stderr.log",
            None,
            "its stderr log run/logs/mybot.stderr.log may say why",
        ),
        ("disconnected", "exited with code 1; its stderr ends: boom", None, "(quoted)"),
        ("disconnected", "exited with code 1", None, "wrote nothing to stderr"),
        ("disconnected", "killed by SIGKILL", None, "run its command by hand"),
        ("disconnected", "closed its stdout while still running", None, "open until"),
        ("illegal_action", "'10H' is not a card", '{"action": "play 10H"}', "ten is written T"),
        ("illegal_action", "KS is not in your hand", '{"action": "play KS"}', "legal actions"),
        ("resource_limit", "memory limit of 128 MB exceeded", None, "limit"),
    ],
)
def test_each_cause_gets_its_fix(reason: str, detail: str, line: str | None, advice: str) -> None:
    hint = fix_hint(reason, detail, line)
    assert hint is not None and advice in hint


def test_withdrawn_and_normal_games_get_no_hint() -> None:
    assert fix_hint("normal", "") is None
    assert fix_hint("withdrawn", "mybot was withdrawn after repeated faults") is None


def test_the_live_fault_line_names_game_engine_reason_line_and_fix() -> None:
    end = Termination(
        reason="invalid_message",
        offender=1,
        detail="malformed JSON: expected a JSON object",
        line="debug: " + "x" * 100,
    )
    text = fault_line(7, "mybot", end)
    assert text.startswith("game 7: mybot faulted: invalid_message: malformed JSON")
    assert "its line: 'debug: " + "x" * 53 + "...'" in text
    assert text.endswith(
        "fix: write logs and debug output to stderr: stdout carries protocol lines only"
    )
    assert "\n" not in text
