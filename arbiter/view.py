"""A seat's view of a game: the only way hidden information leaves the rules.

:func:`observe` builds an :class:`Observation` holding exactly what rules section 9
allows a player to know: his own hand and discards, the turn-up and trumps, the
scores and who deals, the rule set, both vulnerabilities and every public event of
the current deal.  Never the opponent's hand, the opponent's discards, or the stock
order (only the *number* of cards left in the stock, which is public because the
number each player takes is).

The Structs themselves (:class:`~protocol.view.Observation` and the public events)
are wire types, defined in :mod:`protocol.view`; this module only builds them from
a rules state, so the protocol sends them as they are.
"""

from __future__ import annotations

from arbiter.cards import CARDS, SUIT_CHARS, format_cards
from arbiter.rules import (
    Event,
    Phase,
    ScoreReason,
    State,
    format_action,
)
from protocol.view import (
    Accepted,
    CardPlayed,
    DealStarted,
    Exchanged,
    GameEvent,
    Marked,
    Observation,
    Proposed,
    Refused,
    Scored,
    Stood,
    TrickWon,
)

__all__ = ["event_to_struct", "observe"]


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
