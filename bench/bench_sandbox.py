"""Start-up cost of the bot sandbox: spawn to first reply, sandboxed and not.

Starts the bundled ``random`` engine and times spawn + ``hello`` round trip, alternating
a plain start (the floor, measured in the same run) and a sandboxed one (run as the
user ``bot_user: auto`` gives: ``nobody`` when this runs as root), and prints the medians
and the median of the per-pair differences.  Prints figures only.  Run with the
project installed:

    python bench/bench_sandbox.py [starts]
"""

from __future__ import annotations

import statistics
import sys
import time

import trio

from arbiter.bot import BotCommand, open_bot
from arbiter.sandbox import SandboxPlan, minimal_env, resolve_bot_user, sandbox_unavailable

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
    await start_once(plain)  # warm the page cache
    await start_once(boxed)
    floor, sandboxed = [], []
    for _ in range(starts):
        floor.append(await start_once(plain))
        sandboxed.append(await start_once(boxed))
    extra = [b - a for a, b in zip(floor, sandboxed, strict=True)]
    ms = 1000
    print(f"bot start to first reply, {starts} starts each (python -m engines.random.bot):")
    print(f"  plain (floor)  median {statistics.median(floor) * ms:7.1f} ms")
    who = "as the arbiter's user" if user is None else f"as {user}"
    print(f"  sandboxed      median {statistics.median(sandboxed) * ms:7.1f} ms ({who})")
    print(
        f"  sandbox cost   median {statistics.median(extra) * ms:7.1f} ms per start "
        f"(ratio {statistics.median(sandboxed) / statistics.median(floor):.2f})"
    )


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 20)
