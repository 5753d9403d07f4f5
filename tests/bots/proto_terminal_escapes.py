"""Protocol bot that tries to take over the terminal of whoever reads the report
with a raw escape sequence and a bidi override.  With no argument they are in its
hello (so it is not valid JSON); with ``field`` it sends a field named after them in
its action; with ``crash`` it writes them to stderr and exits when asked to play."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "esc", "author": "tests", "version": "1", "protocol": 1}
NASTY = "\x1b[2J\x07\u202e"

mode = sys.argv[1] if len(sys.argv) > 1 else ""
sys.stdin.readline()
if not mode:
    sys.stdout.write('{"type":"hello","name":"x' + NASTY + '","author":"a","version":"1"}\n')
    sys.stdout.flush()
    sys.stdin.readline()
    sys.exit()
sys.stdout.write(json.dumps(HELLO) + "\n")
sys.stdout.flush()
for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] != "request":
        continue
    if mode == "crash":
        sys.exit("cannot play" + NASTY)
    reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0], NASTY: 1}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
