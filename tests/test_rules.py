"""Table-driven tests of every rule and option; each case cites the rules section it checks.

Sections refer to the project's rules reference (the Rules section of README.md).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import random
import typing
from dataclasses import dataclass, field
from typing import Any

import pytest

from arbiter.cards import CARDS, Card, CardError, cards_text, format_cards
from arbiter.rules import (
    DISCARD,
    ActionError,
    Event,
    IllegalActionError,
    Phase,
    Rules,
    RulesError,
    ScoreReason,
    Seed,
    State,
    beats,
    capped_points,
    deal_points,
    deck_for,
    format_action,
    make_rules,
    new_game,
    next_first_dealer,
    parse_action,
    reaches_target,
    seed_is_short,
    seed_sha256,
    seed_text,
    trick_score,
)
from protocol.view import Scored
from tests.rules_helpers import act, build_deck, legal, start

# A neutral deal: non-dealer (seat 1) and dealer (seat 0), trumps hearts (turn-up 7H).
ND = "KS QS JS 7D 8D"
DL = "AS TS 9D TD AD"
UP = "7H"


# ----------------------------------------------------------------------------- 1. cards


def test_notation_round_trip_every_card() -> None:
    """§1: every card prints as two characters and parses back to itself."""
    for c in CARDS:
        assert Card.parse(str(c)) == c
        assert repr(c) == f"Card.parse({str(c)!r})"


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("10H", "the ten is written T: 'TH'"),
        ("kh", "upper case: 'KH'"),
        ("KX", "suit must be one of S, H, D, C"),
        ("ZS", "rank must be one of K Q J A T 9 8 7"),
        ("", "expected rank then suit"),
        ("KH ", "expected rank then suit"),
    ],
    ids=["ten-as-10", "lower-case", "bad-suit", "bad-rank", "empty", "trailing-space"],
)
def test_malformed_card_is_a_clear_error(text: str, hint: str) -> None:
    """§1: malformed card text names the input and what is wrong."""
    with pytest.raises(CardError) as info:
        Card.parse(text)
    assert repr(text) in str(info.value)
    assert hint in str(info.value)


def test_rank_order_is_k_q_j_a_10_9_8_7() -> None:
    """§1: within a suit K Q J A 10 9 8 7, highest first; the ace is between J and 10."""
    order = [Card.parse(r + "S") for r in "KQJAT987"]
    for hi, lo in itertools.pairwise(order):
        assert beats(lo, hi, trump=1), f"{hi} should beat {lo}"
        assert not beats(hi, lo, trump=1)


def test_seeded_decks_are_reproducible_and_distinct() -> None:
    """§1: a deal's deck is fixed by (seed, game, deal); different deals differ."""
    assert deck_for(7, 3, 2) == deck_for(7, 3, 2)
    assert sorted(deck_for(7, 3, 2)) == list(range(32))
    assert len({deck_for(7, 3, d) for d in range(20)}) == 20
    assert deck_for(7, 3, 2) != deck_for(8, 3, 2)


# ----------------------------------------------------------------------------- 2. dealing


@pytest.mark.parametrize(
    ("packets", "nd_positions", "d_positions"),
    [("3-2", (0, 1, 2, 6, 7), (3, 4, 5, 8, 9)), ("2-3", (0, 1, 4, 5, 6), (2, 3, 7, 8, 9))],
    ids=["packets-3-2", "packets-2-3"],
)
def test_packets_fix_which_positions_go_to_whom(
    packets: str, nd_positions: tuple[int, ...], d_positions: tuple[int, ...]
) -> None:
    """§2: the non-dealer is served first; option `packets` fixes the positions."""
    deck = deck_for(1, 0, 0)
    st = new_game(make_rules(packets=packets), first_dealer=0)
    st.deal(deck)
    assert st.hands[1] == sum(1 << deck[p] for p in nd_positions)
    assert st.hands[0] == sum(1 << deck[p] for p in d_positions)
    assert st.turnup == deck[10]
    assert st.trump == deck[10] >> 3
    assert st.stock_left == 21


def test_turned_up_king_scores_for_dealer() -> None:
    """§2: a turned-up king scores 1 for the dealer at once."""
    st = start(ND, DL, "KH", dealer=0)
    assert st.scores == [1, 0]
    assert st.phase == Phase.PROPOSE


