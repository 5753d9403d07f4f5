"""Benchmark of the search engine, and the engines' head-to-head figures.

    PYTHONPATH=. python bench/bench_search.py            # solver speed, samples per decision
    PYTHONPATH=. python bench/bench_search.py --h2h      # also the head-to-head matches
    PYTHONPATH=. python bench/bench_search.py --h2h --only-search --search-pairs 250 \
        --workers 2 --search-budget-ms 80                # search vs expert only, 2 processes

Prints double-dummy solves per second (cold: empty memo each time; warm: the memo
shared as in a search), then the determinisations per decision at the search budget,
by phase.  With ``--h2h`` it plays seeded in-process matches (game pairs on the same
decks, seats swapped): expert vs random, expert vs greedy, ceiling vs expert,
hands vs expert (the yardstick that sees the opponent's hand, not the stock) and search
vs expert, each with its likelihood of superiority (LOS) and Elo difference.
``--max-samples`` and ``--set KEY=VALUE`` (any :class:`SearchEngine` keyword, e.g.
``--set exchange_samples=400 --search-budget-ms 1e9`` for a run bounded by sample
counts, not time, or ``--set level=3`` for a strength level) tune the searcher.
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

from bench_deals import search_engine, setting

from arbiter.rules import Phase, deck_for, new_game
from arbiter.view import observe
from engines import double_dummy, expert_policy
from engines.ceiling import hands_only_player, omniscient_player
from engines.double_dummy import dd_lead
from engines.expert import strategy as expert
from engines.greedy import strategy as greedy
from engines.inprocess import StatePlayer, choose_random, play_inprocess_game, view_player
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
        double_dummy._MEMOS.clear()
        dd_lead(a, b, trump)
    cold = n / (time.perf_counter() - start)
    double_dummy._MEMOS.clear()
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
                state.apply(expert_policy.choose_state(state, 1))
    print(f"search at {budget_ms:g} ms per decision ({games} games against expert):")
    for phase, rows in sorted(per.items()):
        samples = sum(r[0] for r in rows) / len(rows)
        mean_ms = sum(r[1] for r in rows) / len(rows)
        worst = max(r[1] for r in rows)
        print(
            f"  {phase:8s} {len(rows):4d} decisions  {samples:7.1f} samples/decision  "
            f"{mean_ms:5.1f} ms mean  {worst:5.1f} ms max"
        )


def los(wins: int, games: int) -> float:
    """Likelihood of superiority: P(a stronger than b) given the wins (no draws)."""
    losses = games - wins
    if games == 0:
        return 0.5
    return 0.5 * (1.0 + math.erf((wins - losses) / math.sqrt(2.0 * games)))


def elo(score: float) -> float:
    """Elo difference that a score (0..1) stands for."""
    score = min(max(score, 1e-6), 1 - 1e-6)
    return -400.0 * math.log10(1.0 / score - 1.0)


_JOB: dict[str, Any] = {}


def _player(name: str) -> StatePlayer:
    if name == "search":
        engine = search_engine(_JOB["search"])
        return view_player(engine.choose)
    if name == "ceiling":
        return omniscient_player
    if name == "hands":
        return hands_only_player
    return {
        "expert": view_player(expert.choose),
        "random": view_player(choose_random),
        "greedy": view_player(greedy.choose),
    }[name]


def _pair(g: int) -> int:
    """Play game pair ``g`` of the current job; returns the games won by player a."""
    a, b = _player(_JOB["a"]), _player(_JOB["b"])
    seed, fd = _JOB["seed"], g % 2
    wins = int(play_inprocess_game((a, b), seed, g, fd) == 0)
    return wins + int(play_inprocess_game((b, a), seed, g, fd) == 1)


def match(
    a: str, b: str, pairs: int, seed: int, workers: int, search: dict[str, Any]
) -> tuple[int, int]:
    """Play ``pairs`` duplicate game pairs a vs b over ``workers`` processes."""
    _JOB.update(a=a, b=b, seed=seed, search=search)
    if workers <= 1:
        return sum(_pair(g) for g in range(pairs)), 2 * pairs
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers) as pool:
        wins = sum(pool.map(_pair, range(pairs), chunksize=1))
    return wins, 2 * pairs


def head_to_head(
    pairs: int,
    search_pairs: int,
    search: dict[str, Any],
    seed: int,
    workers: int,
    only_search: bool,
) -> None:
    """Print the in-process match results (with LOS and Elo)."""
    budget = search.get("budget_ms", DEFAULT_BUDGET_MS)
    cap = search.get("max_samples")
    label = f"search@{budget:g}ms" + (f"/{cap}" if cap else "")
    if "level" in search:
        label = f"search level {search['level']} (within {budget:g} ms)"
    matches = [
        ("expert", "random", pairs),
        ("expert", "greedy", pairs),
        ("ceiling", "expert", pairs),
        ("hands", "expert", pairs),
        ("search", "expert", search_pairs),
    ]
    if only_search:
        matches = matches[-1:]
    for name_a, name_b, n in matches:
        start = time.perf_counter()
        wins, games = match(name_a, name_b, n, seed, workers, search)
        took = time.perf_counter() - start
        score = wins / games
        shown = label if name_a == "search" else name_a
        print(
            f"{shown} vs {name_b}: {wins}/{games} games won = {100 * score:.1f} %, "
            f"LOS {100 * los(wins, games):.2f} %, Elo {elo(score):+.0f} ({took:.0f} s)",
            flush=True,
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
    parser.add_argument("--workers", type=int, default=1, help="processes for the matches")
    parser.add_argument("--only-search", action="store_true", help="only search vs expert")
    parser.add_argument("--max-samples", type=int, help="search: samples per decision cap")
    parser.add_argument(
        "--set", action="append", default=[], metavar="KEY=VALUE", help="search option"
    )
    args = parser.parse_args(argv)
    if not args.only_search:
        bench_solver(args.solves)
        bench_decisions(args.budget_ms, args.games)
    if args.h2h:
        search: dict[str, Any] = {"budget_ms": args.search_budget_ms}
        if args.max_samples:
            search["max_samples"] = args.max_samples
        search.update(setting(t) for t in args.set)
        head_to_head(
            args.pairs, args.search_pairs, search, args.seed, args.workers, args.only_search
        )


if __name__ == "__main__":
    main()
