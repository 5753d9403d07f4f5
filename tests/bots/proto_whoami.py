"""Protocol bot that reports who it runs as, then plays random legal actions.

``proto_whoami.py REPORT_DIR [SECRET]``: before its hello it writes
``REPORT_DIR/whoami-PID.json`` with its uid, gid, groups and effective capabilities,
whether it could open ``SECRET`` (an errno name or "read"), and leaves a set-user-ID
copy of itself next to the report (or says why it could not), as a hostile bot would
for someone else to run.
"""

from __future__ import annotations

import errno
import json
import os
import random
import shutil
import sys

from protocol.messages import Request
from protocol.sdk import run_bot

where = sys.argv[1]
report: dict[str, object] = {
    "uid": os.getuid(),
    "gid": os.getgid(),
    "groups": sorted(os.getgroups()),
}
with open("/proc/self/status") as status:
    for line in status:
        if line.startswith("CapEff:"):
            report["cap_eff"] = int(line.split()[1], 16)
if len(sys.argv) > 2:
    try:
        with open(sys.argv[2]) as f:
            f.read()
        report["secret"] = "read"
    except OSError as exc:
        report["secret"] = errno.errorcode[exc.errno or 0]
planted = os.path.join(where, f"planted-{os.getpid()}")
try:
    shutil.copy(sys.argv[0], planted)
    os.chmod(planted, 0o4755)
except OSError as exc:
    report["planted"] = errno.errorcode[exc.errno or 0]
try:
    with open(os.path.join(where, f"whoami-{os.getpid()}.json"), "w") as f:
        json.dump(report, f)
except OSError as exc:
    print(f"cannot report: {exc}", file=sys.stderr)


def play(request: Request) -> str:
    return random.choice(request.legal)


run_bot(play, name="whoami", author="tests", version="1")
