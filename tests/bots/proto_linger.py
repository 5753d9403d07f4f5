"""Protocol bot that plays random legal actions but lingers for 30 s after ``quit``
(it exits on SIGTERM, as most programs do)."""

from __future__ import annotations

import random
import time

from protocol.sdk import run_bot

run_bot(lambda request: random.choice(request.legal), name="linger", author="tests", version="1")
time.sleep(30)
