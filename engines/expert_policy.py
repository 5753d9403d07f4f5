"""The expert policy: the classic rules of good play at Écarté, as a club player learns them.

Played by the expert engine (:mod:`engines.expert`), and used by the search engine as
its model of the opponent and its rollout policy, and by the ceiling player.

Proposing (non-dealer).  Play without proposing on a *jeu de règle*, a hand that wins
the point about two times in three (the classic table, :func:`is_jeu_de_regle`):

- any hand with three trumps or more;
- two trumps with three cards of one side suit, or with a side king, or with the
  queen-knave of a side suit, or with two side queens;
- one trump with three cards of a side suit headed by king-queen-knave, or headed by
  king-queen when another side king goes with them, or with two king-queens, or with
  four cards of a suit headed by the king; or a high trump (king or queen) with a
  side king-queen;
- no trump with four cards of a suit headed by king-queen-knave, or king-queen-knave
  with another king.

Otherwise propose.  With the opponent at 3 (a vulnerable loss would give him the
game) stand only on a jeu de règle that is also strong by count (:func:`hand_strength`).
After an exchange standing costs nothing extra, so stand on any hand worth the point.

Answering (dealer).  The dealer does not lead, so he refuses only with a hand that
wins the point against a weak hand: three trumps, two trumps with a side king or a
long side suit, or anything strong by count; a first refusal makes him vulnerable, so
with the opponent at 3 he wants more.  Otherwise accept.

Discarding.  Keep trumps and kings, a queen with her king, a knave with king-queen;
throw the rest (the lowest cards first when the stock limits the count, and the
weakest keeper when at least one card must go).

The king of trumps: always mark it (a sure point), unless ``max_points_per_deal``
means the mark can no longer score, when concealment is free.

Play.  Leading: with three trumps or the master trump and another, lead trumps from
the top; else lead a master card (a king, or the best card left of its suit), the
master of the longest suit first; else the top of the longest side suit.  Following:
win as cheaply as possible (a card of the suit before a trump); if the trick cannot
be won, throw the lowest card, from a side suit rather than trumps.
"""

from __future__ import annotations

import random
from typing import Final

from arbiter.cards import JACK, KING, QUEEN, SUIT_MASKS, card_list
from arbiter.rules import (
    ACCEPT,
    DISCARD,
    MARK,
    NO_MARK,
    PROPOSE,
    REFUSE,
    STAND,
    Phase,
    State,
    legal_cards,
)
from engines.view_info import ViewInfo

__all__ = [
    "card_choice",
    "choose_state",
    "decide_info",
    "discard_choice",
    "hand_strength",
    "is_jeu_de_regle",
    "marks",
    "refuses",
    "stands",
]


def _suit(hand: int, s: int) -> int:
    return hand >> (8 * s) & 255


def is_jeu_de_regle(hand: int, trump: int) -> bool:
    """Whether a five-card hand is one of the classic hands to play without proposing."""
    t = _suit(hand, trump).bit_count()
    if t >= 3:
        return True
    sides = [_suit(hand, s) for s in range(4) if s != trump]
    kings = sum(1 for b in sides if b >> KING & 1)
    kq = [b for b in sides if b >> KING & 1 and b >> QUEEN & 1]
    kqj = [b for b in kq if b >> JACK & 1]
    if t == 2:
        return (
            any(b.bit_count() >= 3 for b in sides)
            or kings >= 1
            or any(b >> QUEEN & 1 and b >> JACK & 1 for b in sides)
            or sum(1 for b in sides if b >> QUEEN & 1) >= 2
        )
    if t == 1:
        high_trump = _suit(hand, trump) >> QUEEN != 0
        return (
            any(b.bit_count() >= 3 for b in kqj)
            or (any(b.bit_count() >= 3 for b in kq) and kings >= 2)
            or len(kq) >= 2
            or any(b.bit_count() >= 4 and b >> KING & 1 for b in sides)
            or (high_trump and len(kq) >= 1)
        )
    return any(b.bit_count() >= 4 for b in kqj) or (len(kqj) >= 1 and kings >= 2)


