"""The closed list of ways a bot can fault, and one exception type per way.

This is the one place the fault reasons are spelled out: the ``forfeit`` message's
``reason`` (PROTOCOL.md §6), the game record's termination reasons, the JSON schema
and the compliance checker's advice are all derived from :class:`FaultReason`.
Every game that a bot loses without playing it out is classified by exactly one
reason, and each reason has exactly one :class:`BotFault` subclass.

The exceptions live in the protocol package because decoding a bot's line
(:func:`protocol.messages.decode_from_bot`) already raises one of them
(:class:`InvalidMessage`); the arbiter raises the others and re-exports the whole
family from :mod:`arbiter.faults`.
"""

from __future__ import annotations

from enum import StrEnum
from typing import ClassVar, Final

__all__ = [
    "MAX_LINE_IN_FAULT",
    "BotFault",
    "BotTimeout",
    "Disconnected",
    "FailedToStart",
    "FaultReason",
    "IllegalAction",
    "InvalidMessage",
    "NoHandshake",
    "ResourceLimit",
]

MAX_LINE_IN_FAULT: Final = 200
"""How many bytes of an offending line a fault keeps (the rest is cut off)."""


class FaultReason(StrEnum):
    """Why a bot lost a game without playing it out; one value per fault type."""

    FAILED_TO_START = "failed_to_start"
    """The bot process could not be started at all."""

    NO_HANDSHAKE = "no_handshake"
    """The process started but did not complete the opening handshake."""

    TIMEOUT = "timeout"
    """The bot did not answer (or did not read its input) before the deadline."""

    DISCONNECTED = "disconnected"
    """The bot closed its stdout, its stdin, or exited while still in a game."""

    INVALID_MESSAGE = "invalid_message"
    """The bot wrote something that is not a valid message at this point."""

    ILLEGAL_ACTION = "illegal_action"
    """The bot's message was well-formed but named an action the rules forbid."""

    RESOURCE_LIMIT = "resource_limit"
    """The bot exceeded its memory or CPU-time limit and was stopped by the kernel."""


def _clip(line: bytes | None) -> bytes | None:
    if line is None or len(line) <= MAX_LINE_IN_FAULT:
        return line
    return line[:MAX_LINE_IN_FAULT]


class BotFault(Exception):
    """Base class of the faults a bot can commit; each subclass has one :attr:`reason`.

    Attributes:
      reason: The recorded reason, fixed per subclass.
      detail: A human-readable explanation, e.g. ``"no reply within 2.000 s"``.
      line: The offending line, cut to :data:`MAX_LINE_IN_FAULT` bytes, or ``None``
        when there is no line to blame.
    """

    reason: ClassVar[FaultReason]

    def __init__(self, detail: str, *, line: bytes | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.line = _clip(line)

    def __str__(self) -> str:
        if self.line is None:
            return self.detail
        return f"{self.detail}: {self.line!r}"

    def __repr__(self) -> str:
        if self.line is None:
            return f"{type(self).__name__}({self.detail!r})"
        return f"{type(self).__name__}({self.detail!r}, line={self.line!r})"

    def copy(self) -> BotFault:
        """A fresh exception of the same type and content (for re-raising later)."""
        return type(self)(self.detail, line=self.line)


class FailedToStart(BotFault):
    """Raised by :func:`arbiter.bot.open_bot` when the process cannot be spawned.

    That is: the executable is missing or not executable, the working directory
    does not exist, or the resource limits could not be applied in the child.
    It is *not* raised when the process starts and then exits at once; that is
    found on the first exchange and raised as :class:`Disconnected`.
    """

    reason = FaultReason.FAILED_TO_START


class NoHandshake(BotFault):
    """Raised by the game layer when a started bot fails the opening handshake.

    It wraps whatever went wrong during the handshake (no reply in time, a
    wrong first message, an early exit).  It is *not* raised by the transport
    layer, and not for faults after the handshake has completed.
    """

    reason = FaultReason.NO_HANDSHAKE


class BotTimeout(BotFault):
    """Raised when a deadline passes while sending to or waiting for the bot.

    The deadline covers the whole exchange: writing the request (which blocks
    once the bot stops reading and the pipe is full) and reading the reply.
    ``line`` holds the partial reply received so far, if any.  It is *not*
    raised when the bot exits or closes its stdout before the deadline: that is
    :class:`Disconnected` (or :class:`ResourceLimit`), reported as soon as it is
    seen.  It is *not* raised when the surrounding code is cancelled; the
    cancellation propagates unchanged.
    """

    reason = FaultReason.TIMEOUT


class Disconnected(BotFault):
    """Raised when the bot's stdout reaches EOF, its stdin is broken, or it exits.

    EOF on stdout is reported at once, whether or not the process is still
    running.  It is *not* raised when the exit was caused by a resource limit
    that :mod:`arbiter.bot` can recognize (see :class:`ResourceLimit`), and
    not when the arbiter itself stopped the bot.
    """

    reason = FaultReason.DISCONNECTED


class InvalidMessage(BotFault):
    """Raised when the bot writes a line that cannot be accepted.

    The transport layer (:mod:`arbiter.bot`) raises it for a line longer than the
    limit and for a line that arrived when nothing was requested;
    :func:`protocol.messages.decode_from_bot` for a line that is not a valid bot
    message (malformed JSON, an unknown type or field, ...), with a text a bot
    author can act on; the referee (:meth:`arbiter.referee.Referee.submit`) for a
    valid message that is not the expected one or carries a stale or wrong ``id``.
    It is *not* raised for a well-formed message naming an action the rules
    forbid: that is :class:`IllegalAction`.
    """

    reason = FaultReason.INVALID_MESSAGE


class IllegalAction(BotFault):
    """Raised by :meth:`arbiter.referee.Referee.submit` for an action that is not legal.

    That is: action text that is not valid notation, or an action the rules forbid
    now, e.g. playing a card the bot does not hold, or revoking.  The game state is
    unchanged.  It is *not* raised for malformed or unexpected messages
    (:class:`InvalidMessage`).
    """

    reason = FaultReason.ILLEGAL_ACTION


class ResourceLimit(BotFault):
    """Raised when the bot died of exceeding the memory or CPU-time limit it was given.

    Detection is a heuristic applied only when limits were set; see
    :mod:`arbiter.bot`.  It is *not* raised when no limits were set, nor when the
    process died for any other reason (that is :class:`Disconnected`).
    """

    reason = FaultReason.RESOURCE_LIMIT
