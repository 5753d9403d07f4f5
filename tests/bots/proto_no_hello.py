"""Protocol bot that reads the arbiter's hello and never answers it (it waits for
some other greeting); it exits at the end of its input."""

from __future__ import annotations

import sys

for _line in sys.stdin:
    pass
