"""Start-up cost of the bot sandbox: spawn to first reply, sandboxed and not.

Starts the bundled ``random`` engine and times spawn + ``hello`` round trip, alternating
a plain start (the floor, measured in the same run), a sandboxed one (run as the
user ``bot_user: auto`` gives: ``nobody`` when this runs as root) and a sandboxed one
with the default process cap (``limits.processes``, as tournaments start bots), and
prints the medians and the medians of the per-start differences.  Prints figures only.  Run with the
project installed:

    python bench/bench_sandbox.py [starts]
"""

from __future__ import annotations

import statistics
import sys
import time

import trio

from arbiter.bot import BotCommand, open_bot
from arbiter.sandbox import (
    DEFAULT_PROCESSES,
    SandboxPlan,
    minimal_env,
    process_cap,
    resolve_bot_user,
    sandbox_unavailable,
)

ARGV = [sys.executable, "-m", "engines.random.bot"]
HELLO = b'{"type":"hello","protocol":1,"options":{}}'


async def start_once(command: BotCommand) -> float:
    """Seconds from spawn to the bot's hello reply."""
    begin = time.perf_counter()
    async with open_bot(command, name="random", log_path=None, grace=1.0) as bot:
        await bot.request(HELLO, timeout=30)
        elapsed = time.perf_counter() - begin
    return elapsed


async def main(starts: int) -> None:
    why = sandbox_unavailable()
    if why is not None:
        print(f"the sandbox cannot run here: {why}")
        return
    env = minimal_env(home="/tmp")
    plain = BotCommand(ARGV, base_env=env)
    plan = SandboxPlan.for_engine(ARGV, None, own_dir_configured=False)
    user, _ = resolve_bot_user("auto", sandboxed=True)
    boxed = BotCommand(ARGV, base_env=env, sandbox=plan, user=user)
    own, processes, why = process_cap(DEFAULT_PROCESSES, user, sandboxed=True)
    capped = BotCommand(
        ARGV, base_env=env, sandbox=plan, user=user, own_namespace=own, processes=processes
    )
    for command in (plain, boxed, capped):
        await start_once(command)  # warm the page cache
    floor, sandboxed, with_cap = [], [], []
    for _ in range(starts):
        floor.append(await start_once(plain))
        sandboxed.append(await start_once(boxed))
        with_cap.append(await start_once(capped))
    ms = 1000

    def median(times: list[float]) -> float:
        return statistics.median(times) * ms

    def cost(base: list[float], more: list[float]) -> float:
        return median([b - a for a, b in zip(base, more, strict=True)])

    print(f"bot start to first reply, {starts} starts each (python -m engines.random.bot):")
    print(f"  plain (floor)  median {median(floor):7.1f} ms")
    who = "as the arbiter's user" if user is None else f"as {user}"
    print(f"  sandboxed      median {median(sandboxed):7.1f} ms ({who})")
    cap = f"{processes} processes" if processes is not None else f"not applied: {why}"
    print(f"  + own userns   median {median(with_cap):7.1f} ms (process cap: {cap})")
    print(
        f"  sandbox cost   median {cost(floor, sandboxed):7.1f} ms per start "
        f"(ratio {statistics.median(sandboxed) / statistics.median(floor):.2f}); "
        f"the cap adds {cost(sandboxed, with_cap):.1f} ms"
    )


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 20)
