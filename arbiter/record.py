"""Game records: everything needed to re-referee a game without the bots.

A record holds the engines and their seats, the rule set, every deal's full
32-card order, every action with the seat that took it and how long it took, the
tricks and points of each deal, the final scores, the winner and how the game
ended.  :func:`rereferee` replays a record through the rules alone and checks that
it reaches the recorded result; the README documents the format field by field.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from arbiter.cards import Card
from arbiter.rules import Phase, Rules, State, new_game

__all__ = [
    "ActionRecord",
    "DealRecord",
    "EngineInfo",
    "GameRecord",
    "RecordError",
    "Termination",
    "rereferee",
]

TerminationReason = Literal[
    "normal",
    "failed_to_start",
    "no_handshake",
    "timeout",
    "disconnected",
    "invalid_message",
    "illegal_action",
    "resource_limit",
    "withdrawn",
    "match_forfeit",
]


class ActionRecord(msgspec.Struct, frozen=True, array_like=True):
    """One action: ``[seat, action, ms, substituted]`` (a compact array on disk)."""

    seat: int
    """Seat that acted."""
    action: str
    """The action in text notation."""
    ms: float
    """Milliseconds the decision took (request sent to reply read), 0 for substitutes."""
    substituted: bool = False
    """Played by the arbiter for a faulted bot (fault policy ``random_substitute``)."""


class DealRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One deal of a game."""

    number: int
    """Deal number within the game (1-based)."""
    dealer: int
    """Seat that dealt."""
    deck: list[str]
    """The full 32-card order, position 1 first."""
    actions: list[ActionRecord]
    """Every player action of the deal, in order."""
    tricks: list[int]
    """Tricks won by seats 0 and 1 (fewer than 5 in all if the game ended mid-deal)."""
    points: list[int]
    """Points scored by seats 0 and 1 in this deal (kings included)."""


class EngineInfo(msgspec.Struct, frozen=True, kw_only=True):
    """An engine as it introduced itself in the handshake."""

    name: str
    """Name in the tournament."""
    bot_name: str = ""
    author: str = ""
    version: str = ""


class Termination(msgspec.Struct, frozen=True, kw_only=True):
    """How a game ended."""

    reason: TerminationReason
    """``normal``, or the fault that ended it."""
    offender: int | None = None
    """Seat of the bot at fault."""
    detail: str = ""
    """Human-readable explanation."""
    line: str | None = None
    """The offending line the bot sent, if any (truncated)."""


class GameRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One finished game (a line of ``games.jsonl``)."""

    game_id: int
    """Position in the tournament schedule."""
    engines: list[str]
    """Engine names at seat 0 and seat 1."""
    pair_id: str | None
    """Games with the same pair id played the same deals, seats swapped."""
    deal_set: int
    """Which set of deals was played (deck of deal n = ``deck_for(seed, deal_set, n)``)."""
    seed_sha256: str
    """Commitment to the secret tournament seed: hex SHA-256 of its canonical text
    (:func:`arbiter.rules.seed_sha256`), so the seed can be published and checked later."""
    first_dealer: int
    """Seat that dealt first."""
    rules: Rules
    """The full rule set."""
    deals: list[DealRecord]
    """Every deal played, in order."""
    scores: list[int]
    """Final game points of seats 0 and 1."""
    winner: int
    """Seat that won (by points or because the other forfeited)."""
    termination: Termination
    """How the game ended."""
    corrupted: bool = False
    """True if the arbiter played substitute actions for a faulted bot."""
    info: list[EngineInfo] = msgspec.field(default_factory=list)
    """What each engine said of itself in the handshake."""
    started: str = ""
    """ISO time the game started (informational)."""
    seconds: float = 0.0
    """Wall time the game took (informational)."""


class RecordError(ValueError):
    """A record that does not replay under the rules to what it claims."""


def rereferee(record: GameRecord) -> State:
    """Replay a record through the rules alone; raise :class:`RecordError` on any mismatch.

    Checks every deck, every action's legality and seat, each deal's tricks and points,
    and the final scores and winner of a normally ended game.
    """
    st = new_game(record.rules, record.first_dealer)
    for deal in record.deals:
        if st.phase != Phase.DEAL:
            raise RecordError(f"deal {deal.number}: the previous deal was not finished")
        if deal.dealer != st.dealer:
            raise RecordError(
                f"deal {deal.number}: dealer is {st.dealer}, record says {deal.dealer}"
            )
        before = st.scores[:]
        try:
            st.deal([int(Card.parse(c)) for c in deal.deck])
            for i, a in enumerate(deal.actions):
                try:
                    st.apply_text(a.seat, a.action)
                except ValueError as exc:
                    raise RecordError(f"deal {deal.number}, action {i + 1}: {exc}") from None
        except ValueError as exc:
            raise RecordError(f"deal {deal.number}: {exc}") from None
        points = [st.scores[0] - before[0], st.scores[1] - before[1]]
        if points != deal.points:
            raise RecordError(f"deal {deal.number}: points {points}, record says {deal.points}")
        if st.tricks != deal.tricks:
            raise RecordError(f"deal {deal.number}: tricks {st.tricks}, record says {deal.tricks}")
    if record.termination.reason == "normal":
        if not st.is_over():
            raise RecordError("the record ends normally but the game is not over")
        if st.scores != record.scores or st.winner != record.winner:
            raise RecordError(
                f"final scores {st.scores} winner {st.winner}, record says "
                f"{record.scores} winner {record.winner}"
            )
    return st
