"""Protocol bot that answers the hello, then on its first request starts children until
the kernel refuses one and dies of that error (at most 500: a test's safety net)."""

from __future__ import annotations

import json
import os
import sys
import time

HELLO = {"type": "hello", "name": "bomb", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "request":
        for _ in range(500):
            if os.fork() == 0:
                time.sleep(5)
                os._exit(0)
        raise SystemExit("the kernel let 500 through")
    elif msg["type"] == "quit":
        break
