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
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from arbiter.bot import BotCommand, Limits
from arbiter.faults import BotFault
from arbiter.session import BotSession

__all__ = ["PreflightError", "preflight", "program_problem"]


class PreflightError(RuntimeError):
    """Engines that cannot start; the message has one line per engine."""


def program_problem(command: BotCommand) -> str | None:
    """What is wrong with the program of ``command`` before it is even run, or None."""
    program = command.argv[0]
    cwd = Path(command.cwd) if command.cwd else Path.cwd()
    if "/" in program:
        path = cwd / program  # an absolute program stays as it is
        if not path.exists():
            return f"no such file: {path}"
        if path.is_dir():
            return f"{path} is a directory, not a program"
        if not os.access(path, os.X_OK):
            return (
                f"{path} is not executable: make it so (chmod +x) or start it with its "
                f"interpreter (e.g. python3 {program})"
            )
        return None
    env = {**(os.environ if command.base_env is None else command.base_env), **(command.env or {})}
    if shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        return f"{program!r} is not on the PATH the bot gets ({env.get('PATH', os.defpath)})"
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
            failures[name] = f"{fault.reason}: {session.explain(fault)}"
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
