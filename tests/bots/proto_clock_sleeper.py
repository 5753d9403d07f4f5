"""Protocol bot that plays the first legal action at once, except on its third request,
where it sleeps 0.35 s before answering; it writes each request's ``time_ms`` and
``clock_ms`` to stderr (``clock 200 180``)."""

from __future__ import annotations

import json
import sys
import time

HELLO = {"type": "hello", "name": "sleeper", "author": "tests", "version": "1", "protocol": 1}

requests = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        requests += 1
        sys.stderr.write(f"clock {msg['time_ms']} {msg['clock_ms']}\n")
        sys.stderr.flush()
        if requests == 3:
            time.sleep(0.35)
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
