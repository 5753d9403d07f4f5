"""A small synchronous helper for writing Python bots (PROTOCOL.md), no async needed.

A complete bot::

    import random
    from protocol.sdk import run_bot

    run_bot(lambda request: random.choice(request.legal),
            name="dumb", author="me", version="1.0")

:func:`run_bot` reads the arbiter's lines from stdin, answers ``hello``, calls
``choose`` for each ``request`` and writes the ``action`` reply, flushing every line.
It returns on ``quit`` or at the end of stdin, so the process exits at once.

Leniency (PROTOCOL.md §2.5): messages of an unknown type are ignored, and unknown
fields are dropped at any depth, so a bot keeps working when the arbiter grows the
protocol compatibly.  While :func:`run_bot` runs, ``print()`` goes to stderr:
stdout belongs to the protocol.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import IO

from protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    BotHello,
    Forfeit,
    Hello,
    OptionValue,
    Quit,
    Request,
    ToBot,
    decode_known_to_bot,
    encode,
)

__all__ = ["decode_leniently", "run_bot"]


def run_bot(
    choose: Callable[[Request], str],
    *,
    name: str,
    author: str,
    version: str,
    on_hello: Callable[[dict[str, OptionValue]], None] | None = None,
    on_notice: Callable[[ToBot], None] | None = None,
    stdin: IO[bytes] | None = None,
    stdout: IO[bytes] | None = None,
) -> None:
    """Speak the protocol on stdin/stdout until ``quit``, ``forfeit`` or end of input.

    ``choose`` gets each request and returns one of ``request.legal``.  ``on_hello``
    gets the engine options from the arbiter's ``hello``; ``on_notice`` gets every
    other message (``new_game``, ``deal``, ``event``, ...), requests excluded.
    ``stdin``/``stdout`` default to the process's binary streams (tests pass others).
    """
    inp = sys.stdin.buffer if stdin is None else stdin
    out = sys.stdout.buffer if stdout is None else stdout
    saved_stdout = sys.stdout
    if stdout is None:
        sys.stdout = sys.stderr  # a stray print() must not corrupt the protocol stream
    try:
        for line in inp:
            message = decode_leniently(line)
            if message is None:
                continue
            if isinstance(message, Request):
                reply: Action | BotHello = Action(id=message.id, action=choose(message))
            elif isinstance(message, Hello):
                if on_hello is not None:
                    on_hello(message.options)
                reply = BotHello(
                    name=name, author=author, version=version, protocol=PROTOCOL_VERSION
                )
            elif isinstance(message, Quit):
                return
            else:
                if on_notice is not None:
                    on_notice(message)
                if isinstance(message, Forfeit):
                    return  # the arbiter stops a forfeited bot: exit at once (§6.1)
                continue
            out.write(encode(reply))
            out.flush()  # unflushed stdout is the most common bot failure
    finally:
        sys.stdout = saved_stdout


def decode_leniently(line: bytes) -> ToBot | None:
    """Decode an arbiter line, ignoring unknown fields (at any depth) and message types.

    Returns None for a blank line or a message of an unknown type.  Raises
    ``msgspec.DecodeError``/``msgspec.ValidationError`` when a known message is
    still invalid after unknown fields are dropped (an arbiter bug).
    """
    if not line.strip():
        return None
    return decode_known_to_bot(line)
