"""Well-behaved protocol bot that plays the first legal action and writes the type of
every message it receives to stderr, one per line (``got deal``; ``got new_game NAME``
with the opponent's name), so that a test can check what the arbiter told it."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "recorder", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    opponent = f" {msg['opponent']}" if msg["type"] == "new_game" else ""
    sys.stderr.write(f"got {msg['type']}{opponent}\n")
    sys.stderr.flush()
    if msg["type"] == "hello":
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
