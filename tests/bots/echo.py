"""Echoes every line; exits on "quit" or EOF.  ``--crlf`` ends replies with CRLF."""

from __future__ import annotations

import sys

ending = b"\r\n" if "--crlf" in sys.argv else b"\n"
out = sys.stdout.buffer
for line in sys.stdin.buffer:
    line = line.rstrip(b"\n")
    if line == b"quit":
        break
    out.write(line + ending)
    out.flush()
