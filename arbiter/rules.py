"""The rules of Écarté: a pure, synchronous state machine for one game.

Nothing here does I/O, reads a clock or draws random numbers on its own: the only
chance in the game, the order of each deal's 32 cards, comes in from outside
through :meth:`State.deal` (see :func:`deck_for` for the keyed decks the arbiter
uses).  The arbiter drives a :class:`State` with actions; the bundled search
engines run thousands of simulated deals through the same code, so the inner
loop works on ``int`` bit sets (see :mod:`arbiter.cards`) and small ints.

How a game moves (``state.phase``):

``DEAL``      chance: waiting for the next deal's deck (:meth:`State.deal`).
``PROPOSE``   the non-dealer plays without proposing (``STAND``) or ``PROPOSE``\\s.
``ANSWER``    the dealer ``ACCEPT``\\s or ``REFUSE``\\s the proposal.
``DISCARD``   the player to act discards (non-dealer first, then the dealer).
``MARK``      the holder of the king of trumps marks it (``MARK``) or not (``NO_MARK``).
``TRICK``     the player to act plays a card.
``GAME_OVER`` somebody reached the target; ``state.winner`` says who.

Actions are ints (cheap to generate and compare): a card number 0-31 plays that
card; the constants :data:`STAND` .. :data:`NO_MARK` are the decisions; a discard
is :data:`DISCARD` ``| mask`` where ``mask`` is the bit set of discarded cards.
:func:`format_action` / :func:`parse_action` convert to and from the text
notation used on the wire (``"KS"``, ``"stand"``, ``"discard 7H 8C"`` ...).

Two layers of checking, as in python-chess: :meth:`State.apply` trusts its caller
(an action taken from :meth:`State.legal_actions`), while :meth:`State.apply_checked`
and :meth:`State.apply_text` are for untrusted input and raise
:class:`IllegalActionError` naming the action and the position.

Seats are 0 and 1 for the whole game; the dealer changes every deal.

The rule set, :class:`Rules`, is pure data sent to the bots as it is, so it is
defined with the other wire types in :mod:`protocol.view` and used here unchanged;
:func:`make_rules` builds and validates one.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence
from enum import IntEnum
from types import UnionType
from typing import Annotated, Any, Final, Literal, Union, get_args, get_origin, get_type_hints

import msgspec

from arbiter.cards import (
    CARDS,
    KING,
    SUIT_CHARS,
    SUIT_MASKS,
    Card,
    CardError,
    card_list,
    format_cards,
)
from protocol.view import Rules

__all__ = [
    "ACCEPT",
    "DISCARD",
    "HIGHER_IN_SUIT",
    "MARK",
    "NO_MARK",
    "PRESETS",
    "PROPOSE",
    "REFUSE",
    "STAND",
    "ActionError",
    "Event",
    "IllegalActionError",
    "Phase",
    "Rules",
    "RulesError",
    "ScoreReason",
    "Seed",
    "State",
    "beats",
    "capped_points",
    "deal_points",
    "deck_for",
    "discard_span",
    "format_action",
    "legal_cards",
    "make_rules",
    "new_game",
    "next_first_dealer",
    "parse_action",
    "reaches_target",
    "seed_is_short",
    "seed_sha256",
    "seed_text",
    "trick_score",
]


# --------------------------------------------------------------------------- options


class RulesError(ValueError):
    """Raised for an unknown preset or option, or an option with a bad value."""


PRESETS: Final[dict[str, dict[str, Any]]] = {
    "default": {},
    "cavendish": {"dealer_min_discard": 0},
}
"""Named presets: options applied on top of the defaults."""

_OPTION_NAMES: Final = tuple(f for f in Rules.__struct_fields__ if f != "preset")


def make_rules(preset: str = "default", **options: Any) -> Rules:
    """Build a validated :class:`Rules` from a preset name and option overrides.

    >>> make_rules("cavendish", target=7).dealer_min_discard
    0
    """
    if preset not in PRESETS:
        raise RulesError(f"unknown rules preset {preset!r}; known presets: {', '.join(PRESETS)}")
    for name in options:
        if name not in _OPTION_NAMES:
            raise RulesError(
                f"unknown rules option {name!r}; known options: {', '.join(_OPTION_NAMES)}"
            )
    merged = {"preset": preset, **PRESETS[preset], **options}
    try:
        return msgspec.convert(merged, Rules)
    except msgspec.ValidationError as exc:
        raise RulesError(f"bad rules option: {_option_message(exc)}") from None


def _option_message(exc: msgspec.ValidationError) -> str:
    text = str(exc)
    # msgspec says "Expected `int`, got `str` - at `$.target`"; name the option plainly.
    if " - at `$." in text:
        msg, _, where = text.rpartition(" - at `$.")
        name = where.rstrip("`")
        allowed = _ALLOWED.get(name)
        return f"{name}: {msg}" + (f" (allowed: {allowed})" if allowed else "")
    return text


def _allowed(annotation: Any) -> str:
    """The values an option annotation admits, as a user writes them in YAML."""
    words = _allowed_words(annotation)
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _allowed_words(annotation: Any) -> list[str]:
    origin = get_origin(annotation)
    if origin is Literal:
        return [repr(v) if isinstance(v, str) else str(v) for v in get_args(annotation)]
    if origin in (Union, UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        # "null" first, whatever the order of the union.
        nulls = ["null"] if len(members) < len(get_args(annotation)) else []
        return nulls + [w for a in members for w in _allowed_words(a)]
    if annotation is bool:
        return ["true", "false"]
    if origin is Annotated:
        base, *metas = get_args(annotation)
        bounds = [m.ge for m in metas if isinstance(m, msgspec.Meta) and m.ge is not None]
        if base is int and len(bounds) == 1:
            return [f"a whole number >= {bounds[0]}"]
    # A new kind of option needs words here; failing at import keeps the table whole.
    raise TypeError(f"no description of the rules option type {annotation!r}")


_ALLOWED: Final = {
    name: _allowed(annotation)
    for name, annotation in get_type_hints(Rules, include_extras=True).items()
    if name in _OPTION_NAMES
}
"""Option name -> its allowed values, derived from the annotations of :class:`Rules`."""

DEFAULT_RULES: Final = Rules()


# --------------------------------------------------------------------------- actions

STAND: Final = 32
"""Non-dealer plays without proposing (and becomes vulnerable if he never proposed)."""
PROPOSE: Final = 33
"""Non-dealer proposes an exchange."""
ACCEPT: Final = 34
"""Dealer accepts the proposal."""
REFUSE: Final = 35
"""Dealer refuses the proposal; play begins."""
MARK: Final = 36
"""Holder of the king of trumps marks it for a point."""
NO_MARK: Final = 37
"""Holder of the king of trumps declines to mark it."""
DISCARD: Final = 1 << 32
"""Flag of a discard action: ``DISCARD | mask`` discards the cards of ``mask``."""

_WORDS: Final = {
    STAND: "stand",
    PROPOSE: "propose",
    ACCEPT: "accept",
    REFUSE: "refuse",
    MARK: "mark",
    NO_MARK: "no-mark",
}
_BY_WORD: Final = {w: a for a, w in _WORDS.items()}


class ActionError(ValueError):
    """Raised when an action's text is malformed (not when it is merely illegal)."""


