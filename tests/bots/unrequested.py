"""Echoes each line, and writes an extra line right after its reply (one write)."""

from __future__ import annotations

import sys

for line in sys.stdin.buffer:
    sys.stdout.buffer.write(line + b"extra\n")
    sys.stdout.buffer.flush()
