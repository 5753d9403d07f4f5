"""Protocol bot that sends its hello as soon as it starts, before reading the arbiter's
(PROTOCOL.md §3.1 allows it), then plays the first legal action of every request."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "eager", "author": "tests", "version": "1", "protocol": 1}

sys.stdout.write(json.dumps(HELLO) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "request":
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "quit":
        break
