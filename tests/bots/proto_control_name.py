"""Protocol bot whose hello name holds a terminal escape sequence (clear the screen)."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "x\x1b[2J", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
    elif msg["type"] == "request":
        sys.stdout.write(json.dumps({"type": "action", "id": msg["id"], "action": "KS"}) + "\n")
    elif msg["type"] == "quit":
        break
    sys.stdout.flush()