def format_action(action: int) -> str:
    """Text notation of an action: ``"KS"``, ``"stand"``, ``"discard 7H 8C"``, ``"discard"``."""
    if action < 32:
        return str(CARDS[action])
    if action & DISCARD:
        cards = format_cards(action & ~DISCARD)
        return " ".join(["discard", *cards])
    return _WORDS[action]


def discard_span(low: int, high: int, stock: int) -> str:
    """How many cards a discard may hold, in words, with the stock when it is what limits
    the most: ``"exactly 1 card (only 1 left in the stock)"``, ``"between 1 and 5 cards"``.

    >>> discard_span(1, 3, 3)
    'between 1 and 3 cards (only 3 left in the stock)'
    """
    why = f" (only {stock} left in the stock)" if high == stock < 5 else ""
    if low == high:
        return f"exactly {low} card{'' if low == 1 else 's'}{why}"
    return f"between {low} and {high} cards{why}"


def parse_action(text: str) -> int:
    """Parse action notation; raise :class:`ActionError` if it is not well formed."""
    if not isinstance(text, str):
        raise ActionError(f"an action must be a string, got {type(text).__name__}")
    word = _BY_WORD.get(text)
    if word is not None:
        return word
    if text == "discard" or text.startswith("discard "):
        parts = text.split(" ")[1:]
        mask = 0
        for part in parts:
            try:
                card = Card.parse(part)
            except CardError as exc:
                raise ActionError(f"malformed action {text!r}: {exc}") from None
            if mask >> card & 1:
                raise ActionError(f"malformed action {text!r}: card {part} listed twice")
            mask |= 1 << card
        return DISCARD | mask
    try:
        return int(Card.parse(text))
    except CardError as exc:
        # No word is this short: the text was meant as a card ('10H', 'kh'), so say
        # what is wrong with it as a card.
        if len(text) <= 3:
            raise ActionError(f"malformed action {text!r}: {exc}") from None
    raise ActionError(
        f"malformed action {text!r}: expected a card like 'KH', one of "
        f"{', '.join(repr(w) for w in _BY_WORD)}, or 'discard' followed by cards"
    )


