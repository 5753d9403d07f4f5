"""Round trips per second and p50 latency of ``Bot.request`` against an echo bot.

Next to it, a floor measured in the same run with the same child: a bare trio
ping-pong over the raw pipes (no line reader, no deadlines, no checks).  Prints
figures only.  Run from the repository root:

    PYTHONPATH=. python bench/bench_bot.py [round_trips]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import trio

from arbiter.bot import BotCommand, open_bot

ECHO = [sys.executable, str(Path(__file__).resolve().parent.parent / "tests" / "bots" / "echo.py")]
MESSAGE = b'{"type":"play","hand":["KS","QH","7D","TC","AS"],"trick":[]}'
WARMUP = 1000


def summarize(latencies: list[float], total: float) -> tuple[float, float]:
    """(round trips per second, p50 latency in µs)."""
    return len(latencies) / total, statistics.median(latencies) * 1e6


async def floor(n: int) -> tuple[float, float]:
    """Bare trio ping-pong with the same child over raw bytes."""
    async with trio.open_nursery() as nursery:
        proc: trio.Process = await nursery.start(
            partial(
                trio.run_process,
                ECHO,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                check=False,
                start_new_session=True,
            )
        )
        assert proc.stdin is not None and proc.stdout is not None
        line = MESSAGE + b"\n"
        latencies: list[float] = []
        for i in range(WARMUP + n):
            if i == WARMUP:
                latencies.clear()
                begin = time.perf_counter()
            start = time.perf_counter()
            await proc.stdin.send_all(line)
            data = await proc.stdout.receive_some(65536)
            while not data.endswith(b"\n"):
                data += await proc.stdout.receive_some(65536)
            latencies.append(time.perf_counter() - start)
        total = time.perf_counter() - begin
        await proc.stdin.aclose()
    return summarize(latencies, total)


async def requests(n: int) -> tuple[float, float]:
    """``Bot.request`` with a deadline per message, unrequested-line check and all."""
    async with open_bot(BotCommand(ECHO), name="echo", log_path=None) as bot:
        latencies: list[float] = []
        for i in range(WARMUP + n):
            if i == WARMUP:
                latencies.clear()
                begin = time.perf_counter()
            start = time.perf_counter()
            await bot.request(MESSAGE, timeout=5.0)
            latencies.append(time.perf_counter() - start)
        total = time.perf_counter() - begin
    return summarize(latencies, total)


async def main(n: int) -> None:
    print(f"{n} round trips of a {len(MESSAGE)}-byte line, echo bot, best of 3 alternating runs")
    floors, bots = [], []
    for _ in range(3):
        floors.append(await floor(n))
        bots.append(await requests(n))
    floor_rate, floor_p50 = max(floors)
    bot_rate, bot_p50 = max(bots)
    print(
        f"{'floor (raw trio pipes)':<26} {floor_rate:>9,.0f} round trips/s  p50 {floor_p50:6.1f} µs"
    )
    print(f"{'Bot.request':<26} {bot_rate:>9,.0f} round trips/s  p50 {bot_p50:6.1f} µs")
    print(
        f"{'ratio (request / floor)':<26} {bot_rate / floor_rate:>9.2f} × throughput  "
        f"p50 +{bot_p50 - floor_p50:.1f} µs"
    )


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 20_000)
