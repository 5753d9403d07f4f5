"""Helpers for building exact positions in rules tests."""

from __future__ import annotations

from arbiter.cards import Card
from arbiter.rules import Rules, State, make_rules, new_game

# Deck positions (0-based) of the non-dealer's and the dealer's cards with 3-2 packets.
ND_POS = (0, 1, 2, 6, 7)
D_POS = (3, 4, 5, 8, 9)


def build_deck(nd: str, d: str, turnup: str, stock: str = "") -> list[int]:
    """A deck giving these hands (3-2 packets), turn-up and stock top; the rest filled in order.

    Cards are space-separated notation, e.g. ``build_deck("KH QH JH 7S 8S", ...)``.
    """
    nd_cards = [int(Card.parse(c)) for c in nd.split()]
    d_cards = [int(Card.parse(c)) for c in d.split()]
    top = [int(Card.parse(c)) for c in stock.split()]
    up = int(Card.parse(turnup))
    assert len(nd_cards) == 5 and len(d_cards) == 5
    used = {*nd_cards, *d_cards, up, *top}
    assert len(used) == 11 + len(top), "a card is used twice"
    deck: list[int | None] = [None] * 32
    for p, c in zip(ND_POS, nd_cards, strict=True):
        deck[p] = c
    for p, c in zip(D_POS, d_cards, strict=True):
        deck[p] = c
    deck[10] = up
    rest = [c for c in range(32) if c not in used]
    stock_cards = top + rest
    for i, c in enumerate(stock_cards):
        deck[11 + i] = c
    return [c for c in deck if c is not None]


def start(
    nd: str,
    d: str,
    turnup: str,
    stock: str = "",
    rules: Rules | None = None,
    dealer: int = 0,
    scores: tuple[int, int] = (0, 0),
) -> State:
    """A game with ``dealer`` dealing the given deal, at the given scores."""
    st = new_game(rules or make_rules(), dealer)
    st.scores = list(scores)
    st.deal(build_deck(nd, d, turnup, stock))
    return st


def act(st: State, *texts: str) -> None:
    """Apply actions (text) for whoever is to act, checked."""
    for t in texts:
        st.apply_text(st.to_act, t)


def legal(st: State) -> set[str]:
    """Legal actions as text."""
    from arbiter.rules import format_action

    return {format_action(a) for a in st.legal_actions()}
