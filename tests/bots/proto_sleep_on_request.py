"""Protocol bot that answers the hello, then sleeps forever on its first request."""

from __future__ import annotations

import json
import sys
import time

HELLO = {"type": "hello", "name": "sleeper", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "request":
        while True:
            time.sleep(3600)
    elif msg["type"] == "quit":
        break
