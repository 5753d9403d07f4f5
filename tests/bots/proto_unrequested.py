"""Protocol bot that plays the first legal action and writes a debugging line to
stdout right after each reply (in the same write): a line nobody asked for."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "debug", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
    elif msg["type"] == "request":
        action = msg["view"]["legal"][0]
        reply = {"type": "action", "id": msg["id"], "action": action}
        sys.stdout.write(json.dumps(reply) + f"\ndebug: played {action}\n")
    elif msg["type"] == "quit":
        break
    sys.stdout.flush()