class IllegalActionError(ValueError):
    """Raised by the checked entry points for a well-formed action that is not legal now.

    Not raised by :meth:`State.apply`, which trusts its caller.
    """


# --------------------------------------------------------------------------- phases, events


class Phase(IntEnum):
    """What the game waits for next."""

    DEAL = 0
    """Chance: the next deal's deck."""
    PROPOSE = 1
    """The non-dealer: stand or propose."""
    ANSWER = 2
    """The dealer: accept or refuse."""
    DISCARD = 3
    """The player to act: discard and draw."""
    MARK = 4
    """The holder of the king of trumps: mark it or not."""
    TRICK = 5
    """The player to act: play a card."""
    GAME_OVER = 6
    """The game is won; nothing more happens."""


class Event(IntEnum):
    """Kinds of public event in ``State.events`` (tuples ``(kind, seat, value)``)."""

    DEAL = 0
    """A deal began; value is the turn-up card, seat the dealer."""
    STAND = 1
    """Seat played without proposing."""
    PROPOSE = 2
    """Seat proposed."""
    ACCEPT = 3
    """Seat accepted."""
    REFUSE = 4
    """Seat refused."""
    EXCHANGE = 5
    """Seat discarded and drew ``value`` cards."""
    MARK = 6
    """Seat marked the king of trumps (value: the card)."""
    CARD = 7
    """Seat played card ``value``."""
    TRICK = 8
    """Seat won a trick (value: the trick's number, 1-5)."""
    SCORE = 9
    """Seat scored; value is ``points * 16 + reason`` (see :class:`ScoreReason`)."""


class ScoreReason(IntEnum):
    """Why points were scored."""

    KING_TURNED_UP = 0
    KING_MARKED = 1
    POINT = 2
    POINT_VULNERABLE = 3
    VOLE = 4
    VOLE_VULNERABLE = 5


# --------------------------------------------------------------------------- pure helpers

HIGHER_IN_SUIT: Final = tuple(~((2 << c) - 1) & SUIT_MASKS[c >> 3] for c in range(32))
"""For each card, the bit set of the higher cards of its suit."""


def legal_cards(hand: int, lead: int, trump: int, must_trump: bool = True) -> int:
    """Bit set of the cards of ``hand`` that may be played to a trick.

    ``lead`` is the card led, or -1 when this player leads.  Rules section 5: follow
    suit and beat the card led if possible; with no card of the suit led, trump if
    possible (when ``must_trump``); otherwise anything.
    """
    if lead < 0:
        return hand
    same = hand & SUIT_MASKS[lead >> 3]
    if same:
        higher = same & HIGHER_IN_SUIT[lead]
        return higher or same
    if must_trump:
        trumps = hand & SUIT_MASKS[trump]
        if trumps:
            return trumps
    return hand


def beats(lead: int, card: int, trump: int) -> bool:
    """Whether ``card``, played second, wins the trick that ``lead`` opened."""
    if card >> 3 == lead >> 3:
        return card > lead
    return card >> 3 == trump


# --------------------------------------------------------------------------- scoring
# The one implementation of the scoring rules (§6, §7): the state machine scores with
# these, and the engines value outcomes with them.


