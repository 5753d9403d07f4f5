"""Protocol bot that answers its first request correctly and its second one with the
first request's id (a stale id)."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "stale", "author": "tests", "version": "1", "protocol": 1}

previous: int | None = None
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        rid = msg["id"] if previous is None else previous
        previous = msg["id"]
        reply = {"type": "action", "id": rid, "action": msg["view"]["legal"][0]}
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
