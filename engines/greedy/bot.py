"""The greedy engine as a protocol bot: ``python engines/greedy/bot.py``.

Also runnable as ``python -m engines.greedy.bot``.  The strategy itself is in
:mod:`engines.greedy.strategy` (see its docstring); this file only wires it to the
SDK.
"""

from __future__ import annotations

import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engines import seeded_rng
from engines.greedy.strategy import choose
from protocol.messages import Request
from protocol.sdk import run_bot

__all__ = ["main"]


def main() -> None:
    """Serve requests on stdin/stdout until the arbiter says quit."""
    rng = seeded_rng("greedy")

    def answer(request: Request) -> str:
        return choose(request.view, rng)

    run_bot(answer, name="greedy", author="ecarte-arena", version="1.0")


if __name__ == "__main__":
    main()
