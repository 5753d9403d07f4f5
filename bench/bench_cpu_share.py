"""A bot's share of the cores: how much a bot that keeps busy processes while its
opponent thinks slows that opponent down.

Starts a ``victim`` (each request: 0.3 s of CPU, then it replies with the wall time it
took) in the sandbox, and asks it ``decisions`` times alone (the floor, measured in the
same run), then again while a ``hog`` runs beside it in a sandbox of its own: a bot
that answered its hello at once and left ``children`` busy processes behind, each of
which tries to start a session of its own (which the sandbox refuses).  Prints the
medians.  Run with the project installed:

    python bench/bench_cpu_share.py [decisions] [children]
"""

from __future__ import annotations

import statistics
import sys

import trio

from arbiter.bot import BotCommand, open_bot
from arbiter.sandbox import SandboxPlan, minimal_env, resolve_bot_user, sandbox_unavailable

VICTIM = (
    "import sys, time\n"
    "for line in sys.stdin:\n"
    "    wall, cpu = time.perf_counter(), time.process_time()\n"
    "    while time.process_time() - cpu < 0.3:\n"
    "        pass\n"
    "    print(time.perf_counter() - wall, flush=True)\n"
)
HOG = (
    "import os, sys\n"
    "for _ in range(int(sys.argv[1])):\n"
    "    if os.fork() == 0:\n"
    "        try:\n"
    "            os.setsid()\n"
    "        except OSError:\n"
    "            pass\n"
    "        while True:\n"
    "            pass\n"
    "sys.stdin.readline()\n"
    "print('ready', flush=True)\n"
    "sys.stdin.readline()\n"
)


def sandboxed(code: str, *args: str) -> BotCommand:
    argv = [sys.executable, "-c", code, *args]
    user, _ = resolve_bot_user("auto", sandboxed=True)
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False)
    return BotCommand(argv, base_env=minimal_env(home="/tmp"), sandbox=plan, user=user)


async def decisions(count: int) -> list[float]:
    """Wall seconds of ``count`` decisions of the victim."""
    async with open_bot(sandboxed(VICTIM), name="victim", log_path=None) as bot:
        return [float((await bot.request(b"go", timeout=30))[0]) for _ in range(count)]


async def main(count: int, children: int) -> None:
    why = sandbox_unavailable()
    if why is not None:
        print(f"the sandbox cannot run here: {why}")
        return
    alone = await decisions(count)
    async with open_bot(sandboxed(HOG, str(children)), name="hog", log_path=None) as hog:
        await hog.request(b"hello", timeout=30)
        beside = await decisions(count)
    print(f"victim: 0.3 s of CPU a decision, {count} decisions each")
    print(f"  alone (floor)                    median {statistics.median(alone):.3f} s")
    print(
        f"  beside a bot with {children} busy children  median "
        f"{statistics.median(beside):.3f} s "
        f"(ratio {statistics.median(beside) / statistics.median(alone):.2f})"
    )


if __name__ == "__main__":
    trio.run(
        main,
        int(sys.argv[1]) if len(sys.argv) > 1 else 10,
        int(sys.argv[2]) if len(sys.argv) > 2 else 8,
    )
