"""Leaves a process behind: at start-up a grandchild calls ``setsid()`` (leaving the
bot's process group), double-forks and sleeps forever with SIGTERM ignored; then the bot
plays random legal actions.  With ``stuck`` as first argument the bot itself stops
reading its input after the handshake and sleeps (so only signals can end it).

Every process it starts carries the marker given as last argument in its command line,
so a test can look for survivors in ``/proc``.
"""

from __future__ import annotations

import os
import random
import signal
import sys
import time

from protocol.messages import Request
from protocol.sdk import run_bot

marker = sys.argv[-1]

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)", marker])
    os._exit(0)
os.wait()

stuck = sys.argv[1] == "stuck"


def decide(request: Request) -> str:
    if stuck:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        while True:
            time.sleep(3600)
    return random.choice(request.legal)


run_bot(decide, name="escape", author="tests", version="1")
