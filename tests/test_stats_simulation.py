"""Simulated tournaments: do the intervals cover, and does the SPRT keep its error rates?

The model: engine A is stronger than B by ``delta`` in logit units, and each duplicate
pair draws a deal-luck term of ±``LUCK`` shared by its two games.  Luck favours the seat
that holds the good cards: in the first game A sits there, in the second B does, so a
pair's luck cancels, as the cards of a duplicate pair do.  The true expected score of
one game is (σ(δ + L) + σ(δ − L))/2 and its Elo is the "true Elo" the intervals must
cover.  Everything is seeded; the bounds below leave about three binomial standard
deviations of room around the nominal rates, so a correct implementation passes with
any seed.
"""

from __future__ import annotations

import math
import random

import pytest

from arbiter.stats import (
    GameOutcome,
    Hypothesis,
    SprtState,
    elo_from_score,
    fit_ratings,
    head_to_head,
    points_per_deal,
    score_from_elo,
)

LUCK = 2.0
"""Deal luck in logit units: with it, the seat holding the good cards wins 88 % of even games."""


def sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def true_score(delta: float) -> float:
    return (sigmoid(delta + LUCK) + sigmoid(delta - LUCK)) / 2.0


def delta_for_elo(elo: float) -> float:
    """The logit strength whose true expected score has this Elo (bisection)."""
    target = score_from_elo(elo)
    lo, hi = -10.0, 10.0
    for _ in range(100):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if true_score(mid) < target else (lo, mid)
    return (lo + hi) / 2.0


def play_pair(rng: random.Random, delta: float) -> tuple[bool, bool]:
    """A's results in the pair's two games: A holds seat 0 first, then seat 1."""
    luck = LUCK if rng.random() < 0.5 else -LUCK  # > 0: seat 0 holds the good cards
    return rng.random() < sigmoid(delta + luck), rng.random() < sigmoid(delta - luck)


def simulate(rng: random.Random, delta: float, pairs: int) -> list[GameOutcome]:
    games = []
    for i in range(pairs):
        first, second = play_pair(rng, delta)
        games.append(GameOutcome(("A", "B"), 0 if first else 1, (0, 0), 1, f"p{i}"))
        games.append(GameOutcome(("B", "A"), 1 if second else 0, (0, 0), 1, f"p{i}"))
    return games


def binomial_slack(p: float, runs: int) -> float:
    return 3.0 * math.sqrt(p * (1.0 - p) / runs)


def test_intervals_cover_the_true_elo_and_pairs_are_narrower() -> None:
    rng = random.Random(20240601)
    delta = 0.3
    truth = elo_from_score(true_score(delta))  # about +22 Elo
    runs, pairs = 400, 100
    pair_cover = game_cover = narrower = 0
    for _ in range(runs):
        h = head_to_head(simulate(rng, delta, pairs), "A", "B")
        p, g = h.pair_estimate, h.game_estimate
        assert p is not None and h.luck_share is not None
        pair_cover += p.elo_lower <= truth <= p.elo_upper
        game_cover += g.elo_lower <= truth <= g.elo_upper
        narrower += p.elo_error < g.elo_error
    # Pairs are the independent unit: nominal 95 % coverage.
    assert 0.91 <= pair_cover / runs <= 0.99
    # Games in a pair are negatively correlated here (the luck cancels), so treating
    # games as independent overstates the variance: the game interval over-covers.
    assert game_cover / runs >= 0.95
    assert narrower / runs >= 0.95


@pytest.mark.slow
def test_bootstrap_rating_intervals_cover_the_true_elo() -> None:
    rng = random.Random(7)
    delta = 0.5
    truth = elo_from_score(true_score(delta))  # about +37 Elo
    runs = 200
    cover = 0
    for run in range(runs):
        games = simulate(rng, delta, 200)
        row = fit_ratings(games, anchor="B", bootstrap=200, seed=run).row("A")
        assert row.lower is not None and row.upper is not None
        cover += row.lower <= truth <= row.upper
    # Nominal 95 %, less 3 binomial sd at 200 runs (4.6 %).  The percentile bootstrap
    # under-covers a little on small samples (measured here: 91 % with 60 pairs and 150
    # resamples, 94.5 % with 200 pairs), hence 200 pairs per run.
    assert 0.95 - binomial_slack(0.95, runs) <= cover / runs <= 1.0


def test_points_per_deal_interval_covers_the_true_margin() -> None:
    # Per deal, the luck decides who holds the good cards (the same cards in both games
    # of a pair).  A wins a deal with 80 % holding them and 30 % without; the deal's
    # winner scores 1 point, or 2 with probability 0.2.  True margin for A per deal:
    # 1.2·(½(2·0.8 − 1) + ½(2·0.3 − 1)) = 1.2·0.1 = 0.12.
    rng = random.Random(99)
    truth = 0.12
    runs, pairs = 400, 60
    cover = 0
    for _ in range(runs):
        games = []
        for i in range(pairs):
            deals = rng.randint(3, 9)
            a_good = [rng.random() < 0.5 for _ in range(deals)]  # A holds them in game 1
            for seat_a, holds in ((0, a_good), (1, [not h for h in a_good])):
                margins = []
                for good in holds:
                    points = 2 if rng.random() < 0.2 else 1
                    a_wins = rng.random() < (0.8 if good else 0.3)
                    margin_a = points if a_wins else -points
                    margins.append(margin_a if seat_a == 0 else -margin_a)
                engines = ("A", "B") if seat_a == 0 else ("B", "A")
                winner = 0 if sum(margins) > 0 else 1
                games.append(
                    GameOutcome(
                        engines, winner, (0, 0), deals, f"p{i}", deal_margins=tuple(margins)
                    )
                )
        estimate = points_per_deal(games, "A", "B").pair_estimate
        assert estimate is not None
        cover += estimate.lower <= truth <= estimate.upper
    assert 0.91 <= cover / runs <= 0.99


@pytest.mark.slow
@pytest.mark.parametrize(
    ("true_elo", "wrong"),
    [
        pytest.param(0.0, Hypothesis.H1, id="H0-true"),
        pytest.param(40.0, Hypothesis.H0, id="H1-true"),
    ],
)
def test_sprt_error_rates(true_elo: float, wrong: Hypothesis) -> None:
    # SPRT(0, 40) on logistic Elo with α = β = 0.05.  Wald's bounds are approximate
    # (the LLR overshoots them), which usually makes the real error rates a little
    # smaller than nominal; allow 3 binomial sd above.
    rng = random.Random(int(true_elo) + 5)
    delta = delta_for_elo(true_elo)
    runs = 300
    errors = undecided = 0
    for _ in range(runs):
        state = SprtState(0.0, 40.0, alpha=0.05, beta=0.05)
        for _ in range(4000):
            first, second = play_pair(rng, delta)
            state.add_pair_score((first + second) / 2.0)
            decision = state.result().decision
            if decision is not None:
                errors += decision is wrong
                break
        else:
            undecided += 1
    assert undecided == 0
    assert errors / runs <= 0.05 + binomial_slack(0.05, runs)
