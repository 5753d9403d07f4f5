"""random — the bundled baseline bot: a uniformly random legal action at every decision.

Strategy: none.  Each request is answered with ``rng.choice(request.legal)``, every
legal action equally likely (so a discard is drawn from all allowed subsets of the
hand).  The generator is reseeded at each ``new_game`` from (seed, game id), so a
game's choices depend only on the seed and what the bot sees in that game, not on
earlier games or restarts.  The seed is ``--seed N`` if given, else the ``seed``
engine option from the arbiter's ``hello``, else 0.

Run as ``python engines/random/bot.py [--seed N]`` or ``python -m engines.random.bot``.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

if not __package__:  # run as a script: make the repository's packages importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from protocol.messages import NewGame, OptionValue, Request, ToBot
from protocol.sdk import run_bot

DEFAULT_SEED = 0
"""Seed used when neither ``--seed`` nor the ``seed`` option is given."""


class RandomPlayer:
    """Chooses uniformly among the legal actions with a per-game seeded generator."""

    def __init__(self, seed: int | None = None) -> None:
        """``seed`` from the command line wins over the ``seed`` engine option."""
        self.cli_seed = seed
        """Seed given on the command line, if any."""
        self.seed = DEFAULT_SEED if seed is None else seed
        """Seed in force."""
        self.rng = random.Random(self.seed)
        """The generator, reseeded for each game."""

    def hello(self, options: dict[str, OptionValue]) -> None:
        """Take the ``seed`` option unless a seed came from the command line."""
        value = options.get("seed")
        if self.cli_seed is None and isinstance(value, int) and not isinstance(value, bool):
            self.seed = value
        self.rng = random.Random(self.seed)

    def notice(self, message: ToBot) -> None:
        """Reseed at the start of each game."""
        if isinstance(message, NewGame):
            self.rng = random.Random(f"{self.seed}/{message.game}")

    def choose(self, request: Request) -> str:
        """A uniformly random legal action."""
        return self.rng.choice(request.legal)


def main(argv: list[str] | None = None) -> None:
    """Parse ``--seed`` and play until the arbiter says ``quit``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seed", type=int, default=None, help="random seed (default: option)")
    args = parser.parse_args(argv)
    player = RandomPlayer(args.seed)
    run_bot(
        player.choose,
        name="random",
        author="ecarte-arena",
        version="1.0",
        on_hello=player.hello,
        on_notice=player.notice,
    )


if __name__ == "__main__":
    main()
