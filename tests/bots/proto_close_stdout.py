"""Protocol bot that answers the hello, closes its stdout on its first request and
keeps running (reading its input) until the end of its input."""

from __future__ import annotations

import json
import os
import sys

HELLO = {"type": "hello", "name": "mute", "author": "tests", "version": "1", "protocol": 1}

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "request":
        os.close(1)
        for _line in sys.stdin:
            pass
        os._exit(0)