def test_turned_up_king_can_end_the_game_at_once() -> None:
    """§2, §7: the game ends the moment the target is reached, even before any play."""
    st = start(ND, DL, "KH", dealer=0, scores=(4, 3))
    assert st.phase == Phase.GAME_OVER and st.winner == 0 and st.scores == [5, 3]


def test_deal_alternates_every_deal() -> None:
    """§2: the deal alternates every deal within a game."""
    st = start(ND, DL, UP, dealer=0)
    act(st, "stand")
    while st.phase == Phase.TRICK:
        st.apply(st.legal_actions()[0])
    assert st.phase == Phase.DEAL and st.dealer == 1


@pytest.mark.parametrize(
    ("option", "last_dealer", "winner", "expected"),
    [("alternate", 0, 0, 1), ("alternate", 1, 0, 0), ("loser", 0, 0, 1), ("loser", 0, 1, 0)],
    ids=["alternate-after-0", "alternate-after-1", "loser-is-1", "loser-is-0"],
)
def test_next_game_dealer(option: str, last_dealer: int, winner: int, expected: int) -> None:
    """§2: option `next_game_dealer` picks the first dealer of the next game."""
    rules = make_rules(next_game_dealer=option)
    assert next_first_dealer(rules, last_dealer, winner) == expected


# ----------------------------------------------------------------------------- 3. exchanges


def test_standing_makes_the_non_dealer_vulnerable() -> None:
    """§3: playing without ever proposing makes the non-dealer vulnerable."""
    st = start(ND, DL, UP)
    assert legal(st) == {"stand", "propose"}
    act(st, "stand")
    assert st.vulnerable == [False, True]
    assert st.phase == Phase.TRICK and st.to_act == 1


def test_stopping_after_an_exchange_is_not_vulnerable() -> None:
    """§3: stopping after one or more exchanges does not make the non-dealer vulnerable."""
    st = start(ND, DL, UP)
    act(st, "propose", "accept", "discard 7D", "discard 9D", "stand")
    assert st.vulnerable == [False, False]


@pytest.mark.parametrize(
    ("penalty", "refuse_at", "vulnerable"),
    [("first_only", 1, True), ("first_only", 2, False), ("any", 1, True), ("any", 2, True)],
    ids=["first_only-first", "first_only-second", "any-first", "any-second"],
)
def test_refusal_penalty(penalty: str, refuse_at: int, vulnerable: bool) -> None:
    """§3: refusing the first proposal makes the dealer vulnerable (option `refusal_penalty`)."""
    st = start(ND, DL, UP, rules=make_rules(refusal_penalty=penalty))
    if refuse_at == 2:
        act(st, "propose", "accept", "discard 7D", "discard 9D")
    act(st, "propose", "refuse")
    assert st.vulnerable == [vulnerable, False]
    assert st.phase == Phase.TRICK


def test_exchange_draws_from_the_top_of_the_stock() -> None:
    """§3: the non-dealer draws first from the top, then the dealer from what is left."""
    st = start(ND, DL, UP, stock="KC QC JC AC TC")
    act(st, "propose", "accept", "discard 7D 8D")
    assert format_cards(st.hands[1]) == ["KS", "QS", "JS", "KC", "QC"]
    act(st, "discard 9D TD AD")
    assert format_cards(st.hands[0]) == ["AS", "TS", "JC", "AC", "TC"]
    assert st.stock_left == 16
    assert st.discards == [
        [sum(1 << Card.parse(c) for c in ("9D", "TD", "AD"))],
        [sum(1 << Card.parse(c) for c in ("7D", "8D"))],
    ]
    assert st.exchanges == 1 and st.phase == Phase.PROPOSE


@dataclass
class DiscardCase:
    id: str
    rules: dict[str, object]
    prefix: tuple[str, ...]
    action: str
    ok: bool
    rule: str = ""
    extra: dict[str, object] = field(default_factory=dict)


DISCARD_CASES = [
    DiscardCase("nd-one-card", {}, (), "discard 7D", True, "§3.1 at least 1"),
    DiscardCase("nd-five-cards", {}, (), "discard KS QS JS 7D 8D", True, "§3.1 up to 5"),
    DiscardCase("nd-none", {}, (), "discard", False, "§3.1 at least 1"),
    DiscardCase("nd-card-not-held", {}, (), "discard AS", False, "own cards only"),
    DiscardCase("dealer-none-default", {}, ("discard 7D",), "discard", False, "§3.2 at least 1"),
    DiscardCase(
        "dealer-none-cavendish",
        {"preset": "cavendish"},
        ("discard 7D",),
        "discard",
        True,
        "§3.2 dealer_min_discard 0",
    ),
    DiscardCase("dealer-five", {}, ("discard 7D",), "discard AS TS 9D TD AD", True, "§3.2"),
]


