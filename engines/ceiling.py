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

:func:`choose_hands_only` is the second yardstick: it sees the opponent's hand but
neither the order of the stock nor the opponent's discards, so the gap between it and
the ceiling is what knowing the stock is worth (no player can know it), and the gap
between a real engine and it is what is knowable at all.  Card play is the ceiling's
(the stock plays no part once the exchanges are over); each exchange action is rolled
out as above on :data:`HANDS_ONLY_SAMPLES` stock orders drawn from the cards it cannot
see, the same orders for every action, and the best mean wins (the expert's on ties).
"""

from __future__ import annotations

import random
from typing import Final

from arbiter.cards import card_list
from arbiter.rules import Phase, State
from engines.double_dummy import dd_card_tricks
from engines.expert_policy import choose_state
from engines.search.strategy import rollout_value
from engines.utility import trick_utilities

__all__ = [
    "HANDS_ONLY_SAMPLES",
    "choose_hands_only",
    "choose_omniscient",
    "hands_only_player",
    "omniscient_player",
]

HANDS_ONLY_SAMPLES: Final = 48
"""Stock orders the hands-only player rolls each exchange action out on."""


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
        return _best_rollout(state, seat, expert, [state])
    return expert


def _best_rollout(state: State, seat: int, expert: int, worlds: list[State]) -> int:
    """The exchange action with the best mean rollout over ``worlds`` (copies of ``state``)."""
    if len(worlds) == 1:
        best_action = expert
        best_value = rollout_value(state.clone(), seat, expert)
        for action in state.legal_actions():
            if action == expert:
                continue
            value = rollout_value(state.clone(), seat, action)
            if value > best_value:
                best_action, best_value = action, value
        return best_action
    actions = [expert] + [a for a in state.legal_actions() if a != expert]
    totals = [sum(rollout_value(w.clone(), seat, a) for w in worlds) for a in actions]
    best = max(totals)
    return actions[totals.index(best)] if totals[0] < best - 1e-9 else expert


def choose_hands_only(state: State, seat: int, rng: random.Random) -> int:
    """The action of a player who sees both hands but not the stock (``seat`` to act)."""
    if state.phase not in (Phase.PROPOSE, Phase.ANSWER, Phase.DISCARD):
        return choose_omniscient(state, seat)
    expert = choose_state(state, seat)
    if len(state.legal_actions()) == 1:
        return expert
    # Cards it cannot place: the stock and the opponent's discards.
    hidden = 0xFFFFFFFF & ~state.hands[0] & ~state.hands[1] & ~(1 << state.turnup)
    for d in state.discards[seat]:
        hidden &= ~d
    pool = list(card_list(hidden))
    stock_n = 32 - state.stock_pos
    worlds = []
    for _ in range(HANDS_ONLY_SAMPLES):
        rng.shuffle(pool)
        world = state.clone()
        world.deck = (0,) * state.stock_pos + tuple(pool[:stock_n])
        worlds.append(world)
    return _best_rollout(state, seat, expert, worlds)


def hands_only_player(state: State, seat: int, rng: random.Random) -> int:
    """:func:`choose_hands_only` in the in-process player signature."""
    return choose_hands_only(state, seat, rng)


def omniscient_player(state: State, seat: int, rng: random.Random) -> int:
    """:func:`choose_omniscient` in the in-process player signature."""
    return choose_omniscient(state, seat)
