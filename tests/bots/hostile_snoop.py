"""Looks for everything a bot must not see, reports it on stderr as one JSON line, and
then plays random legal actions.

The paths to try come in the environment: ``SNOOP_PATHS`` (separated by ``:``).
"""

from __future__ import annotations

import json
import os
import random
import sys

from protocol.sdk import run_bot


def readable(path: str) -> bool:
    try:
        if os.path.isdir(path):
            return bool(os.listdir(path))
        with open(path, "rb") as f:
            return bool(f.read(1))
    except OSError:
        return False


found = {
    "pid": os.getpid(),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "readable": [p for p in os.environ.get("SNOOP_PATHS", "").split(":") if p and readable(p)],
    "parent_cmdline": readable(f"/proc/{os.getppid()}/cmdline") and os.getppid() > 1,
    "env": sorted(os.environ),
}
print("SNOOP " + json.dumps(found), file=sys.stderr, flush=True)

run_bot(lambda request: random.choice(request.legal), name="snoop", author="tests", version="1")
