"""Protocol bot that forks a grandchild which ignores SIGTERM and holds stdout open,
plays the first legal action twice, and exits (code 0, no reply) on its third
request, in the middle of the first deal.  It writes ``grandchild PID`` to stderr."""

from __future__ import annotations

import json
import os
import signal
import sys
import time

HELLO = {"type": "hello", "name": "forker", "author": "tests", "version": "1", "protocol": 1}

pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)
sys.stderr.write(f"grandchild {pid}\n")
sys.stderr.flush()
requests = 0
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        requests += 1
        if requests == 3:
            os._exit(0)
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
