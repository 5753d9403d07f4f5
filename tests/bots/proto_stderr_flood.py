"""Protocol bot that writes 100 MB to stderr before answering the hello, then plays
the first legal action of every request.  Not a fault: stderr is drained."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "chatty", "author": "tests", "version": "1", "protocol": 1}

err = sys.stderr.buffer
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        for _ in range(100):
            err.write(b"e" * 1_048_575 + b"\n")
        err.flush()
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
