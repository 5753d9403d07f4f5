"""Protocol bot that flushes its hello but not its replies: they sit in the output buffer
of a pipe (fine on a terminal, or with PYTHONUNBUFFERED set), and the arbiter never sees
them."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "noflush", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        print(json.dumps(HELLO), flush=True)
    elif msg["type"] == "request":
        print(json.dumps({"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}))
    elif msg["type"] == "quit":
        break
