"""Protocol bot that plays the first legal action but does not ignore what it does not
know (PROTOCOL.md §2.5), in one of three ways chosen by its argument:

* ``top``: exits on a top-level field it does not know;
* ``nested``: exits on a field of the view it does not know;
* ``type``: answers a message of a type it does not know as if it were a request.
"""

from __future__ import annotations

import json
import sys

HELLO = {"type": "hello", "name": "strict", "author": "tests", "version": "1", "protocol": 1}
FIELDS = {
    "hello": {"protocol", "options"},
    "new_game": {"game", "match", "game_number", "pair", "seat", "opponent", "first_dealer"}
    | {"rules", "time_ms", "clock_ms"},
    "deal": {"deal", "dealer", "hand", "turnup", "scores"},
    "event": {"event"},
    "hand": {"hand"},
    "request": {"id", "time_ms", "clock_ms", "view"},
    "deal_end": {"deal", "complete", "tricks", "points", "scores"},
    "game_end": {"game", "winner", "reason", "scores"},
    "forfeit": {"game", "reason", "detail"},
    "quit": set(),
}
VIEW = {"seat", "rules", "scores", "dealer", "deal", "phase", "to_act", "hand", "turnup"} | {
    "trump", "stock", "vulnerable", "exchanges", "discards", "tricks", "trick", "marked",
    "events", "legal",
}  # fmt: skip

mode = sys.argv[1]
last_id = 0
for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind not in FIELDS:
        if mode == "type":
            reply: dict[str, object] = {"type": "action", "id": last_id, "action": "stand"}
            sys.stdout.write(json.dumps(reply) + "\n")
            sys.stdout.flush()
        continue
    if mode == "top" and set(msg) - FIELDS[kind] - {"type"}:
        sys.exit(f"unexpected fields in {kind}: {sorted(set(msg) - FIELDS[kind])}")
    if kind == "hello":
        reply = HELLO
    elif kind == "request":
        if mode == "nested" and set(msg["view"]) - VIEW:
            sys.exit(f"unexpected view fields: {sorted(set(msg['view']) - VIEW)}")
        last_id = msg["id"]
        reply = {"type": "action", "id": msg["id"], "action": msg["view"]["legal"][0]}
    elif kind == "quit":
        break
    else:
        continue
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
