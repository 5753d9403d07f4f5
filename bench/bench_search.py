"""Benchmark of the search engine, and the engines' head-to-head figures.

    PYTHONPATH=. python bench/bench_search.py            # solver speed, samples per decision
    PYTHONPATH=. python bench/bench_search.py --h2h      # also the head-to-head matches

Prints double-dummy solves per second (cold: empty memo each time; warm: the memo
shared as in a search), then the determinisations per decision at the search budget,
by phase.  With ``--h2h`` it plays seeded in-process matches (game pairs on the same
decks, seats swapped): expert vs random, expert vs greedy, ceiling vs expert and
search vs expert.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from arbiter.rules import Phase, deck_for, new_game
from arbiter.view import observe
from engines import common
from engines.ceiling import omniscient_player
from engines.common import choose_random, dd_lead, play_match, view_player
from engines.expert import strategy as expert
from engines.greedy import strategy as greedy
from engines.search.strategy import DEFAULT_BUDGET_MS, SearchEngine


def bench_solver(n: int) -> None:
    """Print cold and warm double-dummy solves per second on random five-card deals."""
    rng = random.Random(1)
    deals = []
    for _ in range(n):
        cards = rng.sample(range(32), 11)
        a = sum(1 << c for c in cards[:5])
        b = sum(1 << c for c in cards[5:10])
        deals.append((a, b, cards[10] >> 3))
    start = time.perf_counter()
    for a, b, trump in deals:
        common._MEMOS.clear()
        dd_lead(a, b, trump)
    cold = n / (time.perf_counter() - start)
    common._MEMOS.clear()
    start = time.perf_counter()
    for a, b, trump in deals:
        dd_lead(a, b, trump)
    warm = n / (time.perf_counter() - start)
    print(f"double dummy, 5 cards each: {cold:,.0f} solves/s cold, {warm:,.0f} solves/s warm")


def bench_decisions(budget_ms: float, games: int) -> None:
    """Print samples and time per decision of the search engine, by phase."""
    engine = SearchEngine(budget_ms)
    rng = random.Random(0)
    per: dict[str, list[tuple[int, float]]] = {}
    for g in range(games):
        state = new_game(first_dealer=g % 2)
        deal = 0
        while not state.is_over():
            if state.phase == Phase.DEAL:
                deal += 1
                state.deal(deck_for(99, g, deal))
                continue
            seat = state.to_act
            if seat == 0:
                action = engine.choose(observe(state, 0), rng)
                if engine.stats.candidates > 1:
                    stats = (engine.stats.samples, engine.stats.elapsed_ms)
                    per.setdefault(state.phase.name.lower(), []).append(stats)
                state.apply_text(0, action)
            else:
                state.apply(expert.choose_state(state, 1))
    print(f"search at {budget_ms:g} ms per decision ({games} games against expert):")
    for phase, rows in sorted(per.items()):
        samples = sum(r[0] for r in rows) / len(rows)
        mean_ms = sum(r[1] for r in rows) / len(rows)
        worst = max(r[1] for r in rows)
        print(
            f"  {phase:8s} {len(rows):4d} decisions  {samples:7.1f} samples/decision  "
            f"{mean_ms:5.1f} ms mean  {worst:5.1f} ms max"
        )


def head_to_head(pairs: int, search_pairs: int, budget_ms: float, seed: int) -> None:
    """Print the in-process match results."""
    search = SearchEngine(budget_ms)
    matches = [
        ("expert", "random", view_player(expert.choose), view_player(choose_random), pairs),
        ("expert", "greedy", view_player(expert.choose), view_player(greedy.choose), pairs),
        ("ceiling", "expert", omniscient_player, view_player(expert.choose), pairs),
        (
            f"search@{budget_ms:g}ms",
            "expert",
            view_player(search.choose),
            view_player(expert.choose),
            search_pairs,
        ),
    ]
    for name_a, name_b, a, b, n in matches:
        start = time.perf_counter()
        wins, games = play_match(a, b, n, seed=seed)
        took = time.perf_counter() - start
        print(
            f"{name_a} vs {name_b}: {wins}/{games} games won = {100 * wins / games:.1f} % "
            f"({took:.0f} s)"
        )


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budget-ms", type=float, default=DEFAULT_BUDGET_MS)
    parser.add_argument("--solves", type=int, default=3000)
    parser.add_argument("--games", type=int, default=4, help="games for samples/decision")
    parser.add_argument("--h2h", action="store_true", help="also play the head-to-head matches")
    parser.add_argument("--pairs", type=int, default=100, help="game pairs per quick match")
    parser.add_argument("--search-pairs", type=int, default=100)
    parser.add_argument("--search-budget-ms", type=float, default=20.0)
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    bench_solver(args.solves)
    bench_decisions(args.budget_ms, args.games)
    if args.h2h:
        head_to_head(args.pairs, args.search_pairs, args.search_budget_ms, args.seed)


if __name__ == "__main__":
    main()