@pytest.mark.parametrize("case", DISCARD_CASES, ids=[c.id for c in DISCARD_CASES])
def test_discard_limits(case: DiscardCase) -> None:
    """§3: discard limits for each player and option."""
    opts = dict(case.rules)
    preset = str(opts.pop("preset", "default"))
    st = start(ND, DL, UP, rules=make_rules(preset, **opts))
    act(st, "propose", "accept", *case.prefix)
    if case.ok:
        act(st, case.action)
    else:
        with pytest.raises(IllegalActionError):
            act(st, case.action)


def test_discard_limited_by_the_stock_and_dealer_takes_none_when_empty() -> None:
    """§3: at most min(5, stock) cards; with the stock empty the dealer takes none; play begins."""
    st = start(ND, DL, UP)
    # 21 in stock: (5+5), (5+5) leaves 1.
    for _ in range(2):
        act(st, "propose", "accept")
        st.apply(DISCARD | st.hands[1])
        st.apply(DISCARD | st.hands[0])
    assert st.stock_left == 1
    act(st, "propose", "accept")
    options = legal(st)
    assert all(len(o.split()) == 2 for o in options), "only one card may be taken"
    two = " ".join(format_action(DISCARD | st.hands[st.to_act]).split()[:3])
    with pytest.raises(IllegalActionError) as info:
        act(st, two)
    assert ": must discard exactly 1 card (only 1 left in the stock), not 2; legal: " in str(
        info.value
    )
    st.apply(st.legal_actions()[0])
    assert st.stock_left == 0
    assert st.phase == Phase.TRICK, "stock empty: the dealer takes none and play begins"
    assert st.exchanges == 3


def test_max_exchange_rounds() -> None:
    """§3: option `max_exchange_rounds` ends the exchanges after that many."""
    st = start(ND, DL, UP, rules=make_rules(max_exchange_rounds=1))
    act(st, "propose", "accept", "discard 7D", "discard 9D")
    assert st.phase == Phase.TRICK
    assert st.vulnerable == [False, False]


def test_proposals_cannot_be_withdrawn() -> None:
    """§3: after proposing, only the dealer may act; the non-dealer cannot stand."""
    st = start(ND, DL, UP)
    act(st, "propose")
    with pytest.raises(IllegalActionError, match="seat 0's turn"):
        st.apply_text(1, "stand")


# ----------------------------------------------------------------------------- 4. the king


def test_non_dealer_holding_king_decides_before_leading() -> None:
    """§4 own_first_card: the non-dealer marks (or not) before his lead."""
    st = start("KH QS JS 7D 8D", DL, UP)
    act(st, "stand")
    assert st.phase == Phase.MARK and st.to_act == 1
    act(st, "mark")
    assert st.scores == [0, 1] and st.marked == 1
    assert (st.phase, st.to_act) == (Phase.TRICK, 1)


def test_dealer_holding_king_decides_after_seeing_the_lead() -> None:
    """§4 own_first_card: the dealer decides after the opening lead, before his card."""
    st = start(ND, "KH TS 9D TD AD", UP)
    act(st, "stand")
    assert st.phase == Phase.TRICK and st.to_act == 1
    act(st, "KS")
    assert (st.phase, st.to_act) == (Phase.MARK, 0)
    act(st, "no-mark")
    assert (st.phase, st.to_act, st.scores) == (Phase.TRICK, 0, [0, 0])


def test_opening_lead_deadline_makes_dealer_decide_before_the_lead() -> None:
    """§4 king_deadline opening_lead: both players decide before the opening lead."""
    st = start(ND, "KH TS 9D TD AD", UP, rules=make_rules(king_deadline="opening_lead"))
    act(st, "stand")
    assert st.phase == Phase.MARK and st.to_act == 0
    act(st, "mark")
    assert (st.to_act, st.phase, st.scores) == (1, Phase.TRICK, [1, 0])
    act(st, "KS")
    assert (st.phase, st.to_act) == (Phase.TRICK, 0), "no second chance after the lead"


