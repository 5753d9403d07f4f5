"""On its first line, starts children (``fork``) or threads (``thread``) until the kernel
refuses one, then dies of that error; at most 500 (a test's safety net, were the cap gone)."""

from __future__ import annotations

import os
import sys
import threading
import time

sys.stdin.buffer.readline()
for _ in range(500):
    if sys.argv[1] == "thread":
        threading.Thread(target=time.sleep, args=(5,), daemon=True).start()
    elif os.fork() == 0:
        time.sleep(5)
        os._exit(0)
sys.exit("the kernel let 500 through")
