"""A seat's view of a game: the only way hidden information leaves the rules.

:func:`observe` builds an :class:`Observation` holding exactly what rules section 9
allows a player to know: his own hand and discards, the turn-up and trumps, the
scores and who deals, the rule set, both vulnerabilities and every public event of
the current deal.  Never the opponent's hand, the opponent's discards, or the stock
order (only the *number* of cards left in the stock, which is public because the
number each player takes is).

Observations are plain msgspec Structs with cards in text notation, so the
protocol sends them as they are.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from arbiter.cards import CARDS, SUIT_CHARS, format_cards
from arbiter.rules import (
    Event,
    Phase,
    Rules,
    ScoreReason,
    State,
    format_action,
)

__all__ = ["EVENT_TYPES", "GameEvent", "Observation", "event_to_struct", "observe"]


class _Ev(msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True):
    """Base of the public events (tagged by ``type``)."""


class DealStarted(_Ev, tag="deal", frozen=True):
    """A deal began: who deals and the turned-up card."""

    dealer: int
    turnup: str


class Stood(_Ev, tag="stand", frozen=True):
    """The non-dealer played without proposing."""

    seat: int


class Proposed(_Ev, tag="propose", frozen=True):
    """The non-dealer proposed an exchange."""

    seat: int


class Accepted(_Ev, tag="accept", frozen=True):
    """The dealer accepted the proposal."""

    seat: int


class Refused(_Ev, tag="refuse", frozen=True):
    """The dealer refused the proposal."""

    seat: int


class Exchanged(_Ev, tag="exchange", frozen=True):
    """A player discarded and drew ``count`` cards (which cards is private)."""

    seat: int
    count: int


class Marked(_Ev, tag="mark", frozen=True):
    """A player marked (announced) the king of trumps, shown as ``card``."""

    seat: int
    card: str


class CardPlayed(_Ev, tag="card", frozen=True):
    """A card was played to the current trick."""

    seat: int
    card: str


class TrickWon(_Ev, tag="trick", frozen=True):
    """A player won trick number ``trick`` (1 to 5)."""

    seat: int
    trick: int


class Scored(_Ev, tag="score", frozen=True):
    """A player scored ``points``; ``reason`` says why."""

    seat: int
    points: int
    reason: Literal[
        "king_turned_up", "king_marked", "point", "point_vulnerable", "vole", "vole_vulnerable"
    ]


GameEvent = (
    DealStarted
    | Stood
    | Proposed
    | Accepted
    | Refused
    | Exchanged
    | Marked
    | CardPlayed
    | TrickWon
    | Scored
)
"""Any public event of a deal."""

EVENT_TYPES = (
    DealStarted,
    Stood,
    Proposed,
    Accepted,
    Refused,
    Exchanged,
    Marked,
    CardPlayed,
    TrickWon,
    Scored,
)

_REASONS = {r.value: r.name.lower() for r in ScoreReason}
_PHASE_NAMES = {p: p.name.lower() for p in Phase}


def event_to_struct(event: tuple[int, int, int]) -> GameEvent:
    """Convert one ``State.events`` tuple into its public Struct."""
    kind, seat, value = event
    if kind == Event.CARD:
        return CardPlayed(seat, str(CARDS[value]))
    if kind == Event.TRICK:
        return TrickWon(seat, value)
    if kind == Event.EXCHANGE:
        return Exchanged(seat, value)
    if kind == Event.SCORE:
        return Scored(seat, value >> 4, _REASONS[value & 15])  # type: ignore[arg-type]
    if kind == Event.DEAL:
        return DealStarted(seat, str(CARDS[value]))
    if kind == Event.MARK:
        return Marked(seat, str(CARDS[value]))
    if kind == Event.STAND:
        return Stood(seat)
    if kind == Event.PROPOSE:
        return Proposed(seat)
    if kind == Event.ACCEPT:
        return Accepted(seat)
    if kind == Event.REFUSE:
        return Refused(seat)
    raise ValueError(f"unknown event kind {kind}")


class Observation(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Everything one seat may know about the game at one moment (rules section 9)."""

    seat: int
    """The seat this view belongs to (0 or 1)."""
    rules: Rules
    """The rule set in force."""
    scores: list[int]
    """Game points of seats 0 and 1."""
    dealer: int
    """Seat dealing the current deal."""
    deal: int
    """Number of the current deal in this game (1 for the first)."""
    phase: Literal["deal", "propose", "answer", "discard", "mark", "trick", "game_over"]
    """What the game waits for."""
    to_act: int | None
    """Seat that must act now, if any."""
    hand: list[str]
    """This seat's cards, sorted by suit (S H D C) then rank."""
    turnup: str | None
    """The turned-up card (its suit is trumps); None before the first deal."""
    trump: str | None
    """Trump suit letter."""
    stock: int
    """Cards left in the stock."""
    vulnerable: list[bool]
    """Whether seats 0 and 1 are vulnerable in this deal."""
    exchanges: int
    """Exchanges completed in this deal."""
    discards: list[list[str]]
    """This seat's own discards in this deal, one list per exchange."""
    tricks: list[int]
    """Tricks won by seats 0 and 1 in this deal."""
    trick: list[str]
    """Cards played to the current, unfinished trick, in order."""
    marked: int | None
    """Seat that marked the king of trumps this deal, if any."""
    events: list[GameEvent]
    """Every public event of the current deal, in order."""
    legal: list[str]
    """Legal actions in text notation when this seat must act, else empty."""


def observe(state: State, seat: int) -> Observation:
    """The view of ``state`` from ``seat``; holds legal actions if ``seat`` must act."""
    acting = state.to_act == seat and state.phase not in (Phase.DEAL, Phase.GAME_OVER)
    has_deal = state.deal_number > 0
    return Observation(
        seat=seat,
        rules=state.rules,
        scores=list(state.scores),
        dealer=state.dealer,
        deal=state.deal_number,
        phase=_PHASE_NAMES[state.phase],  # type: ignore[arg-type]
        to_act=state.to_act if state.to_act >= 0 else None,
        hand=format_cards(state.hands[seat]) if has_deal else [],
        turnup=str(CARDS[state.turnup]) if has_deal else None,
        trump=SUIT_CHARS[state.trump] if has_deal else None,
        stock=state.stock_left if has_deal else 0,
        vulnerable=list(state.vulnerable),
        exchanges=state.exchanges,
        discards=[format_cards(m) for m in state.discards[seat]],
        tricks=list(state.tricks),
        trick=[str(CARDS[c]) for c in state.trick_cards],
        marked=state.marked if state.marked >= 0 else None,
        events=[event_to_struct(e) for e in state.events],
        legal=[format_action(a) for a in state.legal_actions()] if acting else [],
    )
