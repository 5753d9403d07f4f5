"""Answers each line with "hello world", written in three pieces 20 ms apart."""

from __future__ import annotations

import sys
import time

for _ in sys.stdin.buffer:
    for piece in (b"hel", b"lo wor", b"ld\n"):
        sys.stdout.buffer.write(piece)
        sys.stdout.buffer.flush()
        time.sleep(0.02)
