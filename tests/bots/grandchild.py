"""Forks a grandchild that ignores SIGTERM and holds stdout open.

Answers the first line with the grandchild's PID.  Then, with ``exit``, exits on the
next line (without answering); with ``idle``, idles forever (SIGTERM kills it).
"""

from __future__ import annotations

import os
import signal
import sys
import time

pid = os.fork()
if pid == 0:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    while True:
        time.sleep(3600)
sys.stdin.buffer.readline()
sys.stdout.buffer.write(b"%d\n" % pid)
sys.stdout.buffer.flush()
if sys.argv[1] == "exit":
    sys.stdin.buffer.readline()
    os._exit(0)
while True:
    time.sleep(3600)
