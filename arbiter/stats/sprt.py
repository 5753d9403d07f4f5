"""The sequential probability ratio test on duplicate pairs.

**SPRT.**  :func:`sprt` is the generalized sequential probability ratio test used by
fishtest, applied to pair outcomes (trinomial: 0, ½, 1).  Under each hypothesis the
outcome distribution is the maximum-likelihood one subject to the hypothesis: a fixed
mean score (logistic Elo, the default) or a fixed normalized Elo.  The first is the
solution of a one-dimensional secular equation (M. Van den Bergh, "Comments on
Normalized Elo"); the second is found by fishtest's fixed-point iteration on the same
equation.  The log-likelihood ratio is LLR = N·Σ p̂ᵢ·ln(p1ᵢ/p0ᵢ); the test stops at
Wald's bounds ln(β/(1 − α)) and ln((1 − β)/α).  As in fishtest, an outcome never seen
is given a count of 0.001 so that the distributions stay strictly positive.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from typing import Final

from arbiter.stats.elo import NELO_PER_T, score_from_elo
from arbiter.stats.pairs import PAIR_VALUES, GameOutcome, PairCounts, group_units

__all__ = [
    "MAX_NORMALIZED_ELO",
    "SPRT_EPSILON",
    "EloModel",
    "Hypothesis",
    "SprtResult",
    "SprtState",
    "sprt",
    "sprt_bounds",
]

SPRT_EPSILON: Final = 1e-3
"""Count given to a pair outcome never observed (fishtest's regularisation)."""

MAX_NORMALIZED_ELO: Final = 200.0
"""Largest normalized Elo an SPRT hypothesis may state (practical tests use under 10)."""


class EloModel(Enum):
    """The scale on which SPRT hypotheses are stated."""

    LOGISTIC = "logistic"
    """Logistic Elo: the hypothesis fixes the expected score per game (the default)."""
    NORMALIZED = "normalized"
    """Normalized Elo: the hypothesis fixes (μ − ½)/σ_game · 800/ln 10."""


class Hypothesis(StrEnum):
    """The hypothesis an SPRT accepted."""

    H0 = "H0"
    """The Elo difference is ``elo0`` (the change is not an improvement)."""
    H1 = "H1"
    """The Elo difference is ``elo1``."""


@dataclass(frozen=True, slots=True)
class SprtResult:
    """State of a generalized SPRT."""

    llr: float
    """Log-likelihood ratio of H1 against H0."""
    lower: float
    """ln(β/(1 − α)): accept H0 at or below."""
    upper: float
    """ln((1 − β)/α): accept H1 at or above."""
    decision: Hypothesis | None
    """The accepted hypothesis, or None while the test goes on."""
    pairs: int
    """Number of pairs behind the LLR."""


def sprt_bounds(alpha: float = 0.05, beta: float = 0.05) -> tuple[float, float]:
    """Wald's bounds (ln(β/(1 − α)), ln((1 − β)/α)) for error rates α and β."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0):
        raise ValueError(f"alpha and beta must lie in (0, 1), got {alpha!r} and {beta!r}")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _secular(probs: Sequence[float], v: Sequence[float]) -> float:
    """The root x of Σ pᵢ·vᵢ/(1 + x·vᵢ) = 0 with every 1 + x·vᵢ > 0.

    The function decreases from +inf to −inf on that interval; safeguarded Newton.
    Needs min(v) < 0 < max(v) and every pᵢ > 0.
    """
    if not min(v) < 0.0 < max(v):
        raise ArithmeticError("the secular equation has no root")
    lo, hi = -1.0 / max(v), -1.0 / min(v)
    x = 0.0
    for _ in range(200):
        f = fp = 0.0
        for p, vi in zip(probs, v, strict=True):
            q = vi / (1.0 + x * vi)
            f += p * q
            fp -= p * q * q
        if f > 0.0:
            lo = x
        elif f < 0.0:
            hi = x
        else:
            return x
        new = x - f / fp
        if not lo < new < hi:
            new = (lo + hi) / 2.0
        if abs(new - x) <= 1e-15 * (1.0 + abs(x)):
            return new
        x = new
    return x


def _mle_mean(probs: Sequence[float], score: float) -> list[float]:
    """Most likely pair-outcome distribution with mean ``score``, given observed ``probs``."""
    v = [a - score for a in PAIR_VALUES]
    x = _secular(probs, v)
    return [p / (1.0 + x * vi) for p, vi in zip(probs, v, strict=True)]


def _mle_t(probs: Sequence[float], t: float) -> list[float]:
    """Most likely distribution with (μ − ½)/σ = t (fishtest's fixed-point iteration)."""
    mle = [1.0 / len(probs)] * len(probs)
    for _ in range(100):
        mu = sum(a * p for a, p in zip(PAIR_VALUES, mle, strict=True))
        sigma = math.sqrt(sum(p * (a - mu) ** 2 for a, p in zip(PAIR_VALUES, mle, strict=True)))
        v = [a - 0.5 - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0 for a in PAIR_VALUES]
        x = _secular(probs, v)
        new = [p / (1.0 + x * vi) for p, vi in zip(probs, v, strict=True)]
        done = max(abs(a - b) for a, b in zip(new, mle, strict=True)) < 1e-12
        mle = new
        if done:
            break
    return mle


def _llr(counts: PairCounts, elo0: float, elo1: float, model: EloModel) -> float:
    if counts.total == 0:
        return 0.0
    regular = [c if c > 0 else SPRT_EPSILON for c in (counts.lost, counts.split, counts.won)]
    n = math.fsum(regular)
    probs = [c / n for c in regular]
    if model is EloModel.LOGISTIC:
        p0 = _mle_mean(probs, score_from_elo(elo0))
        p1 = _mle_mean(probs, score_from_elo(elo1))
    else:
        # σ_game = √2·σ_pair, so a normalized Elo fixes (μ − ½)/σ_pair = √2·nelo/(800/ln 10).
        p0 = _mle_t(probs, math.sqrt(2.0) * elo0 / NELO_PER_T)
        p1 = _mle_t(probs, math.sqrt(2.0) * elo1 / NELO_PER_T)
    return n * math.fsum(p * math.log(b / a) for p, a, b in zip(probs, p0, p1, strict=True))


def _check_hypotheses(elo0: float, elo1: float, model: EloModel) -> None:
    if not (math.isfinite(elo0) and math.isfinite(elo1) and elo0 < elo1):
        raise ValueError(f"need finite elo0 < elo1, got {elo0!r} and {elo1!r}")
    if model is EloModel.NORMALIZED and max(-elo0, elo1) > MAX_NORMALIZED_ELO:
        # fishtest's fixed-point iteration stops converging near 245 on pairs.
        raise ValueError(
            f"normalized Elo hypotheses must lie within ±{MAX_NORMALIZED_ELO:g}, "
            f"got {elo0!r} and {elo1!r}"
        )


def sprt(
    pairs: PairCounts | Sequence[float],
    elo0: float,
    elo1: float,
    alpha: float = 0.05,
    beta: float = 0.05,
    model: EloModel = EloModel.LOGISTIC,
) -> SprtResult:
    """Generalized SPRT of H0: Elo = ``elo0`` against H1: Elo = ``elo1`` on duplicate pairs.

    ``pairs`` are the pair outcomes, as counts or as pair scores (0, 0.5, 1), for the
    engine under test.  The Elo is logistic by default, normalized with
    ``model=EloModel.NORMALIZED`` (then within ±``MAX_NORMALIZED_ELO``).  ValueError
    unless elo0 < elo1 and α, β lie in (0, 1).
    """
    _check_hypotheses(elo0, elo1, model)
    lower, upper = sprt_bounds(alpha, beta)
    counts = pairs if isinstance(pairs, PairCounts) else PairCounts.from_scores(pairs)
    llr = _llr(counts, elo0, elo1, model)
    decision = Hypothesis.H1 if llr >= upper else Hypothesis.H0 if llr <= lower else None
    return SprtResult(llr=llr, lower=lower, upper=upper, decision=decision, pairs=counts.total)


class SprtState:
    """An SPRT fed as results come in: pair scores, or games that complete pairs."""

    __slots__ = ("_counts", "_open", "_result", "alpha", "beta", "elo0", "elo1", "engine", "model")

    def __init__(
        self,
        elo0: float,
        elo1: float,
        alpha: float = 0.05,
        beta: float = 0.05,
        model: EloModel = EloModel.LOGISTIC,
        engine: str | None = None,
    ) -> None:
        _check_hypotheses(elo0, elo1, model)
        sprt_bounds(alpha, beta)
        self.elo0 = elo0
        self.elo1 = elo1
        self.alpha = alpha
        self.beta = beta
        self.model = model
        self.engine = engine
        """The engine under test; needed by :meth:`add_outcome`."""
        self._counts = [0, 0, 0]
        self._open: dict[str, GameOutcome] = {}
        self._result: SprtResult | None = None

    @property
    def counts(self) -> PairCounts:
        """Pair outcomes so far."""
        return PairCounts(*self._counts)

    def add_pair_score(self, score: float) -> None:
        """Count one complete pair scoring 0, 0.5 or 1 for the engine under test."""
        if score not in PAIR_VALUES:
            raise ValueError(f"a pair score must be 0, 0.5 or 1, got {score!r}")
        self._counts[int(score * 2)] += 1
        self._result = None

    def add_outcome(self, outcome: GameOutcome) -> bool:
        """Add a game; return True when it completed a pair and the pair was counted.

        The first game of a pair waits for its partner.  Unpaired games are not
        counted (the test is on pairs) and return False.  ValueError if the engine
        under test is unset or did not play, or if the pair is malformed.
        """
        if self.engine is None:
            raise ValueError("add_outcome needs the engine under test (engine=...)")
        score = outcome.score_of(self.engine)
        if outcome.pair_id is None:
            return False
        first = self._open.pop(outcome.pair_id, None)
        if first is None:
            self._open[outcome.pair_id] = outcome
            return False
        group_units([first, outcome])
        self.add_pair_score((first.score_of(self.engine) + score) / 2.0)
        return True

    def result(self) -> SprtResult:
        """The LLR, bounds and decision for the pairs so far."""
        if self._result is None:
            self._result = sprt(
                self.counts, self.elo0, self.elo1, self.alpha, self.beta, self.model
            )
        return self._result
