"""Duplicate single deals: a fast, low-variance measure of an engine against expert.

    PYTHONPATH=. python bench/bench_deals.py search --deals 400 --workers 2
    PYTHONPATH=. python bench/bench_deals.py hands ceiling search --set budget_ms=80
    PYTHONPATH=. python bench/bench_deals.py search --set level=2    # a strength level
    PYTHONPATH=. python bench/bench_deals.py search-sees-play search-sees-exchange

``search-sees-play`` is ``search`` with the card play of a player who sees the
opponent's hand, ``search-sees-exchange`` with that player's exchange decisions,
``search-sees-first`` with only his first stand or proposal as the non-dealer and
``search-sees-answer`` with only his answers as the dealer: where seeing the opponent's
hand pays (``hands`` sees it throughout).

Each deal starts from a seeded deck, dealer and score (both scores 0..4), and is played
twice with the seats swapped: the engine against expert, then expert against the engine.
A deal is worth the chance of winning the game from the scores it leaves
(:func:`engines.search.strategy.win_probability`), so the two plays of a deck sum to
1.0 for two equal players; the figure printed is the engine's mean over both plays
(50 % is expert's level) with its standard error.  Whole games are about five deals, so
an edge of ``e`` per deal is worth roughly ``5 e`` in games: the tuning measure behind
the engine's settings, confirmed by game matches (``bench/bench_search.py --h2h``).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arbiter.rules import Phase, State, deck_for, new_game
from engines.ceiling import hands_only_player, omniscient_player
from engines.expert import strategy as expert
from engines.greedy import strategy as greedy
from engines.inprocess import StatePlayer, choose_random, view_player
from engines.search.strategy import SearchEngine, win_probability

_JOB: dict[str, Any] = {}


def search_engine(settings: dict[str, Any]) -> SearchEngine:
    """The search engine with these settings (``level`` picks a strength level)."""
    options = dict(settings)
    level = options.pop("level", None)
    if level is None:
        return SearchEngine(**options)
    return SearchEngine.at_level(level, **options)


def _half_seeing(sees: str) -> StatePlayer:
    """``search``, but with the hands-only player's decisions in one part of the deal.

    ``sees`` is ``"play"`` (the card play is the exact play of a player who sees the
    opponent's hand), ``"exchange"`` (every exchange decision is the hands-only
    player's), ``"first"`` (only the non-dealer's first stand or proposal) or
    ``"answer"`` (only the dealer's answers): where seeing the opponent's hand pays.
    """
    search = view_player(search_engine(_JOB["search"]).choose)
    exchange = (Phase.PROPOSE, Phase.ANSWER, Phase.DISCARD)

    def seen(state: State) -> bool:
        if sees == "play":
            return state.phase == Phase.TRICK
        if sees == "first":
            return state.phase == Phase.PROPOSE and state.proposals == 0
        if sees == "answer":
            return state.phase == Phase.ANSWER
        return state.phase in exchange

    def play(state: State, seat: int, rng: random.Random) -> int:
        if seen(state):
            return hands_only_player(state, seat, rng)
        return search(state, seat, rng)

    return play


def _player(name: str) -> StatePlayer:
    if name == "search":
        return view_player(search_engine(_JOB["search"]).choose)
    if name.startswith("search-sees-"):
        return _half_seeing(name.removeprefix("search-sees-"))
    return {
        "ceiling": omniscient_player,
        "hands": hands_only_player,
        "expert": view_player(expert.choose),
        "greedy": view_player(greedy.choose),
        "random": view_player(choose_random),
    }[name]


def play_deal(players: tuple[StatePlayer, StatePlayer], seed: int, i: int, me: int) -> float:
    """Play deal ``i``; the chance that seat ``me`` then wins the game."""
    r = random.Random(f"deal/{seed}/{i}")
    scores = [r.randrange(5), r.randrange(5)]
    dealer = r.randrange(2)
    state = new_game(first_dealer=dealer)
    state.scores = scores
    state.deal(deck_for(seed, i, 1))
    rngs = (random.Random(f"{seed}/{i}/0"), random.Random(f"{seed}/{i}/1"))
    while not state.is_over() and state.phase != Phase.DEAL:
        seat = state.to_act
        state.apply_checked(seat, players[seat](state, seat, rngs[seat]))
    if state.is_over():
        return float(state.winner == me)
    return win_probability(state.scores[me], state.scores[1 - me], me != dealer, 5)


def _duplicate(i: int) -> float:
    """Deal ``i`` played both ways: the engine's mean value (0.5 = expert's level)."""
    a, b = _player(_JOB["name"]), _player("expert")
    seed = _JOB["seed"]
    return 0.5 * (play_deal((a, b), seed, i, 0) + play_deal((b, a), seed, i, 1))


def measure(name: str, deals: int, seed: int, workers: int, search: dict[str, Any]) -> list[float]:
    """The per-deal duplicate values of ``name`` against expert."""
    _JOB.update(name=name, seed=seed, search=search)
    if workers <= 1:
        return [_duplicate(i) for i in range(deals)]
    with multiprocessing.get_context("fork").Pool(workers) as pool:
        return pool.map(_duplicate, range(deals), chunksize=4)


def setting(text: str) -> tuple[str, Any]:
    """A ``--set KEY=VALUE`` search option, its value typed (bool, int or float)."""
    key, _, value = text.partition("=")
    if value in ("True", "False"):
        return key, value == "True"
    try:
        return key, int(value)
    except ValueError:
        return key, float(value)


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    names = ["search", "hands", "ceiling", "expert", "greedy", "random"]
    names += [f"search-sees-{part}" for part in ("play", "exchange", "first", "answer")]
    parser.add_argument("players", nargs="+", choices=names)
    parser.add_argument("--deals", type=int, default=400)
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(argv)
    search = dict(setting(t) for t in args.set)
    for name in args.players:
        start = time.perf_counter()
        values = measure(name, args.deals, args.seed, args.workers, search)
        n = len(values)
        mean = sum(values) / n
        sd = math.sqrt(sum((v - mean) ** 2 for v in values) / max(1, n - 1))
        label = name + (f" {search}" if name == "search" and search else "")
        print(
            f"{label}: {100 * mean:.2f} % per deal ± {100 * sd / math.sqrt(n):.2f} "
            f"(edge {100 * (mean - 0.5):+.2f} points; {n} duplicate deals, "
            f"{time.perf_counter() - start:.0f} s)",
            flush=True,
        )


if __name__ == "__main__":
    main()
