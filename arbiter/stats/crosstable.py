"""The figures of one pairing (head to head, points per deal) and the crosstable.

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
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arbiter.stats.elo import Z_95, ScoreEstimate, estimate_score
from arbiter.stats.pairs import GameOutcome, Unit, games_between, group_units

__all__ = [
    "CrossCell",
    "Crosstable",
    "HeadToHead",
    "MarginEstimate",
    "PointsPerDeal",
    "crosstable",
    "head_to_head",
    "points_per_deal",
]


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
    games = games_between(outcomes, a, b)
    game_scores = [g.score_of(a) for g in games]
    wins = sum(1 for s in game_scores if s == 1.0)
    faults_a = sum(1 for g in games if g.offender is not None and g.engines[g.offender] == a)
    faults_b = sum(1 for g in games if g.offender is not None and g.engines[g.offender] == b)

    unpaired = incomplete = 0
    pair_scores: list[float] = []
    paired_game_scores: list[float] = []
    for unit in group_units(games):
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
    games = games_between(outcomes, a, b)
    per_game = [(g.margin_of(a), g.deals) for g in games]
    per_pair = [
        (sum(g.margin_of(a) for g in unit), sum(g.deals for g in unit))
        for unit in group_units(games)
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
