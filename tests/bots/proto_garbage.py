"""Protocol bot that answers the hello, then replies to its first request with a
line that is not JSON at all."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "garbage", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
    elif msg["type"] == "request":
        sys.stdout.write("I play the king of spades!\n")
    elif msg["type"] == "quit":
        break
    sys.stdout.flush()
