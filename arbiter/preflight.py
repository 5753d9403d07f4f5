"""Before a run schedules anything: start every engine once and see it say hello.

A config whose engine cannot start would otherwise play every one of its games as a
forfeit.  :func:`preflight` checks each engine's program first (a missing file, a
directory, a file without execute permission, a name not on the ``PATH``), then
starts all the engines at once, sandbox and environment as in the run, does the
handshake and stops them.  Every engine that fails is named in one line with its
command, the directory it ran in and the reason (for a crash, the end of its stderr).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Mapping
from typing import Any

import trio

from arbiter.bot import BotCommand, Limits
from arbiter.faults import BotFault
from arbiter.hints import terminal_safe
from arbiter.session import BotSession

__all__ = ["PreflightError", "preflight", "program_problem"]


class PreflightError(RuntimeError):
    """Engines that cannot start; the message has one line per engine."""


def program_problem(command: BotCommand) -> str | None:
    """What is wrong with the program of ``command`` before it is even run, or None."""
    try:
        command.check_program()
    except IsADirectoryError as exc:
        return f"{exc.filename} is a directory, not a program"
    except PermissionError as exc:
        return (
            f"{exc.filename} is not executable: make it so (chmod +x) or start it with its "
            f"interpreter (e.g. python3 {command.argv[0]})"
        )
    except FileNotFoundError as exc:
        if "/" in command.argv[0]:
            return f"no such file: {exc.filename}"
        path = (command.environment() or os.environ).get("PATH", os.defpath)
        return f"{command.argv[0]!r} is not on the PATH the bot gets ({path})"
    return None


async def preflight(
    commands: Mapping[str, BotCommand],
    *,
    options: Mapping[str, dict[str, Any]],
    handshake_ms: int,
    limits: Limits | None = None,
) -> None:
    """Start each engine of ``commands`` once, in parallel, and stop it after its hello.

    Raises :class:`PreflightError` naming every engine that cannot start or handshake.
    """
    failures: dict[str, str] = {}
    for name, command in commands.items():
        problem = program_problem(command)
        if problem is not None:
            failures[name] = problem

    async def try_engine(name: str, nursery: trio.Nursery) -> None:
        session = BotSession(
            name,
            commands[name],
            nursery,
            options=options.get(name, {}),
            limits=limits,
            handshake_ms=handshake_ms,
            # A healthy bot quits at once; one that does not is not this check's business.
            grace_s=0.5,
            term_grace_s=0.5,
        )
        try:
            await session.ensure_started()
        except BotFault as fault:
            # The detail may quote the bot (its stderr, a key of its hello): escaped, so
            # it can neither rewrite the terminal nor add lines of its own.
            failures[name] = terminal_safe(f"{fault.reason}: {session.explain(fault)}")
            user = commands[name].user
            if user is not None and "Permission denied" in failures[name]:
                failures[name] += (
                    f"; the bot runs as {user} (bot_user), which must be able to read its "
                    "files: make them readable by others (chmod -R o+rX on its directory), "
                    "or set bot_user: root"
                )
        finally:
            await session.stop()

    async with trio.open_nursery() as nursery:
        for name in commands:
            if name not in failures:
                nursery.start_soon(try_engine, name, nursery)
    if failures:
        lines = []
        for name in commands:
            if name in failures:
                command = commands[name]
                where = command.cwd or os.getcwd()
                lines.append(
                    f"engine {name!r} cannot start: {shlex.join(command.argv)} (in {where}): "
                    f"{failures[name]}"
                )
        raise PreflightError("\n".join(lines))
