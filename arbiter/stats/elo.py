"""Elo formulas, score intervals and the likelihood of superiority.

**Score, Elo, interval, LOS.**  With per-unit scores xᵢ (N units) the score is
μ = mean(xᵢ) and the per-unit variance σ² = mean((xᵢ − μ)²) (the maximum-likelihood
variance, dividing by N, as cutechess, fastchess and fishtest do).  The standard error
of μ is σ/√N.  The Elo of a score is ``-400·log10(1/s − 1)``; the 95 % interval maps
μ ± 1.96·σ/√N (clamped to [0, 1]) through that function and the reported ± is half
its Elo span, which is asymmetric around the point estimate.  The likelihood of
superiority is LOS = Φ((μ − ½)/(σ/√N)).  The *normalized Elo* measures the
difference in standard deviations of one game, (μ − ½)/σ_game · 800/ln 10, where
σ_game = σ for games and √2·σ for pairs (a pair is the mean of two games).  It is the
scale of fishtest's normalized SPRT: it measures how hard the difference is to detect,
so on pairs it grows with the share of luck the pairing removed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist
from typing import Final

from arbiter.stats.pairs import Unit

__all__ = [
    "NELO_PER_T",
    "Z_95",
    "ScoreEstimate",
    "elo_from_score",
    "estimate_score",
    "los",
    "normalized_elo",
    "score_from_elo",
]

_NORMAL: Final = NormalDist()

Z_95: Final = _NORMAL.inv_cdf(0.975)
"""Two-sided 95 % quantile of the standard normal distribution (1.959964...)."""

NELO_PER_T: Final = 800 / math.log(10)
"""Normalized Elo per unit of (μ − ½)/σ_game: 347.43558..."""


def elo_from_score(score: float) -> float:
    """Logistic Elo difference of an expected score: ``-400·log10(1/s − 1)``.

    A score of 0 gives ``-math.inf`` and a score of 1 gives ``math.inf`` (there is no
    finite Elo for a perfect result).  A score outside [0, 1] or NaN raises ValueError.
    """
    if not 0.0 <= score <= 1.0:
        raise ValueError(f"a score must lie in [0, 1], got {score!r}")
    if score == 0.0:
        return -math.inf
    if score == 1.0:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo: float) -> float:
    """Expected score of a logistic Elo difference: ``1/(1 + 10^(−elo/400))``; ±inf give 1/0."""
    if math.isnan(elo):
        raise ValueError("an Elo difference cannot be NaN")
    if elo >= 0:
        return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))
    z = math.pow(10.0, elo / 400.0)  # the same formula, written so that it cannot overflow
    return z / (1.0 + z)


def los(mean: float, stderr: float) -> float:
    """Likelihood of superiority Φ((μ − ½)/σ_μ); with σ_μ = 0 it is 1, 0 or ½."""
    if stderr < 0 or math.isnan(stderr):
        raise ValueError(f"a standard error must be >= 0, got {stderr!r}")
    if stderr == 0.0:
        return 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return _NORMAL.cdf((mean - 0.5) / stderr)


def normalized_elo(mean: float, variance: float, unit: Unit) -> float:
    """Normalized Elo (μ − ½)/σ_game · 800/ln 10 of a per-``unit`` mean and variance.

    σ_game is √variance for games and √(2·variance) for pairs.  A mean of exactly ½
    gives 0; otherwise a zero variance gives ±inf.
    """
    if variance < 0:
        raise ValueError(f"a variance must be >= 0, got {variance!r}")
    sigma_game = math.sqrt(variance if unit is Unit.GAME else 2.0 * variance)
    if mean == 0.5:
        return 0.0
    if sigma_game == 0.0:
        return math.copysign(math.inf, mean - 0.5)
    return (mean - 0.5) / sigma_game * NELO_PER_T


def _half_span(lower: float, upper: float) -> float:
    if math.isinf(lower) or math.isinf(upper):
        return math.inf
    return (upper - lower) / 2.0


@dataclass(frozen=True, slots=True)
class ScoreEstimate:
    """Score of one engine against another, on an explicit unit, with its Elo."""

    unit: Unit
    """What one observation is: a game or a duplicate pair."""
    count: int
    """Number of units (games or pairs)."""
    mean: float
    """Mean score per unit, in [0, 1]."""
    variance: float
    """Per-unit variance of the score (dividing by ``count``)."""
    stderr: float
    """Standard error of ``mean``: √(variance/count)."""
    elo: float
    """Elo of ``mean`` (±inf for a score of 1 or 0)."""
    elo_lower: float
    """Elo of the lower end of the 95 % score interval."""
    elo_upper: float
    """Elo of the upper end of the 95 % score interval."""
    elo_error: float
    """Half the Elo span of the 95 % interval (the "±"); inf if a bound is infinite."""
    los: float
    """Likelihood of superiority Φ((μ − ½)/stderr)."""
    normalized_elo: float
    """(μ − ½)/σ_game · 800/ln 10."""


def estimate_score(scores: Sequence[float], unit: Unit) -> ScoreEstimate:
    """Score, 95 % Elo interval, LOS and normalized Elo of per-unit scores in [0, 1]."""
    n = len(scores)
    if n == 0:
        raise ValueError(f"no {unit.value} scores to estimate from")
    for x in scores:
        if not 0.0 <= x <= 1.0:
            raise ValueError(f"a {unit.value} score must lie in [0, 1], got {x!r}")
    mean = math.fsum(scores) / n
    variance = math.fsum((x - mean) ** 2 for x in scores) / n
    stderr = math.sqrt(variance / n)
    elo_lower = elo_from_score(max(0.0, mean - Z_95 * stderr))
    elo_upper = elo_from_score(min(1.0, mean + Z_95 * stderr))
    return ScoreEstimate(
        unit=unit,
        count=n,
        mean=mean,
        variance=variance,
        stderr=stderr,
        elo=elo_from_score(mean),
        elo_lower=elo_lower,
        elo_upper=elo_upper,
        elo_error=_half_span(elo_lower, elo_upper),
        los=los(mean, stderr),
        normalized_elo=normalized_elo(mean, variance, unit),
    )
