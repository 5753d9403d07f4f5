"""Answers any line with one 10 MB line (written in 1 MB pieces), then sleeps."""

from __future__ import annotations

import sys
import time

sys.stdin.buffer.readline()
out = sys.stdout.buffer
for _ in range(10):
    out.write(b"x" * 1_000_000)
    out.flush()
out.write(b"\n")
out.flush()
time.sleep(3600)
