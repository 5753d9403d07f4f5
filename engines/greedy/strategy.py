"""The greedy engine: plain card-play heuristics and no exchange judgement at all.

- Non-dealer: always plays without proposing.  Dealer: always refuses.  (If it is
  ever asked to discard, it throws every card that is neither a trump nor a king.)
- Always marks the king of trumps.
- Leading: the highest card in the hand (a trump before a side card of equal rank).
- Following: the cheapest card that wins the trick, else the lowest card.
"""

from __future__ import annotations

import random

from arbiter.cards import KING, SUIT_MASKS, card_list
from arbiter.rules import DISCARD, MARK, REFUSE, STAND, format_action, legal_cards
from engines.view_info import read_view
from protocol.view import Observation

__all__ = ["choose", "greedy_card"]


def greedy_card(hand: int, lead: int, trump: int, must_trump: bool) -> int:
    """The greedy card: ``lead`` is the opponent's card on the table, or -1 to lead."""
    if lead < 0:
        return max(card_list(hand), key=lambda c: (c & 7, c >> 3 == trump))
    cards = card_list(legal_cards(hand, lead, trump, must_trump))
    winners = [c for c in cards if ((c > lead) if c >> 3 == lead >> 3 else (c >> 3 == trump))]
    if winners:
        return min(winners, key=lambda c: (c >> 3 == trump and lead >> 3 != trump, c & 7))
    return min(cards, key=lambda c: (c >> 3 == trump, c & 7))


def choose(view: Observation, rng: random.Random) -> str:
    """The greedy action for a view (deterministic; ``rng`` is unused)."""
    info = read_view(view)
    phase = info.phase
    if phase == "trick":
        return format_action(greedy_card(info.hand, info.lead, info.trump, info.rules.must_trump))
    if phase == "propose":
        return format_action(STAND)
    if phase == "answer":
        return format_action(REFUSE)
    if phase == "mark":
        return format_action(MARK)
    if phase == "discard":
        keep = info.hand & SUIT_MASKS[info.trump]
        for s in range(4):
            keep |= info.hand & (1 << (8 * s + KING))
        throw = info.hand & ~keep
        high = min(5, info.stock)
        cards = card_list(throw)
        if len(cards) > high:
            cards = tuple(sorted(cards, key=lambda c: c & 7)[:high])
        throw = sum(1 << c for c in cards)
        if not throw and (info.seat != info.dealer or info.rules.dealer_min_discard == 1):
            throw = 1 << min(card_list(info.hand), key=lambda c: (c >> 3 == info.trump, c & 7))
        return format_action(DISCARD | throw)
    raise ValueError(f"greedy has no decision in phase {phase!r}")