def trick_score(tricks: int, loser_vulnerable: bool, rules: Rules) -> tuple[int, ScoreReason]:
    """Points and reason the winner of a deal's tricks scores for taking ``tricks`` (3-5).

    The point (three or four tricks) is 1, or 2 against a vulnerable loser; the vole
    (all five) is 2, or ``vulnerable_vole_points`` against a vulnerable loser.  Before
    the ``max_points_per_deal`` cap (see :func:`capped_points`).
    """
    if tricks == 5:
        if loser_vulnerable and rules.vulnerable_vole_points == 3:
            return 3, ScoreReason.VOLE_VULNERABLE
        return 2, ScoreReason.VOLE
    if loser_vulnerable:
        return 2, ScoreReason.POINT_VULNERABLE
    return 1, ScoreReason.POINT


def deal_points(
    tricks: int, vulnerable: Sequence[bool], seat: int, rules: Rules
) -> tuple[int, int]:
    """Points (``seat``'s, the opponent's) scored when ``seat`` ends a deal with ``tricks`` (0-5).

    ``vulnerable`` is indexed by seat.  Before the ``max_points_per_deal`` cap.
    """
    if tricks >= 3:
        return trick_score(tricks, vulnerable[1 - seat], rules)[0], 0
    return 0, trick_score(5 - tricks, vulnerable[seat], rules)[0]


def capped_points(points: int, scored_this_deal: int, rules: Rules) -> int:
    """What ``points`` more are worth to a seat that has scored ``scored_this_deal`` this deal.

    ``max_points_per_deal`` caps a seat's points in one deal, king points included.
    """
    cap = rules.max_points_per_deal
    if cap is None:
        return points
    return max(0, min(points, cap - scored_this_deal))


def reaches_target(score: int, rules: Rules) -> bool:
    """Whether a game score wins the game: reaching the target is enough."""
    return score >= rules.target


# --------------------------------------------------------------------------- decks

Seed = int | str
"""A tournament seed: an int or a string; only its canonical text (:func:`seed_text`) counts."""

DECK_VERSION: Final = 2
"""Version of the deck derivation, part of every HMAC message (1 was a seeded Mersenne Twister)."""

# (i, limit) for each Fisher-Yates step: a byte b is used for a draw in [0, i] only if
# b < limit, the largest multiple of i + 1 not above 256, so b % (i + 1) is uniform.
_DECK_STEPS: Final = tuple((i, 256 - 256 % (i + 1)) for i in range(31, 0, -1))


def seed_text(seed: Seed) -> str:
    """The canonical text of a seed: the decimal digits of an int, a string as it is."""
    return seed if isinstance(seed, str) else str(int(seed))


def seed_sha256(seed: Seed) -> str:
    """The public commitment to a seed: hex SHA-256 of its canonical text in UTF-8."""
    return hashlib.sha256(seed_text(seed).encode("utf-8")).hexdigest()


def seed_is_short(seed: Seed) -> bool:
    """Whether a seed holds fewer than 128 bits: an int below 2**127, a string under 32 chars."""
    return len(seed) < 32 if isinstance(seed, str) else seed < 2**127


def deck_for(seed: Seed, game: int, deal: int) -> tuple[int, ...]:
    """The 32-card order of deal ``deal`` of game (deal set) ``game`` under secret ``seed``.

    Keyed, so that the decks cannot be rebuilt without the seed: the bytes of
    HMAC-SHA256(key = the seed's canonical text in UTF-8, message =
    ``"ecarte-deck/2/{game}/{deal}/{block}"``) for block = 0, 1, 2, ... drive an
    unbiased Fisher-Yates shuffle of the cards 0-31 (rejection sampling, one byte per
    draw).  README.md ("Cards and notation") spells the algorithm out with a test
    vector.  Two games that pass the same ``game`` number get the same deals, which is
    how duplicate pairs share their cards.
    """
    key = seed_text(seed).encode("utf-8")
    prefix = b"ecarte-deck/%d/%d/%d/" % (DECK_VERSION, game, deal)
    # 31 draws and 0.83 rejections on average: two blocks (64 bytes) all but always suffice.
    stream = hmac.digest(key, prefix + b"0", "sha256") + hmac.digest(key, prefix + b"1", "sha256")
    blocks = 2
    pos = 0
    deck = list(range(32))
    for i, limit in _DECK_STEPS:
        while True:
            if pos == len(stream):
                stream += hmac.digest(key, prefix + b"%d" % blocks, "sha256")
                blocks += 1
            byte = stream[pos]
            pos += 1
            if byte < limit:
                break
        j = byte % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def next_first_dealer(rules: Rules, last_dealer: int, winner: int) -> int:
    """First dealer of the next game, from the last game's last dealer and its winner."""
    if rules.next_game_dealer == "loser":
        return 1 - winner
    return 1 - last_dealer


