"""How to fix a fault: one hint per cause, for bot authors.

A fault's reason says what the arbiter saw (a timeout, a malformed line); the hint
says what the bot most likely did wrong and what to change.  It is worked out from
the reason, the detail and the offending line of a record, so every place that shows
a fault — the line printed when it happens, ``ecarte show``, ``ecarte check`` — gives
the same advice, and records written before hints existed get them too.

:func:`terminal_safe` makes what a bot chose (its name, a line, its stderr) safe to
print in a fault message or anywhere else.
"""

from __future__ import annotations

import re
import unicodedata

from protocol.faults import FaultReason
from protocol.messages import PROTOCOL_VERSION

__all__ = ["ADVICE", "STDERR_LOG_MARK", "fix_hint", "terminal_safe"]

ADVICE: dict[FaultReason, str] = {
    FaultReason.FAILED_TO_START: "the command could not be started: check the path and permissions",
    FaultReason.NO_HANDSHAKE: "answer the arbiter's hello with "
    '{"type":"hello","name":...,"author":...,"version":...,"protocol":'
    f"{PROTOCOL_VERSION}}} and flush stdout",
    FaultReason.TIMEOUT: "reply within time_ms, and flush stdout after every line",
    FaultReason.DISCONNECTED: "keep running and keep stdout open until told to quit",
    FaultReason.INVALID_MESSAGE: "send exactly one JSON object per line, with only the "
    "documented fields",
    FaultReason.ILLEGAL_ACTION: "answer with one of the strings in the request's view.legal",
    FaultReason.RESOURCE_LIMIT: "stay within the memory, CPU and process limits",
}
"""What a bot author should do about each fault reason in general (every reason has an
entry): the hint when nothing more specific is known of the cause."""

_MISSING_MODULE = re.compile(r"No module named '?([\w.]+)'?")


def fix_hint(reason: str, detail: str, line: str | None = None) -> str | None:
    """The advice for a fault of ``reason`` with ``detail`` and offending ``line``: the most
    specific one known, else the reason's general :data:`ADVICE`; None for a reason that
    is not a bot's fault (``normal``, ``withdrawn``, ``match_forfeit``) or a person who
    left a game.

    >>> fix_hint("invalid_message", "unrequested line", "thinking...")
    'write logs and debug output to stderr: stdout carries protocol lines only'
    """
    missing = _MISSING_MODULE.search(detail)
    if missing is not None:
        return (
            f"the bot's Python has no module {missing.group(1)!r}: run the bot with the "
            "Python that has the package installed (e.g. /path/to/.venv/bin/python3 "
            "mybot.py as its command), or install the package into the Python it runs with"
        )
    if reason == "invalid_message":
        return _invalid_message_hint(detail, line)
    if reason == "timeout":
        if "did not read its input" in detail:
            return (
                "keep reading stdin while you think: notices arrive between requests, and a "
                "bot that stops reading blocks the arbiter's writes"
            )
        return (
            "answer within the request's time_ms (and clock_ms), and flush stdout after each "
            "line (print(..., flush=True)): an unflushed reply never reaches the arbiter"
        )
    if reason == "no_handshake":
        return (
            "answer the arbiter's hello with your own at once, and flush stdout after it; "
            "start-up work (loading tables) must fit in the handshake time"
        )
    if reason == "disconnected":
        if detail.startswith("the player left the game"):
            return None  # a person of ecarte play, not a bot: nothing to fix
        if "closed its stdout" in detail or "closed its stdin" in detail:
            return "keep stdin and stdout open until the arbiter sends quit"
        where = _stderr_source(detail)
        if "killed by" in detail:
            if where is None:
                return "the bot was killed by a signal: run its command by hand to see why"
            return f"the bot was killed by a signal: {where} may say why"
        why = (
            "it wrote nothing to stderr: run its command by hand to see why"
            if where is None
            else f"{where} shows why"
        )
        return (
            f"the bot exited: {why}; a bot keeps running and "
            "reading stdin until quit, a forfeit or the end of its input"
        )
    if reason == "illegal_action":
        if line is not None and "10" in line:
            return "the ten is written T (TH, not 10H)"
        return (
            "send one of the request's legal actions, spelled as listed in view.legal "
            "(a discard's cards may be in any order)"
        )
    if reason == "resource_limit":
        if detail.startswith("process limit"):
            return (
                "the bot started more processes and threads than limits.processes allows "
                "(all of its processes together): start fewer (a smaller thread pool), or "
                "raise the limit"
            )
        return (
            "the bot went over the memory or CPU limit set in the config's limits: use less, "
            "or raise the limit"
        )
    if reason == "failed_to_start" and "Permission denied" in detail:
        return "make the program executable (chmod +x) or start it with its interpreter"
    try:
        return ADVICE[FaultReason(reason)]
    except ValueError:
        return None  # not a bot's fault: normal, withdrawn, match_forfeit


STDERR_LOG_MARK = "; its stderr log: "
"""Ends a crash's detail when the arbiter keeps the bot's stderr in a file (the path
follows; see :meth:`arbiter.session.BotSession.explain`)."""


def _stderr_source(detail: str) -> str | None:
    """Where a crashed bot's own words are: its stderr log, named in the detail when
    the run kept one, else the end of its stderr quoted in the detail; None if neither."""
    if STDERR_LOG_MARK in detail:
        return f"its stderr log {detail.rpartition(STDERR_LOG_MARK)[2]}"
    if "its stderr ends:" in detail:
        return "the end of its stderr (quoted)"
    return None


def _invalid_message_hint(detail: str, line: str | None) -> str:
    if "does not answer request" in detail:
        return "echo the id of the request you are answering, and answer each request once"
    if "unrequested line" in detail or (
        line is not None and "malformed JSON" in detail and not line.lstrip().startswith("{")
    ):
        return "write logs and debug output to stderr: stdout carries protocol lines only"
    if "unknown field" in detail:
        return "send only the fields the message defines (check their spelling)"
    if "duplicate key" in detail:
        return "write each key of a JSON object once"
    if "handshake" in detail:
        return (
            'answer the arbiter\'s hello with {"type": "hello", "protocol": '
            f'{PROTOCOL_VERSION}, "name": ...}}'
        )
    if "long" in detail:
        return "keep each line under 64 KiB"
    return "send one JSON object per line, as the protocol defines the message"


_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def terminal_safe(text: str) -> str:
    """``text`` with every control or invisible formatting character escaped (``\\x1b``).

    For anything a bot chose (its name, an offending line, its stderr) before it is
    printed: a raw escape sequence could clear or rewrite the user's terminal, and a
    bidirectional override could make the text read differently from what it is.
    """
    if text.isprintable():
        return text
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in _UNSAFE_CATEGORIES
        else ch
        for ch in text
    )
