"""The search engine's choices on fixed positions, as a golden file.

``tests/golden/search-choices.txt`` lists, for positions taken from seeded games
between expert players (every exchange decision and some card plays), the seat's
view in short and the action the search engine chooses there with a frozen clock and
fixed sample counts (so the run is deterministic and fast).  A change to the engine's
choices shows up as a readable diff; regenerate only with the explicit command::

    python -m tests.golden_search --regenerate
"""

from __future__ import annotations

import argparse
import random

from arbiter.rules import Phase, State, deck_for, new_game
from arbiter.view import observe
from engines.expert_policy import choose_state
from engines.search.strategy import SearchEngine
from tests.golden import GOLDEN_DIR

GOLDEN_FILE = GOLDEN_DIR / "search-choices.txt"
SAMPLES = (24, 48)
"""Determinisations per card-play and per exchange decision."""


def positions(games: int = 3, seed: int = 41) -> list[tuple[State, int]]:
    """Every exchange decision and every third card play of seeded expert games."""
    out = []
    for g in range(games):
        state = new_game(first_dealer=g % 2)
        deal = plays = 0
        while not state.is_over():
            if state.phase == Phase.DEAL:
                deal += 1
                state.deal(deck_for(seed, g, deal))
                continue
            seat = state.to_act
            if state.phase != Phase.TRICK or (plays := plays + 1) % 3 == 0:
                if len(state.legal_actions()) > 1:
                    out.append((state.clone(), seat))
            state.apply(choose_state(state, seat))
    return out


def render() -> str:
    """The golden file's text: one line per position."""
    engine = SearchEngine(clock=lambda: 0.0, max_samples=SAMPLES[0], exchange_samples=SAMPLES[1])
    lines = [f"# search engine choices, frozen clock, samples {SAMPLES}", ""]
    for i, (state, seat) in enumerate(positions()):
        view = observe(state, seat)
        action = engine.choose(view, random.Random(i))
        events = " ".join(
            type(e).__name__ for e in view.events if type(e).__name__ != "DealStarted"
        )
        lines.append(
            f"{i:3d} {view.phase:8s} seat {seat} dealer {view.dealer} scores {view.scores} "
            f"hand {' '.join(view.hand)} turnup {view.turnup} "
            f"stock {view.stock} trick {' '.join(view.trick) or '-'} [{events}] -> {action}"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    """Rewrite the golden file (only with ``--regenerate``)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite the golden file")
    args = parser.parse_args()
    if not args.regenerate:
        parser.error("pass --regenerate to rewrite the golden file")
    GOLDEN_FILE.write_text(render())
    print(f"wrote {GOLDEN_FILE}")


if __name__ == "__main__":
    main()
