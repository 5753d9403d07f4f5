"""Game records: everything needed to re-referee a game without the bots.

A record holds the engines and their seats, the rule set, every deal's full
32-card order, every action with the seat that took it and how long it took, the
tricks and points of each deal, the final scores, the winner and how the game
ended.  :func:`rereferee` replays a record through the rules alone and checks that
it reaches the recorded result; the README documents the format field by field.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Literal

import msgspec

from arbiter.cards import CARD_NUMBER, CARD_TEXT
from arbiter.faults import FaultReason
from arbiter.rules import Phase, Rules, Seed, State, deck_for, new_game

__all__ = [
    "TERMINATION_REASONS",
    "ActionRecord",
    "DealRecord",
    "EngineInfo",
    "GameRecord",
    "RecordError",
    "Termination",
    "TerminationReason",
    "check_decks",
    "rereferee",
]

TERMINATION_REASONS: Final[tuple[str, ...]] = (
    "normal",
    *(reason.value for reason in FaultReason),
    "withdrawn",
    "match_forfeit",
)
"""How a game can end: ``normal``, one of the fault reasons (:class:`FaultReason`,
the one list of them), ``withdrawn`` or ``match_forfeit``."""

if TYPE_CHECKING:
    # A Literal cannot be spelled from a tuple for the type checker, and msgspec
    # decodes only one kind of string per field, so the checker sees plain text.
    TerminationReason = str
else:
    TerminationReason = Literal[TERMINATION_REASONS]


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


# Card text <-> card number, for the decks of many records (faster than Card.parse).


class RecordError(ValueError):
    """A record that does not replay under the rules to what it claims."""


def rereferee(record: GameRecord) -> State:
    """Replay a record through the rules alone; raise :class:`RecordError` on any mismatch.

    Checks every deal's number and dealer, every deck, every action's legality and
    seat, each deal's tricks and points, and the end: a normally ended game must be
    over with the recorded scores and winner; a game lost by a fault must name the
    offender and be won by the other seat, with the scores reached so far (or, if the
    arbiter played on for the offender, ``corrupted``, the scores of the finished game).
    It does not check that the decks are the ones the schedule's seed deals (see
    :func:`check_decks`).
    """
    st = new_game(record.rules, record.first_dealer)
    for n, deal in enumerate(record.deals, 1):
        if deal.number != n:
            raise RecordError(f"deal {n} is numbered {deal.number}")
        if st.phase != Phase.DEAL:
            raise RecordError(f"deal {deal.number}: the previous deal was not finished")
        if deal.dealer != st.dealer:
            raise RecordError(
                f"deal {deal.number}: dealer is {st.dealer}, record says {deal.dealer}"
            )
        before = st.scores[:]
        try:
            try:
                deck = [CARD_NUMBER[c] for c in deal.deck]
            except KeyError as exc:
                raise RecordError(f"deal {deal.number}: {exc.args[0]!r} is not a card") from None
            st.deal(deck)
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
    end = record.termination
    if end.reason == "normal" or record.corrupted:
        if end.reason == "normal" and (end.offender is not None or record.corrupted):
            raise RecordError("the record ends normally but names an offender or substitutes")
        if not st.is_over():
            raise RecordError(f"the record ends {end.reason} but the game is not over")
        # A corrupted game was played out for the offender, who loses all the same.
        winner = st.winner if end.reason == "normal" else _loser_beaten(end.offender)
        if st.scores != record.scores or record.winner != winner:
            raise RecordError(
                f"final scores {st.scores} winner {winner}, record says "
                f"{record.scores} winner {record.winner}"
            )
        return st
    # A forfeit: the game stopped where the offender faulted.
    winner = _loser_beaten(end.offender)
    if record.winner != winner:
        raise RecordError(
            f"seat {end.offender} forfeited ({end.reason}), record says seat {record.winner} won"
        )
    if st.scores != record.scores:
        raise RecordError(f"scores {st.scores} at the forfeit, record says {record.scores}")
    return st


def _loser_beaten(offender: int | None) -> int:
    """The winner of a game that ``offender`` lost by a fault."""
    if offender not in (0, 1):
        raise RecordError("the record ends by a fault but names no offender seat")
    return 1 - offender


def check_decks(record: GameRecord, seed: Seed) -> None:
    """Raise :class:`RecordError` unless every deal's deck is the one ``seed`` deals.

    Deal ``n`` of a game with deal set ``s`` is ``deck_for(seed, s, n)``.
    """
    for deal in record.deals:
        want = [CARD_TEXT[c] for c in deck_for(seed, record.deal_set, deal.number)]
        if deal.deck != want:
            raise RecordError(f"deal {deal.number}: the deck is not the one the run's seed deals")