def test_king_drawn_in_an_exchange_can_be_marked() -> None:
    """§4: a king of trumps drawn in an exchange can be marked."""
    st = start(ND, DL, UP, stock="KH")
    act(st, "propose", "accept", "discard 7D", "discard 9D", "stand")
    assert st.phase == Phase.MARK and st.to_act == 1


def test_discarded_king_cannot_be_marked() -> None:
    """§4: a discarded king of trumps cannot be marked."""
    st = start("KH QS JS 7D 8D", DL, UP)
    act(st, "propose", "accept", "discard KH", "discard 9D", "stand")
    assert st.phase == Phase.TRICK


def test_no_mark_offered_without_the_king() -> None:
    """§4: the arbiter offers the mark only to the holder."""
    st = start(ND, DL, UP)
    act(st, "stand", "KS")
    assert st.phase == Phase.TRICK and st.to_act == 0


def test_marking_the_king_can_end_the_game_mid_deal() -> None:
    """§7: the game ends at once when the mark reaches the target."""
    st = start("KH QS JS 7D 8D", DL, UP, scores=(2, 4))
    act(st, "stand", "mark")
    assert st.phase == Phase.GAME_OVER and st.winner == 1


def test_declining_is_final_and_the_deadline_passes() -> None:
    """§4: letting the deadline pass is declining: no later offer."""
    st = start("KH QS JS 7D 8D", DL, UP)
    act(st, "stand", "no-mark", "QS")
    assert st.phase == Phase.TRICK and st.marked == -1


# ----------------------------------------------------------------------------- 5. tricks


@dataclass
class PlayCase:
    id: str
    hand: str
    lead: str
    trump: str
    expected: set[str]
    must_trump: bool = True


PLAY_CASES = [
    PlayCase("must-beat", "KS 7S AH 8D 9C", "QS", "H", {"KS"}),
    PlayCase("follow-when-cannot-beat", "JS 7S AH 8D 9C", "QS", "H", {"JS", "7S"}),
    PlayCase("ace-below-jack", "AS 7S KH 8D 9C", "JS", "H", {"AS", "7S"}),
    PlayCase("must-trump-when-void", "AH 7H KD 8D 9C", "QS", "H", {"AH", "7H"}),
    PlayCase(
        "anything-when-void-and-no-trump",
        "AD 7D KD 8D 9C",
        "QS",
        "H",
        {"AD", "7D", "KD", "8D", "9C"},
    ),
    PlayCase(
        "must_trump-false",
        "AH 7H KD 8D 9C",
        "QS",
        "H",
        {"AH", "7H", "KD", "8D", "9C"},
        must_trump=False,
    ),
    PlayCase("beat-in-trumps-led", "KH 7H KD 8D 9C", "QH", "H", {"KH"}),
]


@pytest.mark.parametrize("case", PLAY_CASES, ids=[c.id for c in PLAY_CASES])
def test_second_player_obligations(case: PlayCase) -> None:
    """§5: follow suit and beat if possible; void: trump if possible (`must_trump`)."""
    from arbiter.cards import SUIT_CHARS, cards_to_mask
    from arbiter.rules import legal_cards

    hand = cards_to_mask(Card.parse(c) for c in case.hand.split())
    allowed = legal_cards(
        hand, Card.parse(case.lead), SUIT_CHARS.index(case.trump), case.must_trump
    )
    assert set(format_cards(allowed)) == case.expected


@pytest.mark.parametrize(
    ("lead", "second", "trump", "second_wins"),
    [
        ("QS", "KS", "H", True),
        ("QS", "JS", "H", False),
        ("KS", "7H", "H", True),
        ("KS", "KD", "H", False),
        ("7H", "8H", "H", True),
    ],
    ids=["higher-same-suit", "lower-same-suit", "trump-beats", "off-suit-loses", "trump-led"],
)
def test_trick_winner(lead: str, second: str, trump: str, second_wins: bool) -> None:
    """§5: highest trump wins, else the higher card of the suit led."""
    from arbiter.cards import SUIT_CHARS

    assert beats(Card.parse(lead), Card.parse(second), SUIT_CHARS.index(trump)) is second_wins


def test_winner_of_a_trick_leads_the_next() -> None:
    """§5: the winner of a trick leads to the next."""
    st = start(ND, DL, UP)
    act(st, "stand", "7D", "TD")
    assert st.tricks == [1, 0] and st.to_act == 0


