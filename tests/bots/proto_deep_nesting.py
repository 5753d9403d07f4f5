"""Protocol bot that answers the hello, then replies to its first request with a
2 KB line nested 1,000 levels deep (deep enough to exhaust a recursive decoder)."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "deep", "author": "tests", "version": "1", "protocol": 1}
DEPTH = 1000

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
    elif msg["type"] == "request":
        nested = "[" * DEPTH + "]" * DEPTH
        sys.stdout.write(f'{{"type":"action","id":{msg["id"]},"action":{nested}}}\n')
    elif msg["type"] == "quit":
        break
    sys.stdout.flush()
