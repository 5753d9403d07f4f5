"""Reading a seat's view: what the bundled engines compute with.

:func:`read_view` turns an :class:`arbiter.view.Observation` (cards as text) into a
:class:`ViewInfo` of bit sets and small ints, plus what the public events say about
the opponent's hand: the cards he has been *proved* not to hold (he failed to follow
suit, to beat the card led, or to trump) and his exchange history.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from arbiter.cards import FULL_PACK, SUIT_MASKS, Card, card_mask
from arbiter.rules import HIGHER_IN_SUIT, Rules, parse_action
from protocol.view import (
    Accepted,
    CardPlayed,
    DealStarted,
    Exchanged,
    Marked,
    Observation,
    Proposed,
    Refused,
    Scored,
    Stood,
)

__all__ = ["ViewInfo", "read_view"]


@dataclass(slots=True)
class ViewInfo:
    """A view digested into bit sets: what the engines compute with."""

    seat: int
    opp: int
    dealer: int
    rules: Rules
    phase: str
    hand: int
    trump: int
    turnup: int
    scores: list[int]
    stock: int
    vulnerable: list[bool]
    exchanges: int
    proposals: int
    my_discards: int
    played: list[int]
    tricks: list[int]
    lead: int
    """Card on the table led by the opponent, or -1 when this seat leads or none."""
    marked: int
    deal_points: list[int]
    opp_excluded: int
    """Cards the opponent's play proves he cannot hold now."""
    taken: list[list[int]]
    """Cards taken by each seat at each exchange, in order."""
    last_ex_event: list[str] = field(default_factory=lambda: ["", ""])
    """Each seat's last exchange-phase decision: stand, propose, accept, refuse, ''."""
    legal: list[int] = field(default_factory=list)
    plays: list[tuple[int, int]] = field(default_factory=list)
    """Every card played this deal, in order, as ``(seat, card)``."""
    king_scores: list[int] = field(default_factory=lambda: [0, 0])
    """Points each seat scored this deal for the king (turned up or marked)."""

    @property
    def unseen(self) -> int:
        """Cards this seat has not seen: the opponent's hand, his discards and the stock."""
        return (
            FULL_PACK
            & ~self.hand
            & ~self.my_discards
            & ~(1 << self.turnup)
            & ~self.played[0]
            & ~self.played[1]
        )

    @property
    def opp_hand_size(self) -> int:
        """Cards now in the opponent's hand."""
        return 5 - self.played[self.opp].bit_count()

    @property
    def target(self) -> int:
        """Points that win the game."""
        return self.rules.target


def read_view(view: Observation) -> ViewInfo:
    """Digest an observation into a :class:`ViewInfo`."""
    seat = view.seat
    opp = 1 - seat
    trump = "SHDC".index(view.trump) if view.trump else 0
    played = [0, 0]
    excluded = 0
    taken: list[list[int]] = [[], []]
    last = ["", ""]
    proposals = 0
    deal_pts = [0, 0]
    king_pts = [0, 0]
    plays: list[tuple[int, int]] = []
    lead = -1
    lead_seat = -1
    for ev in view.events:
        if isinstance(ev, CardPlayed):
            c = Card.parse(ev.card)
            played[ev.seat] |= 1 << c
            plays.append((ev.seat, int(c)))
            if lead < 0:
                lead, lead_seat = int(c), ev.seat
            else:
                if ev.seat == opp:
                    excluded |= _excluded_by_reply(lead, int(c), trump, view.rules.must_trump)
                lead = -1
        elif isinstance(ev, Exchanged):
            taken[ev.seat].append(ev.count)
        elif isinstance(ev, Proposed):
            proposals += 1
            last[ev.seat] = "propose"
        elif isinstance(ev, Stood):
            last[ev.seat] = "stand"
        elif isinstance(ev, Accepted):
            last[ev.seat] = "accept"
        elif isinstance(ev, Refused):
            last[ev.seat] = "refuse"
        elif isinstance(ev, Scored):
            deal_pts[ev.seat] += ev.points
            if ev.reason in ("king_turned_up", "king_marked"):
                king_pts[ev.seat] += ev.points
        elif isinstance(ev, Marked | DealStarted):
            pass
    hand = card_mask(view.hand)
    on_table = lead if lead >= 0 and lead_seat == opp else -1
    return ViewInfo(
        seat=seat,
        opp=opp,
        dealer=view.dealer,
        rules=view.rules,
        phase=view.phase,
        hand=hand,
        trump=trump,
        turnup=int(Card.parse(view.turnup)) if view.turnup else 0,
        scores=list(view.scores),
        stock=view.stock,
        vulnerable=list(view.vulnerable),
        exchanges=view.exchanges,
        proposals=proposals,
        my_discards=card_mask([c for d in view.discards for c in d]),
        played=played,
        tricks=list(view.tricks),
        lead=on_table,
        marked=-1 if view.marked is None else view.marked,
        deal_points=deal_pts,
        opp_excluded=excluded,
        taken=taken,
        last_ex_event=last,
        legal=[parse_action(a) for a in view.legal],
        plays=plays,
        king_scores=king_pts,
    )


def _excluded_by_reply(lead: int, reply: int, trump: int, must_trump: bool) -> int:
    """Cards the second player cannot have held, given his legal reply to ``lead``."""
    suit = SUIT_MASKS[lead >> 3]
    if reply >> 3 == lead >> 3:
        return 0 if reply > lead else HIGHER_IN_SUIT[lead]
    out = suit
    if must_trump and reply >> 3 != trump:
        out |= SUIT_MASKS[trump]
    return out