# ----------------------------------------------------------------------------- 6. scoring


@dataclass
class ScoreCase:
    id: str
    nd: str
    d: str
    prefix: tuple[str, ...]
    plays: tuple[str, ...]
    expected: tuple[int, int]
    rules: dict[str, object] = field(default_factory=dict)
    rule: str = ""


# Trumps are clubs (turn-up 9C).  Seat 1 is the non-dealer and leads.
STRONG = "KH QH JH AH TH"  # five top hearts and an opponent with no heart nor trump: a vole
WEAK = "7S 8S 9S 7D 8D"
VOLE = ("KH", "7S", "QH", "8S", "JH", "9S", "AH", "7D", "TH", "8D")

SCORE_CASES = [
    ScoreCase(
        "vole-2",
        STRONG,
        WEAK,
        ("propose", "refuse"),
        VOLE,
        (0, 2),
        rule="§6 a vole is 2, not more against a dealer vulnerable by refusal",
    ),
    ScoreCase(
        "vole-vulnerable-3",
        STRONG,
        WEAK,
        ("propose", "refuse"),
        VOLE,
        (0, 3),
        rules={"vulnerable_vole_points": 3},
        rule="§6 vulnerable_vole_points 3",
    ),
    ScoreCase(
        "vole-by-vulnerable-player",
        STRONG,
        WEAK,
        ("stand",),
        VOLE,
        (0, 2),
        rule="§6 a vulnerable player's own vole is 2",
    ),
    ScoreCase(
        "point-3-tricks",
        "KH QH JH 7S 8S",
        "AS TS 9S 7D 8D",
        ("stand",),
        ("KH", "7D", "QH", "8D", "JH", "9S", "7S", "TS", "AS", "8S"),
        (0, 1),
        rule="§6 3 tricks win the point: 1 (the winner's own vulnerability costs nothing)",
    ),
    ScoreCase(
        "point-against-vulnerable-dealer-2",
        "KC QC JC AS TS",
        "7S 8S 9S 7D KS",
        ("propose", "refuse"),
        ("KC", "7S", "QC", "8S", "JC", "9S", "AS", "KS", "7D", "TS"),
        (0, 2),
        rule="§3, §6 the dealer refused the first proposal and lost: 2",
    ),
    ScoreCase(
        "point-against-vulnerable-non-dealer-2",
        "KS 8S 9S 7D 8D",
        "KC QC JC AS TS",
        ("stand",),
        ("8S", "TS", "AS", "KS", "9S", "JC", "QC", "7D", "KC", "8D"),
        (2, 0),
        rule="§3, §6 the non-dealer stood and took fewer than 3 tricks: 2",
    ),
    ScoreCase(
        "cap-1",
        STRONG,
        WEAK,
        ("propose", "refuse"),
        VOLE,
        (0, 1),
        rules={"max_points_per_deal": 1},
        rule="§6 max_points_per_deal",
    ),
]


@pytest.mark.parametrize("case", SCORE_CASES, ids=[c.id for c in SCORE_CASES])
def test_deal_scoring(case: ScoreCase) -> None:
    """§6: the point, the vole and vulnerability."""
    st = start(case.nd, case.d, "9C", rules=make_rules(**case.rules))  # type: ignore[arg-type]
    act(st, *case.prefix)
    for text in case.plays:
        if st.phase == Phase.MARK:
            act(st, "no-mark")
        act(st, text)
    assert st.phase in (Phase.DEAL, Phase.GAME_OVER), "the deal is over"
    assert tuple(st.scores) == case.expected, case.rule


@pytest.mark.parametrize("target", [5, 7, 11], ids=["target-5", "target-7", "target-11"])
def test_target(target: int) -> None:
    """§7: the game is won by the first to reach the target (option `target`)."""
    st = start(ND, DL, "KH", rules=make_rules(target=target), scores=(target - 1, 0))
    assert st.phase == Phase.GAME_OVER and st.winner == 0


def test_game_continues_below_target() -> None:
    """§7: below the target a new deal follows."""
    st = start(ND, DL, "KH", rules=make_rules(target=7), scores=(5, 0))
    assert st.phase == Phase.PROPOSE and st.scores == [6, 0]


