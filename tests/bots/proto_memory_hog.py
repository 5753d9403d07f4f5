"""Protocol bot that answers the hello, then allocates memory without end on its
first request (under RLIMIT_AS it dies of MemoryError)."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "hog", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "request":
        hoard = []
        while True:
            hoard.append(bytearray(16 * 1024 * 1024))
    elif msg["type"] == "quit":
        break
