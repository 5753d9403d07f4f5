"""Statistics of a tournament: Elo, intervals, duplicate pairs, joint ratings, SPRT.

Everything here is pure: lists of :class:`GameOutcome` in, frozen result values out.
Each module opens with the reasoning and sources behind its formulas:

- :mod:`arbiter.stats.pairs`: the input (:class:`GameOutcome`), duplicate pairs and
  the unit an estimate is computed on;
- :mod:`arbiter.stats.elo`: Elo of a score, the 95 % interval, LOS, normalized Elo;
- :mod:`arbiter.stats.crosstable`: one pairing head to head (with the luck share and
  points per deal) and the engine × engine crosstable;
- :mod:`arbiter.stats.ratings`: joint Bradley–Terry ratings with bootstrap intervals;
- :mod:`arbiter.stats.sprt`: the generalized SPRT on pair outcomes.

The public names of those modules are re-exported here.
"""

from __future__ import annotations

from arbiter.stats.crosstable import (
    CrossCell,
    Crosstable,
    HeadToHead,
    MarginEstimate,
    PointsPerDeal,
    crosstable,
    head_to_head,
    points_per_deal,
)
from arbiter.stats.elo import (
    Z_95,
    ScoreEstimate,
    elo_from_score,
    estimate_score,
    los,
    normalized_elo,
    score_from_elo,
)
from arbiter.stats.pairs import GameOutcome, PairCounts, Unit
from arbiter.stats.ratings import DEFAULT_PRIOR_DRAWS, RatingRow, RatingTable, fit_ratings
from arbiter.stats.sprt import (
    MAX_NORMALIZED_ELO,
    EloModel,
    Hypothesis,
    SprtResult,
    SprtState,
    sprt,
    sprt_bounds,
)

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
    "fit_ratings",
    "head_to_head",
    "los",
    "normalized_elo",
    "points_per_deal",
    "score_from_elo",
    "sprt",
    "sprt_bounds",
]
