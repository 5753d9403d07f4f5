"""Ignores SIGTERM and stdin EOF; answers "ready" to the first line, then idles."""

from __future__ import annotations

import signal
import sys
import time

signal.signal(signal.SIGTERM, signal.SIG_IGN)
sys.stdin.buffer.readline()
sys.stdout.buffer.write(b"ready\n")
sys.stdout.buffer.flush()
while True:
    time.sleep(3600)