# Positions (0-based) of the deck given to the non-dealer / the dealer.
_PACKETS: Final = {
    "3-2": ((0, 1, 2, 6, 7), (3, 4, 5, 8, 9)),
    "2-3": ((0, 1, 4, 5, 6), (2, 3, 7, 8, 9)),
}
_ALL_NUMBERS: Final = set(range(32))
TURNUP_POSITION: Final = 10
STOCK_START: Final = 11


# --------------------------------------------------------------------------- the state


class State:
    """A game of Écarté in progress: scores, dealer and the current deal.

    Create with :func:`new_game`.  Mutable; :meth:`clone` copies it cheaply.  Read
    the public fields, but change the state only through :meth:`deal` and the
    ``apply`` methods.  A seat's view of it is :func:`arbiter.view.observe`.
    """

    __slots__ = (
        "deal_number",
        "deal_points",
        "dealer",
        "deck",
        "discards",
        "events",
        "exchanges",
        "hands",
        "king_done",
        "lead",
        "marked",
        "phase",
        "played",
        "proposals",
        "rules",
        "scores",
        "stock_pos",
        "to_act",
        "trick_cards",
        "tricks",
        "trump",
        "turnup",
        "vulnerable",
        "winner",
    )

    rules: Rules
    """The rule set in force."""
    scores: list[int]
    """Game points of seats 0 and 1."""
    dealer: int
    """Seat dealing the current (or next) deal."""
    deal_number: int
    """Deals begun in this game (1 during the first deal)."""
    phase: Phase
    """What the game waits for next."""
    to_act: int
    """Seat that must act, or -1 (chance or game over)."""
    deck: tuple[int, ...]
    """The current deal's 32-card order (private: never shown to a player)."""
    hands: list[int]
    """Bit sets of the two hands (private)."""
    stock_pos: int
    """Index in ``deck`` of the top card of the stock (32 when it is empty)."""
    turnup: int
    """The turned-up card (public)."""
    trump: int
    """Trump suit index."""
    vulnerable: list[bool]
    """Vulnerability of each seat in this deal."""
    proposals: int
    """Proposals made in this deal."""
    exchanges: int
    """Exchanges completed in this deal."""
    discards: list[list[int]]
    """Each seat's discards in this deal, one bit set per exchange (private)."""
    tricks: list[int]
    """Tricks won by each seat in this deal."""
    lead: int
    """Card led to the current trick, or -1."""
    trick_cards: list[int]
    """Cards played to the current trick (0, 1 or 2 of them)."""
    played: list[int]
    """Bit sets of the cards each seat has played this deal."""
    king_done: bool
    """Whether the king-of-trumps decision is over for this deal."""
    marked: int
    """Seat that marked the king this deal, or -1."""
    deal_points: list[int]
    """Points each seat scored in this deal so far (for ``max_points_per_deal``)."""
    events: list[tuple[int, int, int]]
    """Public events of the current deal: ``(Event, seat, value)``."""
    winner: int
    """Seat that won the game, or -1."""

    # -- construction -----------------------------------------------------------------

    def clone(self) -> State:
        """An independent copy (lists copied; the rule set and deck are shared)."""
        new = State.__new__(State)
        new.rules = self.rules
        new.scores = self.scores[:]
        new.dealer = self.dealer
        new.deal_number = self.deal_number
        new.phase = self.phase
        new.to_act = self.to_act
        new.deck = self.deck
        new.hands = self.hands[:]
        new.stock_pos = self.stock_pos
        new.turnup = self.turnup
        new.trump = self.trump
        new.vulnerable = self.vulnerable[:]
        new.proposals = self.proposals
        new.exchanges = self.exchanges
        new.discards = [self.discards[0][:], self.discards[1][:]]
        new.tricks = self.tricks[:]
        new.lead = self.lead
        new.trick_cards = self.trick_cards[:]
        new.played = self.played[:]
        new.king_done = self.king_done
        new.marked = self.marked
        new.deal_points = self.deal_points[:]
        new.events = self.events[:]
        new.winner = self.winner
        return new

    def deal(self, deck: tuple[int, ...] | list[int]) -> None:
        """Chance move: start the next deal with this 32-card order.

        Deals in packets, turns up the 11th card and scores a turned-up king for the
        dealer (which may end the game at once).
        """
        if self.phase != Phase.DEAL:
            raise IllegalActionError(f"cannot deal now: the game is in phase {self.phase.name}")
        if len(deck) != 32 or set(deck) != _ALL_NUMBERS:
            raise ValueError("a deck must hold each of the 32 card numbers exactly once")
        deck = tuple(deck)
        nd_pos, d_pos = _PACKETS[self.rules.packets]
        nd = 1 - self.dealer
        hands = [0, 0]
        for p in nd_pos:
            hands[nd] |= 1 << deck[p]
        for p in d_pos:
            hands[self.dealer] |= 1 << deck[p]
        self.deal_number += 1
        self.deck = deck
        self.hands = hands
        self.turnup = deck[TURNUP_POSITION]
        self.trump = self.turnup >> 3
        self.stock_pos = STOCK_START
        self.vulnerable = [False, False]
        self.proposals = 0
        self.exchanges = 0
        self.discards = [[], []]
        self.tricks = [0, 0]
        self.lead = -1
        self.trick_cards = []
        self.played = [0, 0]
        self.marked = -1
        self.deal_points = [0, 0]
        self.events = [(Event.DEAL, self.dealer, self.turnup)]
        # A turned-up king belongs to nobody's hand: there is nothing to mark.
        self.king_done = self.turnup & 7 == KING
        self.phase = Phase.PROPOSE
        self.to_act = nd
        if self.king_done:
            self._score(self.dealer, 1, ScoreReason.KING_TURNED_UP)

    # -- queries ----------------------------------------------------------------------

    @property
    def non_dealer(self) -> int:
        """Seat of the non-dealer (elder hand) of the current deal."""
        return 1 - self.dealer

    @property
    def stock_left(self) -> int:
        """Cards left in the stock."""
        return 32 - self.stock_pos

    def is_over(self) -> bool:
        """Whether the game has been won."""
        return self.phase == Phase.GAME_OVER

    def legal_actions(self) -> list[int]:
        """The actions the seat ``to_act`` may take now (empty at chance or game over)."""
        phase = self.phase
        if phase == Phase.TRICK:
            hand = self.hands[self.to_act]
            return list(card_list(legal_cards(hand, self.lead, self.trump, self.rules.must_trump)))
        if phase == Phase.PROPOSE:
            return [STAND, PROPOSE]
        if phase == Phase.ANSWER:
            return [ACCEPT, REFUSE]
        if phase == Phase.MARK:
            return [MARK, NO_MARK]
        if phase == Phase.DISCARD:
            low, high = self._discard_limits()
            hand = self.hands[self.to_act]
            out = []
            sub = hand
            # Every non-empty subset of the hand, by the (sub - 1) & hand walk.
            if high >= 5:
                while sub:
                    out.append(DISCARD | sub)
                    sub = (sub - 1) & hand
            else:
                while sub:
                    if sub.bit_count() <= high:
                        out.append(DISCARD | sub)
                    sub = (sub - 1) & hand
            if low == 0:
                out.append(DISCARD)
            return out
        return []

    def _discard_limits(self) -> tuple[int, int]:
        """Fewest and most cards the player to act may discard now."""
        high = min(5, 32 - self.stock_pos)
        if self.to_act == self.dealer:
            return self.rules.dealer_min_discard, high
        return 1, high

    def is_legal(self, action: int) -> bool:
        """Whether ``action`` is legal now (without generating the whole list)."""
        phase = self.phase
        if phase == Phase.TRICK:
            if not 0 <= action < 32:
                return False
            hand = self.hands[self.to_act]
            return bool(
                legal_cards(hand, self.lead, self.trump, self.rules.must_trump) >> action & 1
            )
        if phase == Phase.DISCARD:
            if action & ~(DISCARD | 0xFFFFFFFF) or not action & DISCARD:
                return False
            mask = action & 0xFFFFFFFF
            low, high = self._discard_limits()
            return mask & ~self.hands[self.to_act] == 0 and low <= mask.bit_count() <= high
        return action in self.legal_actions()

    # -- applying actions -------------------------------------------------------------

    def apply_text(self, seat: int, text: str) -> int:
        """Parse and apply an untrusted action by ``seat``; returns the action applied.

        Raises :class:`ActionError` for malformed text and :class:`IllegalActionError`
        for a well-formed action that is not legal here (the state is unchanged).
        """
        action = parse_action(text)
        self.apply_checked(seat, action)
        return action

    def apply_checked(self, seat: int, action: int) -> None:
        """Apply an untrusted action by ``seat`` after checking it is legal."""
        if self.phase in (Phase.DEAL, Phase.GAME_OVER):
            raise IllegalActionError(
                f"{format_action(action)!r} by seat {seat}: no player may act in phase "
                f"{self.phase.name}"
            )
        if seat != self.to_act:
            raise IllegalActionError(
                f"{format_action(action)!r} by seat {seat}: it is seat {self.to_act}'s turn "
                f"({self.phase.name})"
            )
        if not self.is_legal(action):
            legal = [format_action(a) for a in self.legal_actions()]
            shown = ", ".join(legal[:8]) + (", ..." if len(legal) > 8 else "")
            raise IllegalActionError(
                f"illegal action {format_action(action)!r} by seat {seat} in phase "
                f"{self.phase.name}{self._why_illegal(action)}; legal: {shown}"
            )
        self.apply(action)

    def _why_illegal(self, action: int) -> str:
        if self.phase == Phase.TRICK and 0 <= action < 32:
            if not self.hands[self.to_act] >> action & 1:
                return f": {CARDS[action]} is not in the hand"
            if self.lead >= 0:
                return (
                    f": {CARDS[self.lead]} was led and the duty to follow suit, beat it "
                    "or trump forbids it"
                )
        if self.phase == Phase.DISCARD and action & DISCARD:
            mask = action & 0xFFFFFFFF
            low, high = self._discard_limits()
            if mask & ~self.hands[self.to_act]:
                return ": a discarded card is not in the hand"
            span = discard_span(low, high, 32 - self.stock_pos)
            return f": must discard {span}, not {mask.bit_count()}"
        return ""

    def apply(self, action: int) -> None:
        """Apply a legal action by the seat to act (trusted: not checked)."""
        phase = self.phase
        seat = self.to_act
        if phase == Phase.TRICK:
            self._play_card(seat, action)
        elif phase == Phase.DISCARD:
            self._discard(seat, action & 0xFFFFFFFF)
        elif phase == Phase.PROPOSE:
            if action == STAND:
                self.events.append((Event.STAND, seat, 0))
                if self.exchanges == 0:
                    self.vulnerable[seat] = True
                self._start_play()
            else:
                self.proposals += 1
                self.events.append((Event.PROPOSE, seat, 0))
                self.phase = Phase.ANSWER
                self.to_act = self.dealer
        elif phase == Phase.ANSWER:
            if action == ACCEPT:
                self.events.append((Event.ACCEPT, seat, 0))
                self.phase = Phase.DISCARD
                self.to_act = 1 - self.dealer
            else:
                self.events.append((Event.REFUSE, seat, 0))
                if self.proposals == 1 or self.rules.refusal_penalty == "any":
                    self.vulnerable[seat] = True
                self._start_play()
        elif phase == Phase.MARK:
            self.king_done = True
            self.phase = Phase.TRICK
            if self.lead < 0:
                # Decided before the opening lead (possibly by the dealer): lead next.
                self.to_act = 1 - self.dealer
            if action == MARK:
                self.marked = seat
                self.events.append((Event.MARK, seat, self.trump * 8 + KING))
                self._score(seat, 1, ScoreReason.KING_MARKED)
        else:
            raise IllegalActionError(f"no action can be applied in phase {phase.name}")

    # -- internals --------------------------------------------------------------------

    def _discard(self, seat: int, mask: int) -> None:
        n = mask.bit_count()
        hand = self.hands[seat] & ~mask
        pos = self.stock_pos
        deck = self.deck
        for i in range(pos, pos + n):
            hand |= 1 << deck[i]
        self.hands[seat] = hand
        self.stock_pos = pos + n
        self.discards[seat].append(mask)
        self.events.append((Event.EXCHANGE, seat, n))
        if seat != self.dealer:
            if self.stock_pos < 32:
                self.to_act = self.dealer
                return
            # Stock empty: the dealer takes none.
        self.exchanges += 1
        limit = self.rules.max_exchange_rounds
        if self.stock_pos >= 32 or (limit is not None and self.exchanges >= limit):
            self._start_play()
        else:
            self.phase = Phase.PROPOSE
            self.to_act = 1 - self.dealer

    def _start_play(self) -> None:
        self.phase = Phase.TRICK
        leader = 1 - self.dealer
        self.to_act = leader
        if not self.king_done:
            king = 1 << (self.trump * 8 + KING)
            if self.rules.king_deadline == "opening_lead":
                holder = 0 if self.hands[0] & king else 1 if self.hands[1] & king else -1
                if holder < 0:
                    self.king_done = True
                else:
                    self.phase = Phase.MARK
                    self.to_act = holder
            elif self.hands[leader] & king:
                self.phase = Phase.MARK
            elif not self.hands[self.dealer] & king:
                self.king_done = True

    def _play_card(self, seat: int, card: int) -> None:
        self.hands[seat] &= ~(1 << card)
        self.played[seat] |= 1 << card
        self.events.append((Event.CARD, seat, card))
        lead = self.lead
        if lead < 0:
            self.lead = card
            self.trick_cards = [card]
            other = 1 - seat
            self.to_act = other
            # Own-first-card deadline: the dealer decides after seeing the lead.
            if (
                not self.king_done
                and not self.played[other]
                and (self.hands[other] >> (self.trump * 8 + KING) & 1)
            ):
                self.phase = Phase.MARK
            return
        self.trick_cards.append(card)
        # Whoever wins this trick: the leader unless the second card beats the lead.
        winner = seat if beats(lead, card, self.trump) else 1 - seat
        self.tricks[winner] += 1
        n = self.tricks[0] + self.tricks[1]
        self.events.append((Event.TRICK, winner, n))
        self.lead = -1
        self.trick_cards = []
        if self.king_done is False:
            self.king_done = True  # both have played: the deadline has passed
        if n == 5:
            self._score_deal()
        else:
            self.to_act = winner

    def _score_deal(self) -> None:
        w = 0 if self.tricks[0] >= 3 else 1
        points, reason = trick_score(self.tricks[w], self.vulnerable[1 - w], self.rules)
        self._score(w, points, reason)
        if self.phase != Phase.GAME_OVER:
            self.phase = Phase.DEAL
            self.to_act = -1
            self.dealer = 1 - self.dealer

    def _score(self, seat: int, points: int, reason: ScoreReason) -> None:
        points = capped_points(points, self.deal_points[seat], self.rules)
        self.deal_points[seat] += points
        self.scores[seat] += points
        self.events.append((Event.SCORE, seat, points * 16 + reason))
        if reaches_target(self.scores[seat], self.rules):
            self.winner = seat
            self.phase = Phase.GAME_OVER
            self.to_act = -1

    def __repr__(self) -> str:
        return (
            f"<State deal {self.deal_number} {self.phase.name} to_act={self.to_act} "
            f"dealer={self.dealer} scores={self.scores} trump={SUIT_CHARS[self.trump]}>"
        )


def new_game(rules: Rules = DEFAULT_RULES, first_dealer: int = 0) -> State:
    """A new game at 0-0 waiting for its first deal, with ``first_dealer`` to deal."""
    if first_dealer not in (0, 1):
        raise ValueError(f"first_dealer must be 0 or 1, not {first_dealer!r}")
    s = State.__new__(State)
    s.rules = rules
    s.scores = [0, 0]
    s.dealer = first_dealer
    s.deal_number = 0
    s.phase = Phase.DEAL
    s.to_act = -1
    s.deck = ()
    s.hands = [0, 0]
    s.stock_pos = 32
    s.turnup = -1
    s.trump = 0
    s.vulnerable = [False, False]
    s.proposals = 0
    s.exchanges = 0
    s.discards = [[], []]
    s.tricks = [0, 0]
    s.lead = -1
    s.trick_cards = []
    s.played = [0, 0]
    s.king_done = True
    s.marked = -1
    s.deal_points = [0, 0]
    s.events = []
    s.winner = -1
    return s