def hand_strength(hand: int, trump: int) -> float:
    """A rough count of the tricks a hand is worth (trumps about one each, kings most)."""
    total = 0.0
    for s in range(4):
        b = _suit(hand, s)
        if not b:
            continue
        n = b.bit_count()
        if s == trump:
            for r in range(8):
                if b >> r & 1:
                    total += 1.0 if r >= JACK else 0.8 if r >= 3 else 0.7
            continue
        if b >> KING & 1:
            total += 0.85
            if b >> QUEEN & 1:
                total += 0.55
                if b >> JACK & 1:
                    total += 0.3
        elif b >> QUEEN & 1:
            total += 0.3 if n >= 2 else 0.15
        if n >= 3:
            total += 0.2 * (n - 2)
    return total


def stands(
    hand: int,
    trump: int,
    my_score: int,
    opp_score: int,
    target: int,
    exchanges: int,
) -> bool:
    """Non-dealer: whether to play without proposing (True) rather than propose."""
    king = 1 << (trump * 8 + KING)
    if hand & king and my_score + 1 >= target:
        return True  # marking wins the game before any card is played
    strength = hand_strength(hand, trump)
    if exchanges > 0:
        # No vulnerability at stake any more: play on any hand worth the point.
        return strength >= 2.6 or is_jeu_de_regle(hand, trump)
    if not is_jeu_de_regle(hand, trump):
        return strength >= 3.4
    if target - opp_score == 2:
        # A vulnerable loss would hand the opponent the game: only play on a strong one.
        return strength >= 2.7
    return True


def refuses(
    hand: int,
    trump: int,
    my_score: int,
    opp_score: int,
    target: int,
    makes_vulnerable: bool,
) -> bool:
    """Dealer: whether to refuse the proposal (True) rather than accept."""
    t = _suit(hand, trump).bit_count()
    strength = hand_strength(hand, trump)
    sides = [_suit(hand, s) for s in range(4) if s != trump]
    side_king = any(b >> KING & 1 for b in sides)
    long_side = any(b.bit_count() >= 3 for b in sides)
    good = t >= 3 or (t == 2 and (side_king or long_side)) or strength >= 3.0
    if not good:
        return False
    if makes_vulnerable and target - opp_score == 2:
        return strength >= 3.2
    return strength >= 2.5


def _keep_value(card: int, trump: int) -> int:
    """Order of how much a card is worth keeping (higher: keep first)."""
    r = card & 7
    return 20 + r if card >> 3 == trump else r


def discard_choice(hand: int, trump: int, low: int, high: int) -> int:
    """Cards to discard: all but trumps, kings and their queen (and knave); ``low..high``."""
    keep = hand & SUIT_MASKS[trump]
    for s in range(4):
        if s == trump:
            continue
        b = _suit(hand, s)
        if b >> KING & 1:
            keep |= 1 << (s * 8 + KING)
            if b >> QUEEN & 1:
                keep |= 1 << (s * 8 + QUEEN)
                if b >> JACK & 1:
                    keep |= 1 << (s * 8 + JACK)
    throw = hand & ~keep
    n = throw.bit_count()
    if n > high:
        cards = sorted(card_list(throw), key=lambda c: _keep_value(c, trump))
        throw = 0
        for c in cards[:high]:
            throw |= 1 << c
    elif n < low:
        cards = sorted(card_list(keep), key=lambda c: _keep_value(c, trump))
        for c in cards[: low - n]:
            throw |= 1 << c
    return throw


def _is_master(card: int, unseen: int) -> bool:
    """Whether no card still out (``unseen``) of the card's suit ranks above it."""
    above = SUIT_MASKS[card >> 3] & ~((2 << card) - 1)
    return not above & unseen


