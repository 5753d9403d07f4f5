"""The double-dummy solver: the rest of a deal played with both hands known.

With both hands known, the rest of a deal is a two-player game of perfect information
over at most five tricks.  :func:`dd_lead` returns how many of the remaining tricks
the player on lead can make against best defence.  It is a plain minimax over bit
sets, memoised on ``(leader's hand, follower's hand)`` (the trump suit and the
``must_trump`` option pick the memo table), with one cut: when a lead cannot beat the
best lead found so far, its other replies are not tried.  A deal is scored by a
function of the final trick count that never decreases as one's tricks increase
(:func:`arbiter.rules.deal_points`), and minimax commutes with such a function, so
maximising tricks also maximises points (vulnerability, vole and the game target
included); the solver therefore only counts tricks.  Five cards each means at most
252 distinct positions, and the memo table is shared between calls (different
determinisations of one deal meet the same endings).
"""

from __future__ import annotations

from typing import Final

from arbiter.cards import card_list
from arbiter.rules import legal_cards

__all__ = ["dd_at_least", "dd_card_tricks", "dd_class", "dd_lead"]

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
