"""Cards of the 32-card Écarté pack, their text notation and bit-set helpers.

A card is a small integer ``suit * 8 + rank`` where ``rank`` counts up from the
seven (0) to the king (7), so within a suit a higher number always beats a lower
one.  The rank order of Écarté is K Q J A 10 9 8 7: the ace sits between the
jack and the ten, which is why ``rank`` is not the "face value".

A set of cards (a hand, the cards played, a discard) is an ``int`` bit set with
bit ``card`` set for each member.  All the rules code works on bit sets; the
:class:`Card` type and the notation exist for people and for the wire.

Notation: two characters, rank then suit, e.g. ``KS`` (king of spades), ``TH``
(ten of hearts), ``AD``, ``7C``.  Ranks ``K Q J A T 9 8 7``; suits ``S H D C``.
Parsing is strict: upper case only, ``T`` for the ten (``10H`` is rejected with
a hint), nothing around the two characters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = [
    "ALL_CARDS",
    "CARDS",
    "CARD_NUMBER",
    "CARD_TEXT",
    "FULL_PACK",
    "JACK",
    "KING",
    "QUEEN",
    "RANK_CHARS",
    "SUIT_CHARS",
    "SUIT_MASKS",
    "Card",
    "CardError",
    "card_list",
    "card_mask",
    "cards_text",
    "cards_to_mask",
    "format_cards",
    "king_of",
    "mask_to_cards",
    "parse_cards",
    "rank_of",
    "suit_of",
]

SUIT_CHARS: Final = "SHDC"
"""Suit letters in suit-index order: spades, hearts, diamonds, clubs."""

RANK_CHARS: Final = "789TAJQK"
"""Rank letters from the lowest (index 0, the seven) to the highest (7, the king)."""

SUIT_NAMES: Final = ("spades", "hearts", "diamonds", "clubs")
RANK_NAMES: Final = ("seven", "eight", "nine", "ten", "ace", "jack", "queen", "king")

KING: Final = 7
"""Rank index of the king."""
QUEEN: Final = 6
"""Rank index of the queen."""
JACK: Final = 5
"""Rank index of the jack (the knave)."""

SUIT_MASKS: Final = tuple(0xFF << (8 * s) for s in range(4))
"""Bit set of the eight cards of each suit."""

FULL_PACK: Final = (1 << 32) - 1
"""Bit set of all 32 cards."""


class CardError(ValueError):
    """Raised when a card's text is not valid notation (never for an illegal play)."""


