"""Writes 100 MB to stderr before its first reply, then echoes."""

from __future__ import annotations

import sys

err = sys.stderr.buffer
for _ in range(100):
    err.write(b"e" * 1_048_575 + b"\n")
err.flush()
for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line)
    sys.stdout.buffer.flush()
