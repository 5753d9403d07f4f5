"""Random-playout throughput of the rules module, on one core.

A deal is played from the shuffle to its score by uniformly random legal actions,
generating the legal actions at every step.  Next to it, a floor measured in the
same run: the same number of shuffles and random choices with no rules at all (the
cost of the randomness alone), so a slow machine or a noisy run is visible.

    python bench/bench_rules.py [--deals N] [--repeat R]
"""

from __future__ import annotations

import argparse
import random
import time

from arbiter.rules import Phase, Rules, make_rules, new_game


def playout(rules: Rules, deals: int, seed: int) -> tuple[float, int]:
    """Play ``deals`` random deals; returns (seconds, actions applied)."""
    rng = random.Random(seed)
    rnd = rng.random
    shuffle = rng.shuffle
    deck = list(range(32))
    actions = 0
    t0 = time.perf_counter()
    for i in range(deals):
        st = new_game(rules, i & 1)
        shuffle(deck)
        st.deal(deck)
        while st.phase != Phase.DEAL and st.phase != Phase.GAME_OVER:
            legal = st.legal_actions()
            # Uniform choice without random.choice's overhead.
            st.apply(legal[int(rnd() * len(legal))])
            actions += 1
    return time.perf_counter() - t0, actions


def floor(deals: int, actions: int, seed: int) -> float:
    """Seconds for the same shuffles and random draws without the rules."""
    rng = random.Random(seed)
    rnd = rng.random
    shuffle = rng.shuffle
    deck = list(range(32))
    legal = [0, 1, 2, 3, 4]
    per_deal = actions // deals
    t0 = time.perf_counter()
    for _ in range(deals):
        shuffle(deck)
        for _ in range(per_deal):
            legal[int(rnd() * len(legal))]
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description="random-playout throughput of the rules")
    parser.add_argument("--deals", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for name, rules in (("default", make_rules()), ("cavendish", make_rules("cavendish"))):
        best = float("inf")
        actions = 0
        for r in range(args.repeat):
            seconds, actions = playout(rules, args.deals, seed=r)
            best = min(best, seconds)
        base = min(floor(args.deals, actions, seed=r) for r in range(args.repeat))
        rate = args.deals / best
        print(
            f"{name:10s} {rate:10,.0f} deals/s  {actions / args.deals:5.1f} actions/deal  "
            f"{best / actions * 1e6:5.2f} us/action   floor (randomness only): "
            f"{args.deals / base:10,.0f} deals/s   target 20,000 deals/s: "
            f"{'met' if rate >= 20_000 else 'NOT met'}"
        )


if __name__ == "__main__":
    main()