class Card(int):
    """One card, an ``int`` from 0 to 31 (``suit * 8 + rank``) that prints as notation.

    >>> Card.parse("KH")
    Card.parse('KH')
    >>> str(Card.parse("TS")), Card.parse("TS").suit, Card.parse("TS").rank
    ('TS', 0, 3)
    """

    __slots__ = ()

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse two-character notation (``"KH"``); raise :class:`CardError` otherwise."""
        card = _BY_TEXT.get(text)
        if card is None:
            raise CardError(_explain(text))
        return card

    @property
    def suit(self) -> int:
        """Suit index: 0 spades, 1 hearts, 2 diamonds, 3 clubs."""
        return self >> 3

    @property
    def rank(self) -> int:
        """Rank index: 0 for the seven up to 7 for the king."""
        return self & 7

    @property
    def bit(self) -> int:
        """This card as a one-card bit set."""
        return 1 << self

    def name(self) -> str:
        """Long English name, e.g. ``'king of hearts'``."""
        return f"{RANK_NAMES[self & 7]} of {SUIT_NAMES[self >> 3]}"

    def __str__(self) -> str:
        return CARD_TEXT[self]

    def __repr__(self) -> str:
        return f"Card.parse({CARD_TEXT[self]!r})"


CARD_TEXT: Final = tuple(RANK_CHARS[c & 7] + SUIT_CHARS[c >> 3] for c in range(32))
"""The notation of each card number (``CARD_TEXT[n] == str(CARDS[n])``, without the call)."""
CARD_NUMBER: Final = {text: n for n, text in enumerate(CARD_TEXT)}
"""Card number of each notation (upper case): the inverse of :data:`CARD_TEXT`."""
CARDS: Final = tuple(Card(c) for c in range(32))
"""The 32 cards, indexed by their number."""
ALL_CARDS: Final = CARDS
_BY_TEXT: Final = {CARD_TEXT[c]: CARDS[c] for c in range(32)}


def _explain(text: object) -> str:
    if not isinstance(text, str):
        return f"a card must be a string like 'KH', got {type(text).__name__} {text!r}"
    hint = ""
    if len(text) == 3 and text[:2] == "10":
        hint = f" (the ten is written T: 'T{text[2]}')"
    elif len(text) == 2 and text.upper() in _BY_TEXT:
        hint = f" (notation is upper case: {text.upper()!r})"
    elif len(text) == 2 and text[0] in RANK_CHARS and text[1] not in SUIT_CHARS:
        hint = f" (suit must be one of {', '.join(SUIT_CHARS)})"
    elif len(text) == 2 and text[0] not in RANK_CHARS:
        hint = f" (rank must be one of {' '.join(RANK_CHARS[::-1])})"
    return f"invalid card {text!r}: expected rank then suit, like 'KH' or 'TS'{hint}"


def suit_of(card: int) -> int:
    """Suit index of a card number."""
    return card >> 3


def rank_of(card: int) -> int:
    """Rank index of a card number (0 = seven ... 7 = king)."""
    return card & 7


# Bit set -> card numbers, by table lookup one suit (byte) at a time: hands have at
# most a handful of cards, and four lookups beat a bit-by-bit loop in CPython.
_BYTE_CARDS: Final = tuple(
    tuple(tuple(8 * s + r for r in range(8) if b >> r & 1) for b in range(256)) for s in range(4)
)
_B0, _B1, _B2, _B3 = _BYTE_CARDS


def king_of(trump: int) -> int:
    """Card number of the king of suit ``trump``."""
    return trump * 8 + KING


def card_list(mask: int) -> tuple[int, ...]:
    """Card numbers in a bit set, lowest first (fast; plain ints)."""
    return _B0[mask & 255] + _B1[mask >> 8 & 255] + _B2[mask >> 16 & 255] + _B3[mask >> 24]


def mask_to_cards(mask: int) -> list[Card]:
    """Cards of a bit set as :class:`Card` objects, lowest first."""
    return [CARDS[c] for c in card_list(mask)]


def cards_to_mask(cards: Iterable[int]) -> int:
    """Bit set of the given card numbers."""
    mask = 0
    for c in cards:
        mask |= 1 << c
    return mask


def card_mask(texts: Iterable[str]) -> int:
    """Bit set of cards given in notation; a malformed one raises :class:`CardError`."""
    mask = 0
    for t in texts:
        mask |= 1 << Card.parse(t)
    return mask


# For each suit and each of the 256 sets of its ranks, the cards' notation, highest
# rank first: formatting a hand is then four lookups, not a loop over 32 bits.
_SUIT_RUNS: Final = tuple(
    tuple(
        tuple(CARD_TEXT[8 * s + r] for r in range(7, -1, -1) if bits >> r & 1)
        for bits in range(256)
    )
    for s in range(4)
)
_SUIT_TEXTS: Final = tuple(tuple("".join(run) for run in runs) for runs in _SUIT_RUNS)


def format_cards(mask: int) -> list[str]:
    """Notation of every card in a bit set, highest suit-order first then by rank.

    Cards come out grouped by suit (S H D C) and, within a suit, highest rank first,
    the order a player would sort a hand in.
    """
    s, h, d, c = _SUIT_RUNS
    return [*s[mask & 255], *h[mask >> 8 & 255], *d[mask >> 16 & 255], *c[mask >> 24 & 255]]


def cards_text(mask: int) -> str:
    """:func:`format_cards` joined into one string (``"KSQS7H"``)."""
    s, h, d, c = _SUIT_TEXTS
    return s[mask & 255] + h[mask >> 8 & 255] + d[mask >> 16 & 255] + c[mask >> 24 & 255]


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Parse several notations; a malformed one raises :class:`CardError`."""
    return [Card.parse(t) for t in texts]
