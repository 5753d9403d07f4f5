"""Answers the first line with "bye", then dies: ``crash.py 3`` exits with code 3,
``crash.py segv`` kills itself with SIGSEGV."""

from __future__ import annotations

import os
import signal
import sys

sys.stdin.buffer.readline()
sys.stdout.buffer.write(b"bye\n")
sys.stdout.buffer.flush()
if sys.argv[1] == "segv":
    os.kill(os.getpid(), signal.SIGSEGV)
sys.exit(int(sys.argv[1]))