@pytest.mark.parametrize(
    ("tricks", "vulnerable", "vole_points", "expected"),
    [
        (3, (False, False), 2, (1, 0)),
        (4, (False, True), 2, (2, 0)),
        (5, (False, False), 3, (2, 0)),
        (5, (False, True), 2, (2, 0)),
        (5, (False, True), 3, (3, 0)),
        (2, (True, False), 2, (0, 2)),
        (1, (False, True), 2, (0, 1)),
        (0, (True, False), 3, (0, 3)),
    ],
    ids=[
        "point",
        "point-vs-vulnerable",
        "vole",
        "vole-vs-vulnerable-2",
        "vole-vs-vulnerable-3",
        "lost-vulnerable",
        "lost-opponent-vulnerable",
        "voled-vulnerable-3",
    ],
)
def test_deal_points(
    tricks: int, vulnerable: tuple[bool, bool], vole_points: int, expected: tuple[int, int]
) -> None:
    """§6: a deal's points (seat 0's, seat 1's) for seat 0's tricks, before the cap."""
    rules = make_rules(vulnerable_vole_points=vole_points)
    assert deal_points(tricks, vulnerable, 0, rules) == expected


# Every trick split x vulnerability x scoring option: the exported scoring functions
# (what the engines value outcomes with) against what the state machine scores.

SCORING_RULES = [
    make_rules(vulnerable_vole_points=vole, max_points_per_deal=cap, target=target)
    for vole, cap, target in itertools.product((2, 3), (None, 1, 2, 3), (5, 7, 11))
]


def _rules_id(rules: Rules) -> str:
    cap = "none" if rules.max_points_per_deal is None else rules.max_points_per_deal
    return f"vole{rules.vulnerable_vole_points}-cap{cap}-target{rules.target}"


def _last_trick(
    rules: Rules,
    before: tuple[int, int],
    winner: int,
    vulnerable: tuple[bool, ...],
    king_seat: int,
    margin: int,
) -> State:
    """A deal at its fifth trick, ``before`` tricks taken, that ``winner`` is about to win.

    ``king_seat`` (or -1) has already scored the king's point this deal; both seats stand
    ``margin`` points short of the target.  Spades are led, clubs are trumps.
    """
    st = start(ND, DL, "9C", rules=rules, dealer=1)
    high, low = int(Card.parse("KS")), int(Card.parse("7S"))
    st.phase = Phase.TRICK
    st.king_done = True
    st.to_act = 0
    st.hands = [1 << high, 1 << low] if winner == 0 else [1 << low, 1 << high]
    st.tricks = list(before)
    st.vulnerable = list(vulnerable)
    st.deal_points = [int(king_seat == 0), int(king_seat == 1)]
    st.scores = [rules.target - margin, rules.target - margin]
    return st


@pytest.mark.parametrize("rules", SCORING_RULES, ids=[_rules_id(r) for r in SCORING_RULES])
def test_scoring_functions_match_the_state_machine(rules: Rules) -> None:
    """§6, §7: the points, the cap and the target, as exported, are what a deal scores."""
    cases = itertools.product(
        range(6), (0, 1), itertools.product((False, True), repeat=2), (-1, 0, 1), (1, 2, 3)
    )
    for tricks0, last, vulnerable, king_seat, margin in cases:
        before = (tricks0 - (last == 0), 5 - tricks0 - (last == 1))
        if min(before) < 0:
            continue  # a seat with no trick cannot have won the last one
        case = (
            f"seat 0 takes {tricks0} (seat {last} the last), vulnerable {vulnerable}, "
            f"king's point to seat {king_seat}, {margin} short of the target"
        )
        st = _last_trick(rules, before, last, vulnerable, king_seat, margin)
        start_scores = st.scores[:]
        for seat in (0, 1):
            st.apply_checked(seat, st.hands[seat].bit_length() - 1)  # its one card

        points = deal_points(tricks0, vulnerable, 0, rules)
        assert deal_points(5 - tricks0, vulnerable, 1, rules) == points[::-1], case
        w = 0 if points[0] else 1
        raw, reason = trick_score(max(tricks0, 5 - tricks0), vulnerable[1 - w], rules)
        assert raw == points[w] and points[1 - w] == 0, case
        gained = capped_points(raw, int(king_seat == w), rules)
        expected = start_scores[:]
        expected[w] += gained
        assert st.scores == expected, case
        assert st.events[-1] == (Event.SCORE, w, gained * 16 + reason), case
        over = reaches_target(expected[w], rules)
        assert st.phase == (Phase.GAME_OVER if over else Phase.DEAL), case
        assert st.winner == (w if over else -1), case


