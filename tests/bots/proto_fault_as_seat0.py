"""Protocol bot that plays its first legal action as seat 1 and answers every request
with a line that is not JSON as seat 0: it faults in every other game of a match."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "seat1only", "author": "tests", "version": "1", "protocol": 1}
seat = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
    elif msg["type"] == "new_game":
        seat = msg["seat"]
    elif msg["type"] == "request":
        if seat == 0:
            sys.stdout.write("no\n")
        else:
            action = msg["view"]["legal"][0]
            sys.stdout.write(
                json.dumps({"type": "action", "id": msg["id"], "action": action}) + "\n"
            )
    elif msg["type"] == "quit":
        break
    sys.stdout.flush()
