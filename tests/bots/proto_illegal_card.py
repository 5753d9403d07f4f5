"""Protocol bot that plays legally except in the trick phase, where it plays a card
that is not in ``view.legal``: one of its own cards it may not play (a revoke) if
there is one, else a card it does not hold."""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "cheat", "author": "tests", "version": "1", "protocol": 1}
PACK = [rank + suit for suit in "SHDC" for rank in "789TAJQK"]

for line in sys.stdin:
    msg = json.loads(line)
    if msg["type"] == "hello":
        reply: dict[str, object] = HELLO
    elif msg["type"] == "request":
        view = msg["view"]
        legal: list[str] = view["legal"]
        action = legal[0]
        if view["phase"] == "trick":
            hand: list[str] = view["hand"]
            revokes = [c for c in hand if c not in legal]
            action = (revokes or [c for c in PACK if c not in hand])[0]
        reply = {"type": "action", "id": msg["id"], "action": action}
    elif msg["type"] == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