# ----------------------------------------------------------------------------- 8. options


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: make_rules("hoyle"), "unknown rules preset 'hoyle'; known presets: default"),
        (lambda: make_rules(trget=5), "unknown rules option 'trget'"),
        (lambda: make_rules(target=6), "target"),
        (lambda: make_rules(must_trump="yes"), "must_trump"),
        (lambda: make_rules(max_exchange_rounds=0), "max_exchange_rounds"),
        (lambda: make_rules(packets="3-3"), "packets"),
    ],
    ids=[
        "unknown-preset",
        "unknown-option",
        "bad-target",
        "bad-bool",
        "zero-rounds",
        "bad-packets",
    ],
)
def test_bad_rules_are_clear_errors(call: object, message: str) -> None:
    """§8: an unknown preset or option, or a bad value, is a clear error."""
    with pytest.raises(RulesError, match=message):
        call()  # type: ignore[operator]


OPTIONS = [name for name in Rules.__struct_fields__ if name != "preset"]


@pytest.mark.parametrize("name", OPTIONS)
def test_every_option_is_validated(name: str) -> None:
    """§8: a bad value of any option names the option and the values it allows."""
    with pytest.raises(RulesError, match=rf"^bad rules option: {name}: .+ \(allowed: [^()]+\)$"):
        make_rules(**{name: "bogus"})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"packets": "3-3"}, "packets: Invalid enum value '3-3' (allowed: '3-2' or '2-3')"),
        ({"target": 6}, "target: Invalid enum value 6 (allowed: 5, 7 or 11)"),
        ({"must_trump": "yes"}, "must_trump: Expected `bool`, got `str` (allowed: true or false)"),
        (
            {"max_points_per_deal": 0},
            "max_points_per_deal: Expected `int` >= 1 (allowed: null or a whole number >= 1)",
        ),
    ],
    ids=["literal-strings", "literal-numbers", "bool", "optional-bounded-int"],
)
def test_allowed_values_read_as_written(options: dict[str, Any], message: str) -> None:
    """The allowed values follow the order of the rules reference and YAML spelling."""
    with pytest.raises(RulesError) as info:
        make_rules(**options)
    assert str(info.value) == f"bad rules option: {message}"


def test_presets_and_overrides() -> None:
    """§8: `cavendish` sets dealer_min_discard 0; options apply on top of a preset."""
    assert make_rules().dealer_min_discard == 1
    r = make_rules("cavendish", target=7)
    assert (r.preset, r.dealer_min_discard, r.target) == ("cavendish", 0, 7)


# ----------------------------------------------------------------------------- actions


@pytest.mark.parametrize(
    "text",
    ["KS", "stand", "propose", "accept", "refuse", "mark", "no-mark", "discard 7H 8C", "discard"],
)
def test_action_notation_round_trip(text: str) -> None:
    """Action notation parses and prints back identically."""
    assert format_action(parse_action(text)) == text


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("play", "malformed action 'play'"),
        ("discard 7H 7H", "listed twice"),
        ("discard 10H", "the ten is written T"),
        ("ks", "malformed action 'ks'.*notation is upper case: 'KS'"),
        ("10H", "malformed action '10H'.*the ten is written T: 'TH'"),
        ("ZZ", "malformed action 'ZZ'.*rank must be one of"),
    ],
    ids=[
        "unknown-word",
        "duplicate-card",
        "bad-card-in-discard",
        "lower-case-card",
        "bare-ten",
        "bad-rank",
    ],
)
def test_malformed_actions(text: str, message: str) -> None:
    """Malformed action text is an ActionError, distinct from an illegal action."""
    with pytest.raises(ActionError, match=message):
        parse_action(text)


def test_illegal_action_is_precise_and_leaves_state_unchanged() -> None:
    """An illegal card names the card, the rule and the legal choices; nothing changes."""
    st = start(ND, DL, UP)
    act(st, "stand", "7D")
    before = st.clone()
    with pytest.raises(IllegalActionError) as info:
        act(st, "AS")
    text = str(info.value)
    assert "illegal action 'AS' by seat 0" in text and "7D was led" in text
    assert "legal: " in text and "TD" in text
    assert st.hands == before.hands and st.events == before.events
    with pytest.raises(IllegalActionError, match="not in the hand"):
        act(st, "KC")


