"""The game state as it goes on the wire: the rule set, the public events, a seat's view.

These are plain msgspec Structs with cards in text notation (PROTOCOL.md §4), so a
bot built on :mod:`protocol` decodes them without the arbiter.  They are defined
here, at the bottom of the import order, and only *built* elsewhere: the arbiter's
:func:`arbiter.view.observe` fills an :class:`Observation` from a rules state and
:func:`arbiter.view.event_to_struct` turns a rules event into its Struct.

:class:`Rules` is both the wire type and the rules engine's own: it is pure data
(every named option of the rules reference, with the defaults of the project's
default rule set), so :mod:`arbiter.rules` uses it as it is rather than keep a
second copy and a conversion.  Building and validating one from a preset and
options (:func:`arbiter.rules.make_rules`) stays with the rules.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

__all__ = [
    "EVENT_TYPES",
    "Accepted",
    "CardPlayed",
    "DealStarted",
    "Exchanged",
    "GameEvent",
    "Marked",
    "Observation",
    "Proposed",
    "Refused",
    "Rules",
    "Scored",
    "Stood",
    "TrickWon",
]

PositiveInt = Annotated[int, msgspec.Meta(ge=1)]


class Rules(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """The rule set of a game: every option of the Écarté rules the arbiter plays.

    Build one with :func:`arbiter.rules.make_rules` (validates names and values); the
    defaults are the project's default rule set.  A game record stores this whole
    struct, and ``new_game`` and every view send it to the bots.
    """

    preset: str = "default"
    """Name of the preset the options started from (informational)."""
    packets: Literal["3-2", "2-3"] = "3-2"
    """Dealing packets: which deck positions go to whom."""
    first_dealer: Literal["random"] = "random"
    """First dealer of a match: drawn from the match seed."""
    next_game_dealer: Literal["alternate", "loser"] = "alternate"
    """First dealer of the next game: keep alternating, or the previous game's loser."""
    refusal_penalty: Literal["first_only", "any"] = "first_only"
    """Which refusals make the dealer vulnerable."""
    dealer_min_discard: Literal[0, 1] = 1
    """Fewest cards the dealer must take after accepting."""
    max_exchange_rounds: PositiveInt | None = None
    """Most exchanges in one deal (None: until the stock runs out)."""
    king_deadline: Literal["own_first_card", "opening_lead"] = "own_first_card"
    """Last moment to mark the king of trumps."""
    must_trump: bool = True
    """A player void in the suit led must trump if he can."""
    vulnerable_vole_points: Literal[2, 3] = 2
    """Points for a vole won against a vulnerable opponent."""
    max_points_per_deal: PositiveInt | None = None
    """Cap on what one player scores in one deal, king points included (None: no cap)."""
    target: Literal[5, 7, 11] = 5
    """Points that win the game."""


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
"""Every public event Struct, in the order of :data:`GameEvent`."""


class Observation(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """Everything one seat may know about the game at one moment: a request's view."""

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
