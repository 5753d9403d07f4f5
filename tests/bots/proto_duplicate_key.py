"""Protocol bot that answers the hello, then replies to its first request with an
``action`` whose ``id`` key appears twice (the right id last)."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "twice", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
    elif msg["type"] == "request":
        action = json.dumps(msg["view"]["legal"][0])
        sys.stdout.write(f'{{"type":"action","id":0,"id":{msg["id"]},"action":{action}}}\n')
    elif msg["type"] == "quit":
        break
    sys.stdout.flush()
