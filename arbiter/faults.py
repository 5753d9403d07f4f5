"""The faults the arbiter charges to bots, and the one error it never charges.

The closed list of fault reasons and one exception type per reason are defined once,
in :mod:`protocol.faults` (the ``forfeit`` message puts the reason on the wire); they
are re-exported here so the arbiter names them from one module.  The transport
layer (:mod:`arbiter.bot`) raises the exceptions about processes and lines; the
game layer and the referee raise the ones about messages and actions.  A bug in the
arbiter itself is an :class:`ArbiterError`, which is never recorded against a bot.
"""

from __future__ import annotations

from protocol.faults import (
    MAX_LINE_IN_FAULT,
    BotFault,
    BotTimeout,
    Disconnected,
    FailedToStart,
    FaultReason,
    IllegalAction,
    InvalidMessage,
    NoHandshake,
    ResourceLimit,
)

__all__ = [
    "MAX_LINE_IN_FAULT",
    "ArbiterError",
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


class ArbiterError(Exception):
    """Raised for a bug or misuse in the arbiter itself; never recorded as a bot's fault.

    Examples: sending a line that contains a newline, using a bot from two
    tasks at once, or using a bot after it was stopped.
    """
