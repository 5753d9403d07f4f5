"""The ceiling player: an in-process cheat that sees every card, for measuring others.

:func:`choose_omniscient` reads the exact :class:`arbiter.rules.State` (both hands and
the order of the stock), so it is no bot and must never be offered through the
protocol; it gives an upper reference for what perfect knowledge is worth.

- Card play: the exact double-dummy solution for both hands
  (:func:`engines.double_dummy.dd_card_tricks`), valued in points of the game (vulnerability,
  vole, the target); among equal cards the lowest.
- Exchanges (stand/propose, accept/refuse, every legal discard): each legal action is
  tried on a copy of the state, the exchange phase is finished with the expert policy
  for both seats (the stock being known, this is an exact lookahead, not a guess), the
  king of trumps is marked by whoever then holds it, and the play is solved double
  dummy.  The best action wins; the expert's wins ties.  One-step lookahead: later
  decisions of its own are searched again when they come.
- The king of trumps: marked, like the expert.
"""

from __future__ import annotations

import random

from arbiter.rules import Phase, State
from engines.double_dummy import dd_card_tricks
from engines.expert_policy import choose_state
from engines.search.strategy import rollout_value
from engines.utility import trick_utilities

__all__ = ["choose_omniscient", "omniscient_player"]


def choose_omniscient(state: State, seat: int) -> int:
    """The action of the all-seeing player for ``seat`` (who must be to act)."""
    phase = state.phase
    expert = choose_state(state, seat)
    if phase == Phase.TRICK:
        opp = 1 - seat
        lead = state.lead if state.trick_cards else -1
        values = dd_card_tricks(
            state.hands[seat], state.hands[opp], lead, state.trump, state.rules.must_trump
        )
        util = trick_utilities(seat, state.scores, state.vulnerable, state.deal_points, state.rules)
        base = state.tricks[seat]
        best = max(util[base + t] for t in values.values())
        if util[base + values[expert]] >= best:
            return expert
        return min((c for c, t in values.items() if util[base + t] >= best), key=lambda c: c & 7)
    if phase in (Phase.PROPOSE, Phase.ANSWER, Phase.DISCARD):
        best_action = expert
        best_value = rollout_value(state.clone(), seat, expert)
        for action in state.legal_actions():
            if action == expert:
                continue
            value = rollout_value(state.clone(), seat, action)
            if value > best_value:
                best_action, best_value = action, value
        return best_action
    return expert


def omniscient_player(state: State, seat: int, rng: random.Random) -> int:
    """:func:`choose_omniscient` in the in-process player signature."""
    return choose_omniscient(state, seat)
