"""What the outcome of a deal is worth to an engine, on the rules' own scoring.

The points come from :func:`arbiter.rules.deal_points` and the per-deal cap from
:func:`arbiter.rules.capped_points`, the functions the state machine scores with;
this module only turns points into a utility (points beyond the target are worth
nothing, reaching it is worth :data:`WIN_VALUE`).
"""

from __future__ import annotations

from typing import Final

from arbiter.rules import Rules, capped_points, deal_points, reaches_target

__all__ = ["WIN_VALUE", "game_utility", "trick_utilities"]


WIN_VALUE: Final = 6.0
"""Utility of winning the game outright, in deal points (a point is worth about a
sixth of a game at the usual scores)."""


def game_utility(
    me: int,
    gained: tuple[int, int],
    scores: list[int],
    deal_so_far: list[int],
    rules: Rules,
) -> float:
    """Value for ``me`` of a deal that adds ``gained`` (mine, opponent's) points.

    Points beyond the target are worth nothing, reaching it is worth :data:`WIN_VALUE`;
    ``max_points_per_deal`` caps each side's gain given ``deal_so_far``.
    """
    opp = 1 - me
    g_me = capped_points(gained[0], deal_so_far[me], rules)
    g_opp = capped_points(gained[1], deal_so_far[opp], rules)
    if reaches_target(scores[me] + g_me, rules):
        return WIN_VALUE
    if reaches_target(scores[opp] + g_opp, rules):
        return -WIN_VALUE
    return float(g_me - g_opp)


def trick_utilities(
    me: int,
    scores: list[int],
    vulnerable: list[bool],
    deal_so_far: list[int],
    rules: Rules,
    bonus: tuple[int, int] = (0, 0),
) -> list[float]:
    """Utility for ``me`` of finishing the deal with 0..5 tricks (extra ``bonus`` points)."""
    out = []
    for t in range(6):
        pm, po = deal_points(t, vulnerable, me, rules)
        out.append(game_utility(me, (pm + bonus[0], po + bonus[1]), scores, deal_so_far, rules))
    return out