def test_build_deck_helper_is_faithful() -> None:
    deck = build_deck(ND, DL, UP)
    assert sorted(deck) == list(range(32))


# The README's worked example ("Cards and notation"): a third party's decks must match.
VECTOR_SEED = "00112233445566778899aabbccddeeff"
VECTOR_DECK = (
    "JH QS AH 9C 8C AC KC 9D 9H QH 7S 8S JC 7H KH AD "
    "JD TD QD KS 7D TS 8D TH 8H TC JS QC 7C KD 9S AS"
)


def test_deck_for_test_vector() -> None:
    """The published test vector: deal set 0, deal 1, and the seed's commitment."""
    assert " ".join(str(CARDS[c]) for c in deck_for(VECTOR_SEED, 0, 1)) == VECTOR_DECK
    assert seed_sha256(VECTOR_SEED) == (
        "5947d7c33d783f94b3b4c1a96ebc8991ed28f1b069b71e03376cba8caa98a720"
    )


def _documented_deck(seed_text: str, deal_set: int, deal: int) -> tuple[list[int], int]:
    """The README's algorithm, written from its text; returns the deck and bytes used."""
    key = seed_text.encode("utf-8")
    stream = b""
    used = 0

    def next_byte() -> int:
        nonlocal stream, used
        if used == len(stream):
            block = len(stream) // 32
            message = f"ecarte-deck/2/{deal_set}/{deal}/{block}".encode("ascii")
            stream += hmac.new(key, message, hashlib.sha256).digest()
        used += 1
        return stream[used - 1]

    deck = list(range(32))
    for i in range(31, 0, -1):
        n = i + 1
        limit = 256 - 256 % n
        b = next_byte()
        while b >= limit:
            b = next_byte()
        j = b % n
        deck[i], deck[j] = deck[j], deck[i]
    return deck, used


def test_deck_for_follows_the_documented_algorithm() -> None:
    """Ints, big ints and strings (non-ASCII too), across deal sets and deals; some decks
    need bytes from the second HMAC block (enough rejections)."""
    seeds: list[Seed] = [0, 42, -7, 2**64 + 1, 2**200, "k", "0042", "clé secrète", VECTOR_SEED]
    most_bytes = 0
    for seed in seeds:
        for deal_set, deal in [(0, 1), (0, 2), (1, 1), (3, 2), (17, 5), (1000, 9)]:
            expected, used = _documented_deck(seed_text(seed), deal_set, deal)
            assert list(deck_for(seed, deal_set, deal)) == expected, (seed, deal_set, deal)
            most_bytes = max(most_bytes, used)
    assert most_bytes > 32


def test_seed_text_makes_int_and_string_seeds_equivalent() -> None:
    assert seed_text(42) == seed_text("42") == "42"
    assert deck_for(42, 1, 1) == deck_for("42", 1, 1)
    assert seed_sha256(42) == hashlib.sha256(b"42").hexdigest()
    assert deck_for("0042", 1, 1) != deck_for(42, 1, 1)


@pytest.mark.parametrize(
    ("seed", "short"),
    [
        (42, True),
        (-(2**200), True),
        (2**127 - 1, True),
        (2**127, False),
        ("a" * 31, True),
        ("a" * 32, False),
        ("0123456789abcdef0123456789abcdef", False),
    ],
    ids=["small-int", "negative", "just-below-2^127", "2^127", "31-chars", "32-chars", "drawn"],
)
def test_short_seeds(seed: Seed, short: bool) -> None:
    assert seed_is_short(seed) is short


def test_score_reasons_are_spelled_on_the_wire_as_in_the_rules() -> None:
    """The protocol (which imports nothing of the rules) spells the reasons out as a
    Literal; the rules number them.  The two lists must be the same, in the same order."""
    wire = typing.get_args(typing.get_type_hints(Scored)["reason"])
    assert wire == tuple(reason.name.lower() for reason in ScoreReason)


def test_format_cards_sorts_any_set_by_suit_then_rank_down() -> None:
    rng = random.Random(4)
    for _ in range(2000):
        mask = rng.getrandbits(32)
        cards = sorted((c for c in range(32) if mask >> c & 1), key=lambda c: (c >> 3, -c))
        expected = [str(CARDS[c]) for c in cards]
        assert format_cards(mask) == expected
        assert cards_text(mask) == "".join(expected)
