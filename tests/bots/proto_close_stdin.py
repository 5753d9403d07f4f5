"""Protocol bot that plays the first legal action, but on its second request closes
its stdin before replying, then keeps running: the arbiter's next notice to it fails."""

from __future__ import annotations

import json
import os
import sys
import time

HELLO = {"type": "hello", "name": "deaf", "author": "tests", "version": "1", "protocol": 1}

requests = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        requests += 1
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
        if requests == 2:
            os.close(0)
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
            while True:
                time.sleep(3600)
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
