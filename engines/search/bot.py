"""The search engine as a protocol bot: ``python engines/search/bot.py``.

Also runnable as ``python -m engines.search.bot``.  The strategy is in
:mod:`engines.search.strategy` (see its docstring).  Each decision works within the
request's ``time_ms``, and within the budget set by the engine option ``budget_ms``
(from the arbiter's ``hello``) or the ``--budget-ms`` argument, whichever is smaller;
the default budget is :data:`engines.search.strategy.DEFAULT_BUDGET_MS`.  The option
``level`` (1 to 5, or ``--level``; default 5, the full engine) picks a strength level of
:data:`engines.search.strategy.LEVELS`: how many samples a decision takes and how
surely the best action is chosen, the budget staying the time limit.  Under a game
clock each decision also keeps within a share of the time left.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

if __package__ in (None, ""):  # run as a script: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from engines import seeded_rng
from engines.search.strategy import DEFAULT_BUDGET_MS, LEVELS, SearchEngine
from protocol.messages import OptionValue, Request
from protocol.sdk import run_bot

__all__ = ["main"]


def main(argv: list[str] | None = None) -> None:
    """Serve requests on stdin/stdout until the arbiter says quit."""
    parser = argparse.ArgumentParser(description="Écarté search engine (protocol bot)")
    parser.add_argument(
        "--budget-ms",
        type=float,
        default=DEFAULT_BUDGET_MS,
        help="time limit per decision in ms, at every level (default %(default)s)",
    )
    parser.add_argument(
        "--level",
        type=int,
        choices=sorted(LEVELS),
        help="strength level: 1 (about greedy) to 5 (the full engine, the default)",
    )
    args = parser.parse_args(argv)
    engine = SearchEngine(args.budget_ms)
    if args.level is not None:
        engine.set_level(args.level)
    rng = seeded_rng("search")

    def hello(options: dict[str, OptionValue]) -> None:
        level = options.get("level")
        if isinstance(level, int) and not isinstance(level, bool) and level in LEVELS:
            engine.set_level(level)
        elif level is not None:
            print(f"search: ignoring option level={level!r} (not 1..5)", file=sys.stderr)
        budget = options.get("budget_ms")
        if isinstance(budget, int | float) and not isinstance(budget, bool) and budget > 0:
            engine.budget_ms = float(budget)

    def answer(request: Request) -> str:
        return engine.choose(request.view, rng, time_ms=request.time_ms, clock_ms=request.clock_ms)

    run_bot(answer, name="search", author="ecarte-arena", version="1.0", on_hello=hello)


if __name__ == "__main__":
    main()
