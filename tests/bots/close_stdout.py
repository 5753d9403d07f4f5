"""Closes stdout on the first line and keeps running."""

from __future__ import annotations

import os
import sys
import time

sys.stdin.buffer.readline()
os.close(1)
while True:
    time.sleep(3600)
