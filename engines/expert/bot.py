"""The expert engine as a protocol bot: ``python engines/expert/bot.py``.

Also runnable as ``python -m engines.expert.bot``.  The strategy itself is in
:mod:`engines.expert.strategy` (see its docstring); this file only wires it to the
SDK.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engines import seeded_rng
from engines.expert.strategy import choose
from protocol.messages import Request
from protocol.sdk import run_bot

__all__ = ["main"]


def main() -> None:
    """Serve requests on stdin/stdout until the arbiter says quit."""
    rng = seeded_rng("expert")

    def answer(request: Request) -> str:
        return choose(request.view, rng)

    run_bot(answer, name="expert", author="ecarte-arena", version="1.0")


if __name__ == "__main__":
    main()
