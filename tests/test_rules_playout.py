"""Seeded random playouts over many deals, checking the invariants of the rules module.

Over 10,000+ deals across presets and options: the 32 cards are conserved in every
state; legal actions are non-empty until the end; every legal action applies;
illegal ones raise a precise error and change nothing; scores only move as the
rules allow; and no observation ever holds the opponent's hand, his discards or the
stock order.
"""

from __future__ import annotations

import random
import re

import msgspec
import pytest

from arbiter.cards import CARDS, FULL_PACK, format_cards
from arbiter.rules import (
    DISCARD,
    MARK,
    IllegalActionError,
    Phase,
    Rules,
    State,
    deck_for,
    make_rules,
    new_game,
    next_first_dealer,
)
from arbiter.view import observe

RULE_SETS = [
    make_rules(),
    make_rules("cavendish"),
    make_rules(packets="2-3", king_deadline="opening_lead", refusal_penalty="any"),
    make_rules(must_trump=False, vulnerable_vole_points=3, max_points_per_deal=2, target=7),
    make_rules("cavendish", max_exchange_rounds=2, next_game_dealer="loser", target=11),
]

CARD_TOKEN = re.compile(rb'"([KQJAT987][SHDC])"')
ALLOWED_GAINS = {1, 2, 3}


def _public_cards(st: State, seat: int) -> set[str]:
    """Cards a seat may see: own hand and discards, turn-up, played cards, a marked king."""
    mask = st.hands[seat] | st.played[0] | st.played[1] | (1 << st.turnup)
    for d in st.discards[seat]:
        mask |= d
    if st.marked >= 0:
        mask |= 1 << (st.trump * 8 + 7)
    return set(format_cards(mask))


def _check_conservation(st: State) -> None:
    parts = [st.hands[0], st.hands[1], 1 << st.turnup, st.played[0], st.played[1]]
    parts += st.discards[0] + st.discards[1]
    parts += [sum(1 << c for c in st.deck[st.stock_pos :])]
    total = 0
    for p in parts:
        assert total & p == 0, "a card is in two places"
        total |= p
    assert total == FULL_PACK, "a card went missing"


def _check_views(st: State) -> None:
    for seat in (0, 1):
        raw = msgspec.json.encode(observe(st, seat))
        seen = {m.decode() for m in CARD_TOKEN.findall(raw)}
        leaked = seen - _public_cards(st, seat)
        assert not leaked, f"seat {seat} sees {leaked}"


def _random_illegal(st: State, rng: random.Random) -> int:
    legal = set(st.legal_actions())
    candidates: list[int] = [*range(32), 32, 33, 34, 35, 36, 37, DISCARD, DISCARD | FULL_PACK]
    rng.shuffle(candidates)
    return next(a for a in candidates if a not in legal)


def play_games(rules: Rules, seed: int, deals_wanted: int, check_views_every: int) -> int:
    """Play random games until ``deals_wanted`` deals were played; returns deals played."""
    rng = random.Random(seed)
    deals = 0
    game = 0
    first_dealer = rng.randrange(2)
    steps = 0
    while deals < deals_wanted:
        st = new_game(rules, first_dealer)
        while not st.is_over():
            if st.phase == Phase.DEAL:
                before = st.scores[:]
                st.deal(deck_for(seed, game, st.deal_number))
                deals += 1
                _check_conservation(st)
                gained = [st.scores[i] - before[i] for i in (0, 1)]
                assert gained in ([0, 0], [1, 0], [0, 1])
                continue
            scores_before = st.scores[:]
            actions = st.legal_actions()
            assert actions, f"no legal action in {st!r}"
            assert len(set(actions)) == len(actions)
            steps += 1
            if steps % 7 == 0:
                # Every legal action applies on a copy; an illegal one is refused cleanly.
                for a in actions:
                    st.clone().apply_checked(st.to_act, a)
                bad = _random_illegal(st, rng)
                snapshot = (st.hands[:], st.events[:], st.phase, st.scores[:])
                with pytest.raises(IllegalActionError, match=r"illegal action|turn"):
                    st.apply_checked(st.to_act, bad)
                assert snapshot == (st.hands[:], st.events[:], st.phase, st.scores[:])
            if steps % check_views_every == 0:
                _check_views(st)
            action = rng.choice(actions)
            st.apply(action)
            if st.phase not in (Phase.DEAL,):  # `!=` trips mypy's stale narrowing
                _check_conservation(st)
            gained = [st.scores[i] - scores_before[i] for i in (0, 1)]
            if gained != [0, 0]:
                assert 0 in gained, "only one player scores at a time"
                g = max(gained)
                assert g in ALLOWED_GAINS
                if action == MARK:
                    assert g == 1
                if g == 3:
                    assert rules.vulnerable_vole_points == 3
                cap = rules.max_points_per_deal
                if cap is not None:
                    assert max(st.deal_points) <= cap
        assert st.winner in (0, 1) and st.scores[st.winner] >= rules.target
        assert st.scores[1 - st.winner] < rules.target
        _check_views(st)
        first_dealer = next_first_dealer(rules, st.dealer, st.winner)
        game += 1
    return deals


@pytest.mark.slow
@pytest.mark.parametrize("rules", RULE_SETS, ids=[f"ruleset-{i}" for i in range(len(RULE_SETS))])
def test_random_playouts_keep_every_invariant(rules: Rules) -> None:
    """10,000 deals in all (2,000 per rule set), seeded."""
    assert (
        play_games(rules, seed=RULE_SETS.index(rules) + 11, deals_wanted=2000, check_views_every=5)
        >= 2000
    )


def test_marked_king_is_the_only_hidden_card_shown() -> None:
    """§4, §9: marking shows the king of trumps to the opponent; nothing else of the hand."""
    from tests.rules_helpers import act, start

    st = start("KH QS JS 7D 8D", "AS TS 9D TD AD", "7H")
    act(st, "stand", "mark")
    raw = msgspec.json.encode(observe(st, 0))
    assert b'"KH"' in raw
    for hidden in ("QS", "JS", "7D", "8D"):
        assert f'"{hidden}"'.encode() not in raw
    assert str(CARDS[st.turnup]) == "7H"
