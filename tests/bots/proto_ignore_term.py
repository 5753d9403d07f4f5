"""Protocol bot that ignores SIGTERM (and the end of its input), answers the hello,
then sleeps forever on its first request: only SIGKILL ends it."""

from __future__ import annotations

import json
import signal
import sys
import time

HELLO = {"type": "hello", "name": "stubborn", "author": "tests", "version": "1", "protocol": 1}

signal.signal(signal.SIGTERM, signal.SIG_IGN)
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        sys.stdout.write(json.dumps(HELLO) + "\n")
        sys.stdout.flush()
    elif msg["type"] == "request":
        break
while True:
    time.sleep(3600)
