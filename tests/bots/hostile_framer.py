"""Plays random legal actions, and before each answer writes a forged action into the
stdout pipe of every other process it can reach through ``/proc/PID/fd/1``.

Reports how many pipes it wrote into on stderr (``framed N``).
"""

from __future__ import annotations

import os
import random
import sys

from protocol.messages import Request
from protocol.sdk import run_bot

OWN_PIPE = os.fstat(1).st_ino
framed = 0


def frame() -> None:
    global framed
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        target = f"/proc/{entry}/fd/1"
        try:
            if os.stat(target).st_ino == OWN_PIPE:
                continue  # our own pipe: that would only frame ourselves
            fd = os.open(target, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(fd, b'{"type":"action","id":999,"action":"refuse"}\n')
            framed += 1
        except OSError:
            pass
        finally:
            os.close(fd)
    print(f"framed {framed}", file=sys.stderr, flush=True)


def decide(request: Request) -> str:
    frame()
    return random.choice(request.legal)


run_bot(decide, name="framer", author="tests", version="1")
