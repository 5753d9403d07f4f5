"""Protocol bot that answers the hello, then crashes (an uncaught exception, exit
code 1) on its first request."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "crash", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "request":
        raise RuntimeError("crashed on the first turn")
    elif msg["type"] == "quit":
        break
