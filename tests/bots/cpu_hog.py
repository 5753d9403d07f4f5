"""Spins on the CPU forever after the first line."""

from __future__ import annotations

import sys

sys.stdin.buffer.readline()
n = 0
while True:
    n += 1
