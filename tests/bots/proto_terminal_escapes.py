"""Protocol bot that tries to take over the terminal of whoever reads the report:
its hello holds a raw escape sequence and a bidi override (so it is not valid JSON);
with the argument ``crash`` it writes them to stderr and exits instead."""

from __future__ import annotations

import sys

sys.stdin.readline()
if sys.argv[1:] == ["crash"]:
    sys.exit("cannot start\x1b[2J\x07\u202e")
sys.stdout.write('{"type":"hello","name":"x\x1b[2J\u202e","author":"a","version":"1"}\n')
sys.stdout.flush()
sys.stdin.readline()
