"""Protocol bot that plays the first legal action twice, then exits with code 0 on
its third request, in the middle of the first deal."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "quitter", "author": "tests", "version": "1", "protocol": 1}

requests = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        requests += 1
        if requests == 3:
            sys.exit(0)
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
