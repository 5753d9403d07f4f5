"""Never reads, never writes, never exits by itself."""

from __future__ import annotations

import time

while True:
    time.sleep(3600)
