"""Helpers shared by the bundled engines: reading a view, the double-dummy solver,
deal scoring, and an in-process match driver.

Reading a view
    :func:`read_view` turns an :class:`arbiter.view.Observation` (cards as text) into
    a :class:`ViewInfo` of bit sets and small ints, plus what the public events say
    about the opponent's hand: the cards he has been *proved* not to hold (he failed
    to follow suit, to beat the card led, or to trump) and his exchange history.

The double-dummy solver
    With both hands known, the rest of a deal is a two-player game of perfect
    information over at most five tricks.  :func:`dd_lead` returns how many of the
    remaining tricks the player on lead can make against best defence.  It is a plain
    minimax over bit sets, memoised on ``(leader's hand, follower's hand)`` (the trump
    suit and the ``must_trump`` option pick the memo table), with one cut: when a lead
    cannot beat the best lead found so far, its other replies are not tried.  A deal
    is scored by a function of the final trick count that never decreases as one's
    tricks increase, and minimax commutes with such a function, so maximising tricks
    also maximises points (vulnerability, vole and the game target included); the
    solver therefore only counts tricks.  Five cards each means at most 252 distinct
    positions, and the memo table is shared between calls (different determinisations
    of one deal meet the same endings).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from arbiter.cards import FULL_PACK, KING, SUIT_MASKS, Card, card_list
from arbiter.rules import (
    DISCARD,
    HIGHER_IN_SUIT,
    Phase,
    Rules,
    Seed,
    State,
    deck_for,
    legal_cards,
    new_game,
    parse_action,
)
from arbiter.view import (
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
    observe,
)

__all__ = [
    "StatePlayer",
    "ViewChooser",
    "ViewInfo",
    "card_mask",
    "choose_random",
    "dd_at_least",
    "dd_card_tricks",
    "dd_class",
    "dd_lead",
    "deal_points",
    "game_utility",
    "play_game",
    "play_match",
    "read_view",
    "trick_utilities",
    "view_player",
]

ViewChooser = Callable[[Observation, random.Random], str]
"""A strategy seen from the wire: a seat's view in, an action's text out."""

StatePlayer = Callable[[State, int, random.Random], int]
"""An in-process player: the whole state (it promises to look only at what it may), a
seat and a random source in, an action int out."""


def card_mask(texts: list[str]) -> int:
    """Bit set of cards given in notation."""
    mask = 0
    for t in texts:
        mask |= 1 << Card.parse(t)
    return mask


# --------------------------------------------------------------------------- the view


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


def choose_random(view: Observation, rng: random.Random) -> str:
    """The random player: any legal action, uniformly."""
    return rng.choice(view.legal)


# --------------------------------------------------------------------------- double dummy

_MEMOS: dict[tuple[int, bool], dict[int, int]] = {}
_MEMO_LIMIT: Final = 40_000
"""Entries per memo table before it is dropped: resizing a big dict stalls for
milliseconds, which a timed search cannot afford."""


def _memo(trump: int, must_trump: bool) -> dict[int, int]:
    key = (trump, must_trump)
    memo = _MEMOS.get(key)
    if memo is None or len(memo) > _MEMO_LIMIT:
        memo = _MEMOS[key] = {}
    return memo


def dd_lead(a: int, b: int, trump: int, must_trump: bool = True) -> int:
    """Tricks the player on lead with hand ``a`` makes against ``b``, both playing perfectly.

    ``a`` and ``b`` are bit sets of equal size (0 to 5 cards).
    """
    if not a:
        return 0
    return _lead(a, b, trump, must_trump, _memo(trump, must_trump))


def _lead(a: int, b: int, trump: int, must_trump: bool, memo: dict[int, int]) -> int:
    key = a << 32 | b
    v = memo.get(key)
    if v is not None:
        return v
    n = a.bit_count()
    if n == 1:
        c = a.bit_length() - 1
        r = b.bit_length() - 1
        if r >> 3 == c >> 3:
            v = 0 if r > c else 1
        else:
            v = 0 if r >> 3 == trump else 1
        memo[key] = v
        return v
    best = -1
    for c in card_list(a):
        a2 = a & ~(1 << c)
        cs = c >> 3
        replies = legal_cards(b, c, trump, must_trump)
        worst = n
        for r in card_list(replies):
            b2 = b & ~(1 << r)
            if (r > c) if r >> 3 == cs else (r >> 3 == trump):
                t = n - 1 - _lead(b2, a2, trump, must_trump, memo)
            else:
                t = 1 + _lead(a2, b2, trump, must_trump, memo)
            if t < worst:
                worst = t
                if worst <= best:
                    break
        if worst > best:
            best = worst
            if best == n:
                break
    memo[key] = best
    return best


_BOOL_MEMOS: dict[tuple[int, bool], dict[int, bool]] = {}


def dd_at_least(a: int, b: int, need: int, trump: int, must_trump: bool = True) -> bool:
    """Whether the player on lead with hand ``a`` makes at least ``need`` tricks against ``b``.

    The same game as :func:`dd_lead`, searched for a yes or no: much faster when only
    a threshold matters (the point at three tricks, the vole at five).
    """
    key = (trump, must_trump)
    memo = _BOOL_MEMOS.get(key)
    if memo is None or len(memo) > _MEMO_LIMIT:
        memo = _BOOL_MEMOS[key] = {}
    return _wins(a, b, need, trump, must_trump, memo)


def _wins(a: int, b: int, need: int, trump: int, must_trump: bool, memo: dict[int, bool]) -> bool:
    if need <= 0:
        return True
    n = a.bit_count()
    if need > n:
        return False
    key = (a << 32 | b) << 3 | need
    v = memo.get(key)
    if v is not None:
        return v
    if n == 1:
        c = a.bit_length() - 1
        r = b.bit_length() - 1
        if r >> 3 == c >> 3:
            v = r < c
        else:
            v = r >> 3 != trump
        memo[key] = v
        return v
    res = False
    for c in reversed(card_list(a)):
        a2 = a & ~(1 << c)
        cs = c >> 3
        replies = legal_cards(b, c, trump, must_trump)
        ok = True
        for r in card_list(replies):
            b2 = b & ~(1 << r)
            if (r > c) if r >> 3 == cs else (r >> 3 == trump):
                if _wins(b2, a2, n - need, trump, must_trump, memo):
                    ok = False
                    break
            elif not _wins(a2, b2, need - 1, trump, must_trump, memo):
                ok = False
                break
        if ok:
            res = True
            break
    memo[key] = res
    return res


def dd_class(a: int, b: int, trump: int, must_trump: bool = True) -> int:
    """:func:`dd_lead` up to what scoring can tell apart: 0, 1 (1-2), 3 (3-4) or 5 tricks."""
    if dd_at_least(a, b, 3, trump, must_trump):
        return 5 if dd_at_least(a, b, 5, trump, must_trump) else 3
    return 1 if dd_at_least(a, b, 1, trump, must_trump) else 0


def dd_card_tricks(
    me: int, opp: int, lead: int, trump: int, must_trump: bool = True
) -> dict[int, int]:
    """For each legal card of ``me``, the tricks ``me`` makes from here on with best play.

    ``lead`` is the opponent's card on the table (then ``opp`` has one card fewer than
    ``me``), or -1 when ``me`` leads.  The count includes the trick being played.
    """
    memo = _memo(trump, must_trump)
    out: dict[int, int] = {}
    if lead >= 0:
        for r in card_list(legal_cards(me, lead, trump, must_trump)):
            m2 = me & ~(1 << r)
            if (r > lead) if r >> 3 == lead >> 3 else (r >> 3 == trump):
                out[r] = 1 + (_lead(m2, opp, trump, must_trump, memo) if m2 else 0)
            else:
                n = opp.bit_count()
                out[r] = n - (_lead(opp, m2, trump, must_trump, memo) if opp else 0)
        return out
    n = me.bit_count()
    for c in card_list(me):
        m2 = me & ~(1 << c)
        worst = n
        for r in card_list(legal_cards(opp, c, trump, must_trump)):
            o2 = opp & ~(1 << r)
            if (r > c) if r >> 3 == c >> 3 else (r >> 3 == trump):
                t = n - 1 - (_lead(o2, m2, trump, must_trump, memo) if o2 else 0)
            else:
                t = 1 + (_lead(m2, o2, trump, must_trump, memo) if m2 else 0)
            worst = min(worst, t)
        out[c] = worst
    return out


# --------------------------------------------------------------------------- scoring


def deal_points(my_tricks: int, vulnerable: list[bool], me: int, rules: Rules) -> tuple[int, int]:
    """Points (mine, opponent's) that the tricks of a finished deal score."""
    opp = 1 - me
    if my_tricks >= 3:
        if my_tricks == 5:
            return (3 if vulnerable[opp] and rules.vulnerable_vole_points == 3 else 2), 0
        return (2 if vulnerable[opp] else 1), 0
    if my_tricks == 0:
        return 0, (3 if vulnerable[me] and rules.vulnerable_vole_points == 3 else 2)
    return 0, (2 if vulnerable[me] else 1)


WIN_VALUE: Final = 6.0
"""Utility of winning the game outright, in deal points (a point is worth about a
sixth of a game at the usual scores)."""


def game_utility(
    me: int,
    gained: tuple[int, int],
    scores: list[int],
    deal_so_far: list[int],
    rules: Rules,
) -> float:
    """Value for ``me`` of a deal that adds ``gained`` (mine, opponent's) points.

    Points beyond the target are worth nothing, reaching it is worth :data:`WIN_VALUE`;
    ``max_points_per_deal`` caps each side's gain given ``deal_so_far``.
    """
    g_me, g_opp = gained
    cap = rules.max_points_per_deal
    opp = 1 - me
    if cap is not None:
        g_me = max(0, min(g_me, cap - deal_so_far[me]))
        g_opp = max(0, min(g_opp, cap - deal_so_far[opp]))
    target = rules.target
    if scores[me] + g_me >= target:
        return WIN_VALUE
    if scores[opp] + g_opp >= target:
        return -WIN_VALUE
    return float(g_me - g_opp)


def trick_utilities(
    me: int,
    scores: list[int],
    vulnerable: list[bool],
    deal_so_far: list[int],
    rules: Rules,
    bonus: tuple[int, int] = (0, 0),
) -> list[float]:
    """Utility for ``me`` of finishing the deal with 0..5 tricks (extra ``bonus`` points)."""
    out = []
    for t in range(6):
        pm, po = deal_points(t, vulnerable, me, rules)
        out.append(game_utility(me, (pm + bonus[0], po + bonus[1]), scores, deal_so_far, rules))
    return out


# --------------------------------------------------------------------------- matches


def view_player(choose: ViewChooser) -> StatePlayer:
    """Adapt a view-based strategy into an in-process player (through ``observe``)."""

    def play(state: State, seat: int, rng: random.Random) -> int:
        return parse_action(choose(observe(state, seat), rng))

    return play


def play_game(
    players: tuple[StatePlayer, StatePlayer],
    seed: Seed,
    game: int,
    first_dealer: int = 0,
    rules: Rules | None = None,
    check: bool = True,
) -> int:
    """Play one game in process; returns the winning seat.

    Decks come from :func:`arbiter.rules.deck_for` with ``(seed, game, deal)``, so two
    games with the same ``game`` number get the same cards.  With ``check`` every action
    goes through :meth:`State.apply_checked` (an illegal choice raises).
    """
    state = new_game(rules or Rules(), first_dealer)
    rngs = (random.Random(f"{seed}/{game}/0"), random.Random(f"{seed}/{game}/1"))
    deal = 0
    while not state.is_over():
        if state.phase == Phase.DEAL:
            deal += 1
            state.deal(deck_for(seed, game, deal))
            continue
        seat = state.to_act
        action = players[seat](state, seat, rngs[seat])
        if check:
            state.apply_checked(seat, action)
        else:
            state.apply(action)
    return state.winner


def play_match(
    a: StatePlayer,
    b: StatePlayer,
    pairs: int,
    seed: Seed = 0,
    rules: Rules | None = None,
) -> tuple[int, int]:
    """Play ``pairs`` game pairs (same decks, seats swapped); returns (games won by a, games)."""
    wins = 0
    for g in range(pairs):
        fd = g % 2
        if play_game((a, b), seed, g, fd, rules) == 0:
            wins += 1
        if play_game((b, a), seed, g, fd, rules) == 1:
            wins += 1
    return wins, 2 * pairs


def discard_action(mask: int) -> int:
    """The discard action for a bit set."""
    return DISCARD | mask


def king_of(trump: int) -> int:
    """Card number of the king of trumps."""
    return trump * 8 + KING


def seeded_rng(name: str) -> random.Random:
    """A bot's random source: seeded from ``ECARTE_SEED`` when set (reproducible runs)."""
    import os

    seed = os.environ.get("ECARTE_SEED")
    return random.Random(f"{name}/{seed}") if seed is not None else random.Random()
