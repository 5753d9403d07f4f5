"""Protocol bot that plays random legal actions and logs ``tick T`` to stderr at every
request, ``T`` being the system-wide monotonic clock: when its games were being played.
It thinks 20 ms a decision, so that games last long beside a process's start."""

from __future__ import annotations

import random
import sys
import time

from protocol.messages import Request
from protocol.sdk import run_bot


def play(request: Request) -> str:
    print(f"tick {time.monotonic():.6f}", file=sys.stderr, flush=True)
    time.sleep(0.02)
    return random.choice(request.legal)


run_bot(play, name="clock-log", author="tests", version="1")