def card_choice(hand: int, lead: int, trump: int, must_trump: bool, unseen: int) -> int:
    """The card to play: ``lead`` is the opponent's card on the table, or -1 to lead."""
    tmask = SUIT_MASKS[trump]
    if lead >= 0:
        legal = legal_cards(hand, lead, trump, must_trump)
        cards = card_list(legal)
        winners = [c for c in cards if ((c > lead) if c >> 3 == lead >> 3 else (c >> 3 == trump))]
        if winners:
            # Cheapest: a card of the suit led before a trump, lowest first.
            return min(winners, key=lambda c: (c >> 3 == trump and lead >> 3 != trump, c & 7))
        return min(cards, key=lambda c: (c >> 3 == trump, c & 7))
    trumps = card_list(hand & tmask)
    if trumps:
        top = trumps[-1]
        if len(trumps) >= 3 or (len(trumps) >= 2 and _is_master(top, unseen)):
            return top
        if len(trumps) == hand.bit_count():
            return top
    sides = [s for s in range(4) if s != trump and hand & SUIT_MASKS[s]]
    masters = []
    for s in sides:
        top = card_list(hand & SUIT_MASKS[s])[-1]
        if _is_master(top, unseen):
            masters.append((-(hand & SUIT_MASKS[s]).bit_count(), top))
    if masters:
        return min(masters)[1]
    if sides:
        longest = max(
            sides, key=lambda s: ((hand & SUIT_MASKS[s]).bit_count(), hand >> 8 * s & 255)
        )
        return card_list(hand & SUIT_MASKS[longest])[-1]
    return card_list(hand)[-1]


def marks(cap: int | None, scored_this_deal: int) -> bool:
    """Whether to mark the king of trumps."""
    return cap is None or scored_this_deal < cap


def _decide(
    phase: str,
    seat: int,
    hand: int,
    trump: int,
    scores: list[int],
    target: int,
    exchanges: int,
    proposals: int,
    refusal_any: bool,
    low_high: tuple[int, int],
    lead: int,
    must_trump: bool,
    unseen: int,
    cap: int | None,
    scored: int,
) -> int:
    my, opp = scores[seat], scores[1 - seat]
    if phase == "trick":
        return card_choice(hand, lead, trump, must_trump, unseen)
    if phase == "propose":
        return STAND if stands(hand, trump, my, opp, target, exchanges) else PROPOSE
    if phase == "answer":
        vul = proposals == 1 or refusal_any
        return REFUSE if refuses(hand, trump, my, opp, target, vul) else ACCEPT
    if phase == "discard":
        return DISCARD | discard_choice(hand, trump, *low_high)
    if phase == "mark":
        return MARK if marks(cap, scored) else NO_MARK
    raise ValueError(f"no decision in phase {phase!r}")


def decide_info(info: ViewInfo) -> int:
    """The expert's action from a digested view."""
    low, high = 1, min(5, info.stock)
    if info.phase == "discard" and info.seat == info.dealer:
        low = info.rules.dealer_min_discard
    unseen = info.unseen
    return _decide(
        info.phase,
        info.seat,
        info.hand,
        info.trump,
        info.scores,
        info.target,
        info.exchanges,
        info.proposals,
        info.rules.refusal_penalty == "any",
        (low, high),
        info.lead,
        info.rules.must_trump,
        unseen,
        info.rules.max_points_per_deal,
        info.deal_points[info.seat],
    )


_PHASE_NAMES: Final = {p: p.name.lower() for p in Phase}


def choose_state(state: State, seat: int, rng: random.Random | None = None) -> int:
    """The same decision made straight from a state, for simulations.

    Looks only at what ``seat`` may know: his hand, the public cards and counts.
    """
    phase = _PHASE_NAMES[state.phase]
    low, high = 1, min(5, 32 - state.stock_pos)
    if phase == "discard" and seat == state.dealer:
        low = state.rules.dealer_min_discard
    hand = state.hands[seat]
    unseen = 0xFFFFFFFF & ~hand & ~(1 << state.turnup) & ~state.played[0] & ~state.played[1]
    for d in state.discards[seat]:
        unseen &= ~d
    lead = state.lead if state.trick_cards and state.lead >= 0 else -1
    return _decide(
        phase,
        seat,
        hand,
        state.trump,
        state.scores,
        state.rules.target,
        state.exchanges,
        state.proposals,
        state.rules.refusal_penalty == "any",
        (low, high),
        lead,
        state.rules.must_trump,
        unseen,
        state.rules.max_points_per_deal,
        state.deal_points[seat],
    )
