"""Statistics of a tournament: Elo, intervals, duplicate pairs, joint ratings, SPRT.

Everything here is pure: lists of :class:`GameOutcome` in, frozen result values out.

**Units.**  A game has a winner, so one game scores 1 or 0 for an engine.  Games are
played in *duplicate pairs*: the same deals twice, seats swapped.  The pair scores
(g1 + g2)/2 ∈ {0, ½, 1} and is the independent unit, because the luck of the deal
cancels between its two games (whoever held the good cards in game one gives them
to the opponent in game two).  Every estimate says which unit it was computed on
(:class:`Unit`); nothing ever guesses "pairs or games" from the length of a vector.
A pair whose partner game is missing (an *incomplete* pair) is left out of the pair
figures and counted apart; unpaired games (``pair_id`` None) only enter the game
figures.

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

**Luck share.**  On the complete pairs the variance of the mean is estimated twice:
from the pairs (σ²_pair/N) and as if the 2N games were independent (σ²_game/2N).
Their ratio r is the fraction of games the pairs need for the same interval width
(``games_needed_ratio``); ``luck_share`` = 1 − r is the share of the single-game
variance that the pairing removed.  It can be negative if pairs are more often
2-0 or 0-2 than independent games would be.

**Points per deal.**  The mean point margin per deal is a ratio ΣMᵢ/ΣDᵢ of the
margins Mᵢ and deal counts Dᵢ of the units (pairs, or single games).  Its variance is
the classical linearised ratio-estimator variance (Cochran, *Sampling Techniques*,
§6.3) with the small-sample factor n/(n − 1): Var(R̂) = n/(n − 1)·Σ(Mᵢ − R̂·Dᵢ)²/(ΣDᵢ)².
It weights each deal equally (a long game counts more than a short one), which is the
quantity asked, and it stays correct when the deals inside a unit are correlated.

**Joint ratings.**  With many engines the Elo of each pairing in isolation is not a
rating: :func:`fit_ratings` fits the Bradley–Terry model P(i beats j) =
1/(1 + 10^((Rⱼ − Rᵢ)/400)) to all games at once by maximum likelihood, as Ordo and
BayesElo do.  The log-likelihood is concave; it is maximised by Newton's method with
a step-halving line search (a few iterations, where the MM algorithm would need
hundreds once a rating is extreme).  An engine that won, or lost, every game has no
finite maximum: each pairing of engines that met receives ``prior_draws`` virtual
drawn games (half a win each way), by default 0.01 games.  That keeps every rating
finite (10 wins out of 10 rate about 1300 Elo above the loser) and moves ordinary
ratings very little (0.06 Elo for a 30-10 score over 40 games).  ``prior_draws=0``
gives the plain fit, which raises ValueError when it has no finite maximum.  The
prior only links engines that actually met, so engines in separate groups that never
met (directly or through others) cannot be rated on one scale and raise ValueError.
Ratings are anchored at a named engine (rating 0) or at a pool average of 0.  The
95 % intervals come from a seeded percentile bootstrap that resamples the independent
units - whole pairs, and unpaired games as units of one - and refits each resample.

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
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum, StrEnum
from statistics import NormalDist
from typing import Final

__all__ = [
    "DEFAULT_PRIOR_DRAWS",
    "MAX_NORMALIZED_ELO",
    "Z_95",
    "CrossCell",
    "Crosstable",
    "EloModel",
    "GameOutcome",
    "HeadToHead",
    "Hypothesis",
    "MarginEstimate",
    "PairCounts",
    "PointsPerDeal",
    "RatingRow",
    "RatingTable",
    "ScoreEstimate",
    "SprtResult",
    "SprtState",
    "Unit",
    "crosstable",
    "elo_from_score",
    "estimate_score",
    "fault_summary",
    "fit_ratings",
    "head_to_head",
    "los",
    "normalized_elo",
    "points_per_deal",
    "score_from_elo",
    "sprt",
    "sprt_bounds",
]

_NORMAL: Final = NormalDist()

Z_95: Final = _NORMAL.inv_cdf(0.975)
"""Two-sided 95 % quantile of the standard normal distribution (1.959964...)."""

NELO_PER_T: Final = 800 / math.log(10)
"""Normalized Elo per unit of (μ − ½)/σ_game: 347.43558..."""

ELO_PER_NEPER: Final = 400 / math.log(10)
"""Elo per unit of natural log-strength in the Bradley–Terry model: 173.7178..."""

DEFAULT_PRIOR_DRAWS: Final = 0.01
"""Virtual drawn games added to each pairing that met, to keep every rating finite."""

SPRT_EPSILON: Final = 1e-3
"""Count given to a pair outcome never observed (fishtest's regularisation)."""

MAX_NORMALIZED_ELO: Final = 200.0
"""Largest normalized Elo an SPRT hypothesis may state (practical tests use under 10)."""

_PAIR_VALUES: Final = (0.0, 0.5, 1.0)


# --------------------------------------------------------------------------- input


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished game, as the statistics see it."""

    engines: tuple[str, str]
    """(first-named engine, second-named engine)."""
    winner: int
    """0 or 1: index into ``engines`` of the winner."""
    points: tuple[int, int]
    """Game points each engine scored (e.g. 5 and 3)."""
    deals: int
    """Number of deals played in the game."""
    pair_id: str | None
    """Games sharing a pair_id form a duplicate pair; None for an unpaired game."""
    fault: str | None = None
    """Fault reason ("timeout", "illegal_action", ...) if the game ended by a fault."""
    offender: int | None = None
    """Index into ``engines`` of the faulting engine; it lost the game."""
    deal_margins: tuple[int, ...] = ()
    """Point margin of each deal for engines[0] (its points minus the other's); may be empty."""

    def __post_init__(self) -> None:
        if len(self.engines) != 2 or self.engines[0] == self.engines[1]:
            raise ValueError(f"a game needs two different engines, got {self.engines!r}")
        if self.winner not in (0, 1):
            raise ValueError(f"winner must be 0 or 1, got {self.winner!r}")
        if self.deals < 0:
            raise ValueError(f"deals must be >= 0, got {self.deals!r}")
        if self.offender is not None:
            if self.offender not in (0, 1):
                raise ValueError(f"offender must be 0, 1 or None, got {self.offender!r}")
            if self.fault is None:
                raise ValueError("an offender is given but no fault reason")
            # No check that the offender lost: under the random_substitute policy the
            # arbiter plays on for a faulted bot, which can still win the game.
        if self.deal_margins and len(self.deal_margins) != self.deals:
            raise ValueError(
                f"{len(self.deal_margins)} deal margins for {self.deals} deals in a game "
                f"between {self.engines[0]!r} and {self.engines[1]!r}"
            )

    def seat_of(self, engine: str) -> int:
        """Index of ``engine`` in ``engines``; ValueError if it did not play."""
        if engine == self.engines[0]:
            return 0
        if engine == self.engines[1]:
            return 1
        raise ValueError(f"{engine!r} did not play in the game {self.engines!r}")

    def score_of(self, engine: str) -> float:
        """1.0 if ``engine`` won the game, 0.0 if it lost."""
        return 1.0 if self.seat_of(engine) == self.winner else 0.0

    def margin_of(self, engine: str) -> int:
        """Total point margin of ``engine``: the sum of the deal margins, else the points."""
        if self.deal_margins:
            margin = sum(self.deal_margins)
        else:
            margin = self.points[0] - self.points[1]
        return margin if self.seat_of(engine) == 0 else -margin


class Unit(Enum):
    """The independent unit a set of scores is made of."""

    GAME = "game"
    """One game, scored 0 or 1; games are taken as independent."""
    PAIR = "pair"
    """A duplicate pair, scored 0, ½ or 1 (the mean of its two games)."""


# ------------------------------------------------------------------ basic formulas


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


# ---------------------------------------------------------------- pairs and units


def _units(outcomes: Iterable[GameOutcome]) -> list[tuple[GameOutcome, ...]]:
    """Group games into independent units: pairs by pair_id, unpaired games alone.

    Raises ValueError for a pair_id on more than two games, or on two games that are
    not the same two engines with the seats swapped.
    """
    groups: dict[str, list[GameOutcome]] = {}
    units: list[tuple[GameOutcome, ...] | str] = []
    for game in outcomes:
        if game.pair_id is None:
            units.append((game,))
            continue
        group = groups.get(game.pair_id)
        if group is None:
            groups[game.pair_id] = [game]
            units.append(game.pair_id)
            continue
        first = group[0]
        if len(group) == 2:
            raise ValueError(f"pair {game.pair_id!r} has more than two games")
        if game.engines != (first.engines[1], first.engines[0]):
            raise ValueError(
                f"pair {game.pair_id!r} is not a duplicate pair: seats {first.engines!r} "
                f"and then {game.engines!r}"
            )
        group.append(game)
    return [u if isinstance(u, tuple) else tuple(groups[u]) for u in units]


def _between(outcomes: Iterable[GameOutcome], a: str, b: str) -> list[GameOutcome]:
    if a == b:
        raise ValueError(f"a pairing needs two different engines, got {a!r} twice")
    games = [g for g in outcomes if g.engines in ((a, b), (b, a))]
    if not games:
        raise ValueError(f"no games between {a!r} and {b!r}")
    return games


# ------------------------------------------------------------------ head to head


@dataclass(frozen=True, slots=True)
class HeadToHead:
    """The result of one pairing, seen from ``engine_a``, on games and on pairs."""

    engine_a: str
    """The engine whose score is reported."""
    engine_b: str
    """Its opponent."""
    games: int
    """All games between the two."""
    wins: int
    """Games won by A."""
    losses: int
    """Games lost by A."""
    score: float
    """wins/games."""
    faults_a: int
    """Games A lost by a fault."""
    faults_b: int
    """Games B lost by a fault."""
    unpaired_games: int
    """Games without a pair_id (in the game figures only)."""
    incomplete_pairs: int
    """Pairs with one game only (in the game figures only)."""
    pairs: int
    """Complete pairs, the units of ``pair_estimate``."""
    pairs_won: int
    """Pairs A won 2-0."""
    pairs_split: int
    """Pairs split 1-1."""
    pairs_lost: int
    """Pairs A lost 0-2."""
    game_estimate: ScoreEstimate
    """Estimate with every game as an independent unit."""
    pair_estimate: ScoreEstimate | None
    """Estimate with complete pairs as the unit; None without complete pairs."""
    luck_share: float | None
    """1 − games_needed_ratio: the share of the single-game variance the pairs removed."""
    games_needed_ratio: float | None
    """Var(mean) from pairs / Var(mean) as if their games were independent: the fraction
    of games the pairs need for the same interval width.  None without complete pairs or
    when the games of the complete pairs all had the same result."""


def head_to_head(outcomes: Iterable[GameOutcome], a: str, b: str) -> HeadToHead:
    """Score, Elo, LOS and luck share of ``a`` against ``b``; ValueError if they never met."""
    games = _between(outcomes, a, b)
    game_scores = [g.score_of(a) for g in games]
    wins = sum(1 for s in game_scores if s == 1.0)
    faults_a = sum(1 for g in games if g.offender is not None and g.engines[g.offender] == a)
    faults_b = sum(1 for g in games if g.offender is not None and g.engines[g.offender] == b)

    unpaired = incomplete = 0
    pair_scores: list[float] = []
    paired_game_scores: list[float] = []
    for unit in _units(games):
        if unit[0].pair_id is None:
            unpaired += 1
        elif len(unit) == 1:
            incomplete += 1
        else:
            scores = [g.score_of(a) for g in unit]
            paired_game_scores.extend(scores)
            pair_scores.append(sum(scores) / 2.0)

    pair_estimate = estimate_score(pair_scores, Unit.PAIR) if pair_scores else None
    ratio: float | None = None
    if pair_estimate is not None:
        paired = estimate_score(paired_game_scores, Unit.GAME)
        if paired.variance > 0.0:
            # (var_pair/N) / (var_game/2N) with N pairs and 2N games.
            ratio = 2.0 * pair_estimate.variance / paired.variance

    return HeadToHead(
        engine_a=a,
        engine_b=b,
        games=len(games),
        wins=wins,
        losses=len(games) - wins,
        score=wins / len(games),
        faults_a=faults_a,
        faults_b=faults_b,
        unpaired_games=unpaired,
        incomplete_pairs=incomplete,
        pairs=len(pair_scores),
        pairs_won=sum(1 for s in pair_scores if s == 1.0),
        pairs_split=sum(1 for s in pair_scores if s == 0.5),
        pairs_lost=sum(1 for s in pair_scores if s == 0.0),
        game_estimate=estimate_score(game_scores, Unit.GAME),
        pair_estimate=pair_estimate,
        luck_share=None if ratio is None else 1.0 - ratio,
        games_needed_ratio=ratio,
    )


# --------------------------------------------------------------- points per deal


@dataclass(frozen=True, slots=True)
class MarginEstimate:
    """Mean point margin per deal, with a 95 % interval, on an explicit unit."""

    unit: Unit
    """What one observation is: a game or a duplicate pair."""
    count: int
    """Number of units with at least one deal."""
    deals: int
    """Deals in those units."""
    mean: float
    """Total margin / total deals."""
    stderr: float
    """Ratio-estimator standard error; inf with fewer than two units."""
    lower: float
    """mean − 1.96·stderr."""
    upper: float
    """mean + 1.96·stderr."""
    error: float
    """1.96·stderr, the "±"."""


@dataclass(frozen=True, slots=True)
class PointsPerDeal:
    """Mean point margin per deal of ``engine_a`` against ``engine_b``."""

    engine_a: str
    """The engine whose margin is reported."""
    engine_b: str
    """Its opponent."""
    games: int
    """All games between the two."""
    deals: int
    """All deals of those games."""
    game_estimate: MarginEstimate | None
    """Every game its own unit; None if no deal was played."""
    pair_estimate: MarginEstimate | None
    """Complete pairs as the unit (incomplete pairs and unpaired games left out); None
    without a complete pair that has deals."""


def _ratio_estimate(units: Sequence[tuple[int, int]], unit: Unit) -> MarginEstimate | None:
    units = [(m, d) for m, d in units if d > 0]
    n = len(units)
    if n == 0:
        return None
    total_m = sum(m for m, _ in units)
    total_d = sum(d for _, d in units)
    mean = total_m / total_d
    if n < 2:
        stderr = math.inf
    else:
        residuals = math.fsum((m - mean * d) ** 2 for m, d in units)
        stderr = math.sqrt(n / (n - 1) * residuals) / total_d
    error = Z_95 * stderr
    return MarginEstimate(
        unit=unit,
        count=n,
        deals=total_d,
        mean=mean,
        stderr=stderr,
        lower=mean - error,
        upper=mean + error,
        error=error,
    )


def points_per_deal(outcomes: Iterable[GameOutcome], a: str, b: str) -> PointsPerDeal:
    """Mean point margin per deal of ``a`` against ``b``, by games and by pairs.

    A game's margin is the sum of its ``deal_margins``, or its points difference when
    they are empty.  Units without deals are left out.
    """
    games = _between(outcomes, a, b)
    per_game = [(g.margin_of(a), g.deals) for g in games]
    per_pair = [
        (sum(g.margin_of(a) for g in unit), sum(g.deals for g in unit))
        for unit in _units(games)
        if len(unit) == 2
    ]
    return PointsPerDeal(
        engine_a=a,
        engine_b=b,
        games=len(games),
        deals=sum(g.deals for g in games),
        game_estimate=_ratio_estimate(per_game, Unit.GAME),
        pair_estimate=_ratio_estimate(per_pair, Unit.PAIR),
    )


# ---------------------------------------------------------------- joint ratings


@dataclass(frozen=True, slots=True)
class RatingRow:
    """One engine's line in a :class:`RatingTable`."""

    rank: int
    """1 for the highest rating."""
    engine: str
    """Engine name."""
    rating: float
    """Maximum-likelihood Elo on the table's scale."""
    lower: float | None
    """2.5 % bootstrap percentile; None without bootstrap."""
    upper: float | None
    """97.5 % bootstrap percentile; None without bootstrap."""
    error: float | None
    """Half the bootstrap interval, the "±"; None without bootstrap."""
    games: int
    """Games played."""
    wins: int
    """Games won."""
    score: float
    """wins/games."""


@dataclass(frozen=True, slots=True)
class RatingTable:
    """Joint Bradley–Terry ratings, sorted by rating (highest first)."""

    rows: tuple[RatingRow, ...]
    """One row per engine, by rating then name."""
    anchor: str | None
    """The engine rated 0, or None when the pool average is 0."""
    bootstrap: int
    """Number of bootstrap resamples behind the intervals (0: no intervals)."""
    seed: int
    """Seed of the bootstrap."""
    prior_draws: float
    """Virtual drawn games added to each pairing that met."""

    def row(self, engine: str) -> RatingRow:
        """The row of ``engine``; KeyError if it is not in the table."""
        for row in self.rows:
            if row.engine == engine:
                return row
        raise KeyError(engine)

    def ratings(self) -> dict[str, float]:
        """Engine name → rating."""
        return {row.engine: row.rating for row in self.rows}


def _log_add(x: float, y: float) -> float:
    high = max(x, y)
    return high + math.log1p(math.exp(-abs(x - y)))


def _solve(matrix: list[list[float]], rhs: list[float]) -> list[float]:
    """Solve a small dense linear system by Gaussian elimination with partial pivoting."""
    n = len(rhs)
    m = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if m[pivot][col] == 0.0:
            raise ArithmeticError("singular system")
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f != 0.0:
                row_r, row_c = m[r], m[col]
                for c in range(col, n + 1):
                    row_r[c] -= f * row_c[c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _reaches_all(adjacent: list[list[bool]]) -> bool:
    seen = {0}
    todo = [0]
    while todo:
        i = todo.pop()
        for j, edge in enumerate(adjacent[i]):
            if edge and j not in seen:
                seen.add(j)
                todo.append(j)
    return len(seen) == len(adjacent)


def _fit_bt(wins: list[list[float]], met: list[list[bool]], prior: float) -> list[float]:
    """Maximum-likelihood log-strengths (natural units, θ₀ = 0) by damped Newton.

    ``wins[i][j]`` counts the wins of i over j; each pair with ``met[i][j]`` gets
    ``prior`` virtual draws.  The caller has checked that a finite maximum exists.
    """
    k = len(wins)
    w = [[wins[i][j] + (prior / 2.0 if met[i][j] else 0.0) for j in range(k)] for i in range(k)]
    n = [[w[i][j] + w[j][i] for j in range(k)] for i in range(k)]
    edges = [(i, j) for i in range(k) for j in range(i + 1, k) if n[i][j] > 0.0]
    won = [sum(w[i]) for i in range(k)]

    def loglik(theta: list[float]) -> float:
        total = math.fsum(won[i] * theta[i] for i in range(k))
        return total - math.fsum(n[i][j] * _log_add(theta[i], theta[j]) for i, j in edges)

    theta = [0.0] * k
    current = loglik(theta)
    for _ in range(200):
        grad = won[:]
        hess = [[0.0] * k for _ in range(k)]  # minus the Hessian
        for i, j in edges:
            p = 1.0 / (1.0 + math.exp(theta[j] - theta[i]))
            grad[i] -= n[i][j] * p
            grad[j] -= n[i][j] * (1.0 - p)
            c = n[i][j] * p * (1.0 - p)
            hess[i][i] += c
            hess[j][j] += c
            hess[i][j] -= c
            hess[j][i] -= c
        step = [0.0, *_solve([row[1:] for row in hess[1:]], grad[1:])]
        t = 1.0
        while True:
            trial = [theta[i] + t * step[i] for i in range(k)]
            value = loglik(trial)
            if value >= current or t < 1e-12:
                break
            t /= 2.0
        theta, current = trial, value
        if max(abs(t * s) for s in step) < 1e-10:
            break
    return theta


@dataclass(frozen=True, slots=True)
class _Tally:
    engines: tuple[str, ...]
    index: dict[str, int]
    met: list[list[bool]]


def _tally(outcomes: Sequence[GameOutcome]) -> _Tally:
    names = sorted({e for g in outcomes for e in g.engines})
    index = {e: i for i, e in enumerate(names)}
    met = [[False] * len(names) for _ in names]
    for g in outcomes:
        i, j = index[g.engines[0]], index[g.engines[1]]
        met[i][j] = met[j][i] = True
    return _Tally(tuple(names), index, met)


def _fit_counts(
    tally: _Tally, counts: Counter[tuple[int, int]], prior: float, anchor: int | None
) -> list[float]:
    k = len(tally.engines)
    wins = [[0.0] * k for _ in range(k)]
    for (i, j), c in counts.items():
        wins[i][j] += c
    if prior == 0.0:
        beats = [[wins[i][j] > 0 for j in range(k)] for i in range(k)]
        beaten = [[wins[j][i] > 0 for j in range(k)] for i in range(k)]
        if not (_reaches_all(beats) and _reaches_all(beaten)):
            raise ValueError(
                "the ratings have no finite maximum-likelihood value (some engine or group "
                "won or lost all its games); use prior_draws > 0"
            )
    theta = _fit_bt(wins, tally.met, prior)
    shift = theta[anchor] if anchor is not None else math.fsum(theta) / k
    return [(t - shift) * ELO_PER_NEPER for t in theta]


def _percentile(sorted_values: Sequence[float], q: float) -> float:
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def fit_ratings(
    outcomes: Iterable[GameOutcome],
    anchor: str | None = None,
    bootstrap: int = 0,
    seed: int = 0,
    prior_draws: float = DEFAULT_PRIOR_DRAWS,
) -> RatingTable:
    """Joint maximum-likelihood Elo ratings of all engines, with bootstrap intervals.

    ``anchor`` names the engine rated 0; None puts the pool average at 0.  With
    ``bootstrap`` > 0 the 95 % intervals are percentiles of that many refits on
    resampled pairs (unpaired games and incomplete pairs are units of their own),
    drawn from ``random.Random(seed)``.  Raises ValueError without games, for an
    unknown anchor, when some engines are not connected to the others by games, and,
    with ``prior_draws`` = 0, when there is no finite maximum (in a resample too).
    """
    games = list(outcomes)
    if not games:
        raise ValueError("no games to rate")
    if prior_draws < 0:
        raise ValueError(f"prior_draws must be >= 0, got {prior_draws!r}")
    if bootstrap < 0:
        raise ValueError(f"bootstrap must be >= 0, got {bootstrap!r}")
    tally = _tally(games)
    if anchor is not None and anchor not in tally.index:
        raise ValueError(f"the anchor {anchor!r} played no game")
    if not _reaches_all(tally.met):
        groups = _components(tally)
        raise ValueError(f"engines in separate groups cannot be rated together: {groups}")
    anchor_index = None if anchor is None else tally.index[anchor]

    def result(g: GameOutcome) -> tuple[int, int]:
        return tally.index[g.engines[g.winner]], tally.index[g.engines[1 - g.winner]]

    ratings = _fit_counts(tally, Counter(result(g) for g in games), prior_draws, anchor_index)

    k = len(tally.engines)
    samples: list[list[float]] = [[] for _ in range(k)]
    if bootstrap:
        kinds = Counter(tuple(sorted(result(g) for g in unit)) for unit in _units(games))
        signatures = list(kinds)
        cumulative: list[float] = []
        running = 0
        for signature in signatures:
            running += kinds[signature]
            cumulative.append(running)
        rng = random.Random(seed)
        population = range(len(signatures))
        for _ in range(bootstrap):
            drawn = Counter(rng.choices(population, cum_weights=cumulative, k=running))
            counts: Counter[tuple[int, int]] = Counter()
            for kind, times in drawn.items():
                for pair in signatures[kind]:
                    counts[pair] += times
            for i, r in enumerate(_fit_counts(tally, counts, prior_draws, anchor_index)):
                samples[i].append(r)

    played = [0] * k
    won = [0] * k
    for g in games:
        winner, loser = result(g)
        played[winner] += 1
        played[loser] += 1
        won[winner] += 1
    order = sorted(range(k), key=lambda i: (-ratings[i], tally.engines[i]))
    rows = []
    for rank, i in enumerate(order, start=1):
        lower = upper = error = None
        if bootstrap:
            values = sorted(samples[i])
            lower, upper = _percentile(values, 0.025), _percentile(values, 0.975)
            error = (upper - lower) / 2.0
        rows.append(
            RatingRow(
                rank=rank,
                engine=tally.engines[i],
                rating=ratings[i],
                lower=lower,
                upper=upper,
                error=error,
                games=played[i],
                wins=won[i],
                score=won[i] / played[i],
            )
        )
    return RatingTable(
        rows=tuple(rows), anchor=anchor, bootstrap=bootstrap, seed=seed, prior_draws=prior_draws
    )


def _components(tally: _Tally) -> list[list[str]]:
    k = len(tally.engines)
    label = [-1] * k
    groups: list[list[str]] = []
    for start in range(k):
        if label[start] >= 0:
            continue
        label[start] = len(groups)
        members = [start]
        todo = [start]
        while todo:
            i = todo.pop()
            for j in range(k):
                if tally.met[i][j] and label[j] < 0:
                    label[j] = label[start]
                    members.append(j)
                    todo.append(j)
        groups.append(sorted(tally.engines[i] for i in members))
    return groups


# ------------------------------------------------------------------- crosstable


@dataclass(frozen=True, slots=True)
class CrossCell:
    """The games of a row engine against a column engine."""

    games: int
    """Games between the two."""
    wins: int
    """Games the row engine won."""
    losses: int
    """Games the row engine lost."""
    score: float
    """wins/games."""


@dataclass(frozen=True, slots=True)
class Crosstable:
    """Engine × engine table of scores."""

    engines: tuple[str, ...]
    """Row and column order."""
    cells: tuple[tuple[CrossCell | None, ...], ...]
    """``cells[i][j]``: engine i against engine j; None on the diagonal and where they
    never met."""

    def cell(self, row: str, column: str) -> CrossCell | None:
        """The cell of ``row`` against ``column``; KeyError for an unknown engine."""
        try:
            return self.cells[self.engines.index(row)][self.engines.index(column)]
        except ValueError:
            raise KeyError(row if row not in self.engines else column) from None


def crosstable(outcomes: Iterable[GameOutcome], order: Sequence[str] | None = None) -> Crosstable:
    """Engine × engine scores; rows ordered by ``order`` or else by total score, then name."""
    games = list(outcomes)
    wins: Counter[tuple[str, str]] = Counter()
    played: Counter[tuple[str, str]] = Counter()
    total_wins: Counter[str] = Counter()
    total_games: Counter[str] = Counter()
    for g in games:
        winner, loser = g.engines[g.winner], g.engines[1 - g.winner]
        wins[winner, loser] += 1
        played[winner, loser] += 1
        played[loser, winner] += 1
        total_wins[winner] += 1
        total_games[winner] += 1
        total_games[loser] += 1
    if order is None:
        engines = sorted(total_games, key=lambda e: (-total_wins[e] / total_games[e], e))
    else:
        engines = list(order)
        if sorted(engines) != sorted(total_games):
            raise ValueError(
                f"order {engines!r} is not a permutation of the engines {sorted(total_games)!r}"
            )

    def cell(row: str, column: str) -> CrossCell | None:
        n = played[row, column]
        if n == 0:
            return None
        w = wins[row, column]
        return CrossCell(games=n, wins=w, losses=n - w, score=w / n)

    return Crosstable(
        engines=tuple(engines),
        cells=tuple(tuple(cell(r, c) for c in engines) for r in engines),
    )


# -------------------------------------------------------------------------- SPRT


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
class PairCounts:
    """Outcomes of complete duplicate pairs for one engine."""

    lost: int
    """Pairs lost 0-2 (score 0)."""
    split: int
    """Pairs split 1-1 (score ½)."""
    won: int
    """Pairs won 2-0 (score 1)."""

    def __post_init__(self) -> None:
        if min(self.lost, self.split, self.won) < 0:
            raise ValueError(f"pair counts must be >= 0, got {self!r}")

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> PairCounts:
        """Count pair scores, each 0, 0.5 or 1."""
        counts = [0, 0, 0]
        for s in scores:
            if s not in _PAIR_VALUES:
                raise ValueError(f"a pair score must be 0, 0.5 or 1, got {s!r}")
            counts[int(s * 2)] += 1
        return cls(*counts)

    @property
    def total(self) -> int:
        """Number of pairs."""
        return self.lost + self.split + self.won


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
    v = [a - score for a in _PAIR_VALUES]
    x = _secular(probs, v)
    return [p / (1.0 + x * vi) for p, vi in zip(probs, v, strict=True)]


def _mle_t(probs: Sequence[float], t: float) -> list[float]:
    """Most likely distribution with (μ − ½)/σ = t (fishtest's fixed-point iteration)."""
    mle = [1.0 / len(probs)] * len(probs)
    for _ in range(100):
        mu = sum(a * p for a, p in zip(_PAIR_VALUES, mle, strict=True))
        sigma = math.sqrt(sum(p * (a - mu) ** 2 for a, p in zip(_PAIR_VALUES, mle, strict=True)))
        v = [a - 0.5 - t * sigma * (1.0 + ((mu - a) / sigma) ** 2) / 2.0 for a in _PAIR_VALUES]
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
        if score not in _PAIR_VALUES:
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
        _units([first, outcome])
        self.add_pair_score((first.score_of(self.engine) + score) / 2.0)
        return True

    def result(self) -> SprtResult:
        """The LLR, bounds and decision for the pairs so far."""
        if self._result is None:
            self._result = sprt(
                self.counts, self.elo0, self.elo1, self.alpha, self.beta, self.model
            )
        return self._result


# ------------------------------------------------------------------------ faults


def fault_summary(outcomes: Iterable[GameOutcome]) -> dict[str, dict[str, int]]:
    """Engine → fault reason → games it lost by that fault; every engine is listed.

    A fault without an offender is not attributed to anyone.
    """
    summary: dict[str, Counter[str]] = {}
    for g in outcomes:
        for e in g.engines:
            summary.setdefault(e, Counter())
        if g.fault is not None and g.offender is not None:
            summary[g.engines[g.offender]][g.fault] += 1
    return {e: dict(sorted(summary[e].items())) for e in sorted(summary)}
