"""Protocol bot that answers the hello, then replies to its first request with one
10 MB line (a valid-looking action padded with spaces), written in 1 MB pieces."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "big-line", "author": "tests", "version": "1", "protocol": 1}

out = sys.stdout.buffer
for line in sys.stdin.buffer:
    msg = json.loads(line)
    if msg["type"] == "hello":
        out.write(json.dumps(HELLO).encode() + b"\n")
        out.flush()
    elif msg["type"] == "request":
        action = json.dumps({"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]})
        out.write(action[:-1].encode())
        for _ in range(10):  # blocks once the arbiter stops reading
            out.write(b" " * 1_000_000)
            out.flush()
        out.write(b"}\n")
        out.flush()
    elif msg["type"] == "quit":
        break
