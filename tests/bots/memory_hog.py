"""Allocates without bound on the first line (dies of MemoryError under RLIMIT_AS)."""

from __future__ import annotations

import sys

sys.stdin.buffer.readline()
hoard = []
while True:
    hoard.append(bytearray(16 * 1024 * 1024))
