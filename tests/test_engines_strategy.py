"""Tests of the bundled engines' strategies (greedy, expert, search) and the ceiling player.

Everything runs in process on :mod:`arbiter.rules` states; games are seeded.  The
head-to-head figures quoted in the engines' report come from
``python bench/bench_search.py --h2h``.
"""

from __future__ import annotations

import itertools
import math
import random
from collections.abc import Callable

import pytest

from arbiter.cards import Card, card_list, card_mask
from arbiter.rules import (
    ACCEPT,
    PROPOSE,
    STAND,
    Phase,
    Rules,
    State,
    deck_for,
    format_action,
    legal_cards,
    make_rules,
    new_game,
)
from arbiter.view import observe
from engines import expert_policy
from engines.ceiling import choose_hands_only, choose_omniscient, omniscient_player
from engines.double_dummy import dd_at_least, dd_card_tricks, dd_class, dd_lead
from engines.expert import strategy as expert
from engines.greedy import strategy as greedy
from engines.inprocess import choose_random, play_inprocess_match, view_player
from engines.search.strategy import (
    CLOCK_SHARE,
    DEFAULT_BUDGET_MS,
    LEVELS,
    SearchEngine,
    win_probability,
)
from engines.utility import trick_utilities
from engines.view_info import read_view
from protocol.view import Observation
from tests import golden_search

Chooser = Callable[[Observation, random.Random], str]

SEARCH_SAMPLES = (20, 40)
"""Search samples per card-play and per exchange decision in the head-to-head test: a
fraction of what the engine draws in its 80 ms (160-580)."""
SEARCH_PAIRS = 60
"""Game pairs (same decks, seats swapped) of the search-vs-expert test."""
SEARCH_MIN_SCORE = 0.5
"""Score the deterministic search-vs-expert run must reach (it makes 63/120 = 52.5 %;
at these sample counts search gains +0.75 ± 0.3 points a deal over expert, measured on
600 duplicate deals)."""

RULE_SETS = [
    make_rules(),
    make_rules("cavendish"),
    make_rules(must_trump=False, king_deadline="opening_lead"),
    make_rules(refusal_penalty="any", max_exchange_rounds=1, vulnerable_vole_points=3),
    make_rules(max_points_per_deal=2, target=7),
]


def _deal(nd_hand: str, d_hand: str, turnup: str, dealer: int = 1) -> State:
    """A state at the start of a deal with the given hands (3-2 packets)."""
    nd = [int(Card.parse(c)) for c in nd_hand.split()]
    d = [int(Card.parse(c)) for c in d_hand.split()]
    up = int(Card.parse(turnup))
    rest = [c for c in range(32) if c not in nd and c not in d and c != up]
    deck = [nd[0], nd[1], nd[2], d[0], d[1], d[2], nd[3], nd[4], d[3], d[4], up, *rest]
    state = new_game(first_dealer=dealer)
    state.deal(deck)
    return state


# --------------------------------------------------------------------------- legality


def _positions(games: int, seed: int) -> list[tuple[State, int]]:
    """Decision points from seeded games between a random mix of the strategies."""
    out = []
    rng = random.Random(seed)
    movers: list[Chooser] = [choose_random, expert.choose, greedy.choose]
    for g in range(games):
        rules = RULE_SETS[g % len(RULE_SETS)]
        state = new_game(rules, g % 2)
        deal = 0
        while not state.is_over():
            if state.phase == Phase.DEAL:
                deal += 1
                state.deal(deck_for(seed, g, deal))
                continue
            seat = state.to_act
            out.append((state.clone(), seat))
            mover = movers[rng.randrange(3)]
            state.apply_text(seat, mover(observe(state, seat), rng))
    return out


POSITIONS = _positions(40, 7)


def test_positions_cover_every_phase() -> None:
    phases = {s.phase for s, _ in POSITIONS}
    assert phases == {Phase.PROPOSE, Phase.ANSWER, Phase.DISCARD, Phase.MARK, Phase.TRICK}


@pytest.mark.parametrize(
    ("choose", "step"),
    [
        (choose_random, 1),
        (greedy.choose, 1),
        (expert.choose, 1),
        (SearchEngine(clock=lambda: 0.0, max_samples=8, exchange_samples=4).choose, 4),
    ],
    ids=["random", "greedy", "expert", "search"],
)
def test_strategy_returns_only_legal_actions(choose: Chooser, step: int) -> None:
    rng = random.Random(1)
    for state, seat in POSITIONS[::step]:
        view = observe(state, seat)
        action = choose(view, rng)
        assert action in view.legal, (state, action)


def test_ceiling_returns_only_legal_actions() -> None:
    for state, seat in POSITIONS[::4]:
        action = choose_omniscient(state, seat)
        assert state.is_legal(action), (state, action)


def test_hands_only_player_returns_only_legal_actions() -> None:
    rng = random.Random(2)
    for state, seat in POSITIONS[::27]:
        action = choose_hands_only(state, seat, rng)
        assert state.is_legal(action), (state, action)


def test_expert_decides_the_same_from_view_and_from_state() -> None:
    rng = random.Random(0)
    for state, seat in POSITIONS:
        from_state = format_action(expert_policy.choose_state(state, seat))
        assert from_state == expert.choose(observe(state, seat), rng)


# --------------------------------------------------------------------------- the expert

JEUX_DE_REGLE = [
    ("QH 9H 8H 7S 8D", "TH"),  # three trumps
    ("9H 8H KS 8S 7S", "TH"),  # two trumps, three of a suit
    ("9H 8H KS 8D 7C", "TH"),  # two trumps and a king
    ("7H KS QS JS 8D", "TH"),  # one trump, king-queen-knave
    ("7H KS QS 8S KD", "TH"),  # one trump, king-queen-x and another king
]
WEAK = [
    ("7H 9S 8D TC 7C", "TH"),
    ("8H 9S QD AC 7C", "TH"),
    ("7S 9S JD AD 8C", "TH"),
]


@pytest.mark.parametrize(("hand", "turnup"), JEUX_DE_REGLE)
def test_expert_stands_on_a_jeu_de_regle(hand: str, turnup: str) -> None:
    state = _deal(hand, "7D 9D TD 9C 8C" if "9C" not in hand else "7D 9D TD AC JC", turnup)
    view = observe(state, state.non_dealer)
    assert expert_policy.is_jeu_de_regle(card_mask(hand.split()), Card.parse(turnup).suit)
    assert expert.choose(view, random.Random(0)) == "stand"


@pytest.mark.parametrize(("hand", "turnup"), WEAK)
def test_expert_proposes_on_a_weak_hand(hand: str, turnup: str) -> None:
    others = [c for c in ("KD KC QC JC 9D KS QS JS".split()) if c not in hand.split()][:5]
    state = _deal(hand, " ".join(others), turnup)
    view = observe(state, state.non_dealer)
    assert expert.choose(view, random.Random(0)) == "propose"


def test_expert_refuses_with_three_trumps_and_accepts_a_weak_hand() -> None:
    strong = _deal("7S 8S 9D TC 7C", "KH QH 9H KS 8D", "TH")
    strong.apply(PROPOSE)
    assert expert.choose(observe(strong, strong.dealer), random.Random(0)) == "refuse"
    weak = _deal("7S 8S 9D TC 7C", "8H 9S 8D JC QS", "TH")
    weak.apply(PROPOSE)
    assert expert.choose(observe(weak, weak.dealer), random.Random(0)) == "accept"


def test_expert_keeps_trumps_kings_and_a_queen_with_her_king() -> None:
    state = _deal("9H KS QS 8D 7C", "7S 8S 9D TC JC", "TH")
    state.apply(PROPOSE)
    state.apply_text(state.dealer, "accept")
    view = observe(state, state.non_dealer)
    assert expert.choose(view, random.Random(0)) == "discard 8D 7C"


def test_expert_marks_the_king_and_leads_trumps_with_three() -> None:
    state = _deal("KH 9H 8H 7S 8D", "7D 9D TD 9C 8C", "TH")
    state.apply(STAND)
    view = observe(state, state.non_dealer)
    assert expert.choose(view, random.Random(0)) == "mark"
    state.apply_text(state.non_dealer, "mark")
    assert expert.choose(observe(state, state.non_dealer), random.Random(0)) == "KH"


def test_expert_wins_cheaply_and_throws_its_lowest_loser() -> None:
    trump = Card.parse("TH").suit
    hand = card_mask(["KS", "9S", "8H", "7C"])
    lead = Card.parse("8S")
    assert expert_policy.card_choice(hand, lead, trump, True, 0) == Card.parse("9S")
    hand = card_mask(["8H", "7C", "KD"])
    assert expert_policy.card_choice(hand, Card.parse("8S"), trump, True, 0) == Card.parse("8H")
    hand = card_mask(["7C", "KD", "QC"])
    assert expert_policy.card_choice(hand, Card.parse("8S"), trump, True, 0) == Card.parse("7C")


# --------------------------------------------------------------------------- double dummy


def _naive(a: int, b: int, trump: int, must_trump: bool) -> int:
    """Plain minimax, no memo and no cuts: the reference for the solver."""
    if not a:
        return 0
    best = -1
    for c in card_list(a):
        worst = 99
        for r in card_list(legal_cards(b, c, trump, must_trump)):
            a2, b2 = a & ~(1 << c), b & ~(1 << r)
            wins = (r > c) if r >> 3 == c >> 3 else (r >> 3 == trump)
            if wins:
                t = a2.bit_count() - _naive(b2, a2, trump, must_trump)
            else:
                t = 1 + _naive(a2, b2, trump, must_trump)
            worst = min(worst, t)
        best = max(best, worst)
    return best


@pytest.mark.parametrize(
    ("a", "b", "trump", "tricks"),
    [
        ("KH 7H", "QH 8S", "S", 1),  # king first; the seven loses to the trump
        ("KH QH 7S", "JH KS QS", "H", 2),
        ("KS QS JS", "AS TS 9S", "S", 3),  # all the top trumps: every trick
        ("7C", "8D", "H", 1),  # no trump, no follow: the card led wins
        ("7C", "8H", "H", 0),  # trumped
        ("KD QD", "7H 8H", "H", 0),  # both leads trumped
    ],
)
def test_double_dummy_known_endings(a: str, b: str, trump: str, tricks: int) -> None:
    assert dd_lead(card_mask(a.split()), card_mask(b.split()), "SHDC".index(trump)) == tricks


def test_double_dummy_card_values_show_which_lead_matters() -> None:
    values = dd_card_tricks(card_mask(["KH", "7H"]), card_mask(["QH", "8S"]), -1, 0)
    assert values == {Card.parse("7H"): 0, Card.parse("KH"): 1}
    # Second to play: the opponent led the 8 of spades (trumps); we must beat it.
    values = dd_card_tricks(card_mask(["9S", "7D"]), card_mask(["KD"]), Card.parse("8S"), 0)
    assert values == {Card.parse("9S"): 1}


@pytest.mark.parametrize("must_trump", [True, False])
def test_double_dummy_matches_plain_minimax(must_trump: bool) -> None:
    rng = random.Random(3)
    for _ in range(150):
        cards = rng.sample(range(32), 10)
        n = rng.randint(1, 5)
        a = sum(1 << c for c in cards[:n])
        b = sum(1 << c for c in cards[5 : 5 + n])
        trump = rng.randrange(4)
        assert dd_lead(a, b, trump, must_trump) == _naive(a, b, trump, must_trump)


@pytest.mark.parametrize("must_trump", [True, False])
def test_threshold_solver_agrees_with_the_exact_one(must_trump: bool) -> None:
    rng = random.Random(4)
    for _ in range(300):
        cards = rng.sample(range(32), 10)
        n = rng.randint(1, 5)
        a = sum(1 << c for c in cards[:n])
        b = sum(1 << c for c in cards[5 : 5 + n])
        trump = rng.randrange(4)
        exact = dd_lead(a, b, trump, must_trump)
        for need in range(n + 1):
            assert dd_at_least(a, b, need, trump, must_trump) == (exact >= need)
        if n == 5:
            expected = 5 if exact == 5 else 3 if exact >= 3 else 1 if exact else 0
            assert dd_class(a, b, trump, must_trump) == expected


def test_win_probability_table_is_consistent() -> None:
    for target in (5, 7, 11):
        for a in range(target):
            for b in range(target):
                for deals in (False, True):
                    p = win_probability(a, b, deals, target)
                    assert 0.0 < p < 1.0
                    assert p + win_probability(b, a, not deals, target) == pytest.approx(1.0)
                    if a + 1 < target:
                        assert win_probability(a + 1, b, deals, target) > p
    assert win_probability(5, 3, False, 5) == 1.0
    assert win_probability(0, 0, False, 5) == pytest.approx(0.5, abs=0.05)


def test_trick_utilities_count_vulnerability_vole_and_target() -> None:
    rules = Rules()
    util = trick_utilities(0, [0, 0], [False, True], [0, 0], rules)
    assert util == [-2.0, -1.0, -1.0, 2.0, 2.0, 2.0]
    util = trick_utilities(0, [4, 0], [False, False], [0, 0], rules)
    assert util[3] == util[5] > 2.0  # any point wins the game


# --------------------------------------------------------------------------- views


def test_read_view_proves_voids_from_the_opponents_play() -> None:
    state = _deal("KS QS 7C 8C 9C", "7D 9D TD JH 8H", "TH", dealer=1)
    state.apply(STAND)
    state.apply_text(0, "KS")  # dealer (seat 1) holds no spade: must trump
    state.apply_text(1, "8H")
    info = read_view(observe(state, 0))
    spades = card_mask(["AS", "JS", "TS", "9S", "8S", "7S"])
    assert info.opp_excluded & spades == spades
    assert not info.opp_excluded & card_mask(["KH", "9D", "AH"])


# --------------------------------------------------------------------------- search


def test_search_stops_at_its_deadline_with_a_fake_clock() -> None:
    ticks = itertools.count()
    engine = SearchEngine(budget_ms=40, clock=lambda: next(ticks) / 1000.0)
    for state, seat in POSITIONS[:60]:
        view = observe(state, seat)
        assert engine.choose(view, random.Random(0)) in view.legal
        # One tick per clock reading: the deadline (0.75 * 40 - 3 = 27 ms) caps the samples.
        assert engine.stats.samples <= 27


def test_search_deadline_follows_the_requests_time_limit() -> None:
    """A request's ``time_ms`` lowers the budget; the answer comes before the deadline."""
    now = [0.0]

    def clock() -> float:
        now[0] += 0.0005  # every reading costs half a millisecond
        return now[0]

    engine = SearchEngine(budget_ms=100, clock=clock)
    for state, seat in POSITIONS[:200:5]:
        view = observe(state, seat)
        assert engine.choose(view, random.Random(0), time_ms=20) in view.legal
        # 0.75 * 20 - 3 = 12 ms of work, one sample per two readings at most.
        assert engine.stats.samples <= 24
        assert engine.stats.elapsed_ms <= 20
    engine.choose(observe(*POSITIONS[0]), random.Random(0))
    assert engine.stats.elapsed_ms <= 100


def test_search_keeps_a_share_of_the_game_clock() -> None:
    """Under a game clock a decision spends at most 1/CLOCK_SHARE of what is left."""
    ticks = itertools.count()
    engine = SearchEngine(budget_ms=80, clock=lambda: next(ticks) / 1000.0)
    clock_ms = 400.0
    for state, seat in POSITIONS[:120:3]:
        view = observe(state, seat)
        assert engine.choose(view, random.Random(0), time_ms=1000, clock_ms=clock_ms) in view.legal
        assert engine.stats.elapsed_ms <= clock_ms / CLOCK_SHARE
        clock_ms -= engine.stats.elapsed_ms
    assert clock_ms > 0


def test_search_levels_grade_samples_and_mistakes() -> None:
    assert sorted(LEVELS) == [1, 2, 3, 4, 5]
    engines = [SearchEngine.at_level(level) for level in sorted(LEVELS)]
    samples = [(e.max_samples, e.exchange_samples) for e in engines]
    temperatures = [e.temperature for e in engines]
    assert samples == sorted(samples) and temperatures == sorted(temperatures, reverse=True)
    assert all(e.search_exchanges and e.budget_ms == DEFAULT_BUDGET_MS for e in engines)
    # Level 5 is the engine as it comes.
    full = SearchEngine()
    assert (full.max_samples, full.exchange_samples, full.temperature) == samples[4] + (0.0,)
    with pytest.raises(ValueError, match=r"search level must be one of 1\.\.5, not 6"):
        SearchEngine.at_level(6)
    # A level's own setting given by name wins over the level's.
    assert SearchEngine.at_level(2, max_samples=7).max_samples == 7


def test_low_levels_err_at_random_but_reproducibly() -> None:
    # Level 1 leaves the best mean now and then; the same rng seed, the same choices.
    positions = POSITIONS[:60]

    def choices(engine: SearchEngine, seed: int) -> list[str]:
        rng = random.Random(seed)
        return [engine.choose(observe(state, seat), rng) for state, seat in positions]

    def level_1() -> SearchEngine:
        return SearchEngine.at_level(1, clock=lambda: 0.0)

    samples = LEVELS[1].max_samples, LEVELS[1].exchange_samples
    best = choices(
        SearchEngine(clock=lambda: 0.0, max_samples=samples[0], exchange_samples=samples[1]), 1
    )
    weak = choices(level_1(), 1)
    assert weak == choices(level_1(), 1)
    assert all(c in observe(s, seat).legal for c, (s, seat) in zip(weak, positions, strict=True))
    assert 0 < sum(a != b for a, b in zip(weak, best, strict=True)) < len(positions) // 2


def test_temperature_errs_as_often_as_the_loss_allows() -> None:
    # Two actions, the second 0.05 less likely to win: at temperature t it is chosen
    # with probability exp(-0.05/t) / (1 + exp(-0.05/t)); a tiny t always takes the best.
    rng = random.Random(9)
    for t in (0.2, 0.05, 0.02):
        engine = SearchEngine(temperature=t)
        picks = [engine._soften([1, 2], [0.55, 0.50], rng) for _ in range(4000)]
        worse = math.exp(-0.05 / t)
        assert abs(picks.count(2) / 4000 - worse / (1 + worse)) < 0.025, t
    sure = SearchEngine(temperature=1e-9)
    assert {sure._soften([1, 2, 3], [0.4, 0.6, 0.59], rng) for _ in range(200)} == {2}


def test_search_choices_match_golden_file() -> None:
    expected = golden_search.GOLDEN_FILE.read_text()
    assert golden_search.render() == expected, (
        "the search engine's choices changed; if intended, run "
        "`python -m tests.golden_search --regenerate` and review the diff"
    )


def test_search_with_a_frozen_clock_is_bounded_by_samples_and_deterministic() -> None:
    def run() -> list[tuple[str, int]]:
        engine = SearchEngine(clock=lambda: 0.0, max_samples=30, exchange_samples=12)
        rng = random.Random(5)
        out = []
        for state, seat in POSITIONS[:300:3]:
            action = engine.choose(observe(state, seat), rng)
            assert engine.stats.samples <= (30 if state.phase == Phase.TRICK else 12)
            out.append((action, engine.stats.samples))
        return out

    first = run()
    assert first == run()
    assert any(n == 30 for _, n in first) and any(n == 12 for _, n in first)


def test_search_sampler_holds_the_king_the_opponent_marked() -> None:
    state = _deal("7S 8S 9D TC 7C", "KH QH 9H KS 8D", "TH", dealer=1)
    state.apply(STAND)
    state.apply_text(0, "7C")
    state.apply_text(1, "mark")  # the dealer marks after the opening lead
    view = observe(state, 1)
    info = read_view(view)
    assert info.marked == 1 and info.king_scores == [0, 1]
    view0 = observe(state, 0)
    engine = SearchEngine(clock=lambda: 0.0, max_samples=40)
    model = engine._model(read_view(view0))  # the non-dealer's model of the dealer
    assert model.forced == card_mask(["KH"])


def test_search_reads_an_acceptance_as_a_hand_the_expert_would_not_refuse_with() -> None:
    state = _deal("7S 8S 9D TC 7C", "KH QH 9H KS 8D", "TH", dealer=1)
    state.apply(PROPOSE)
    state.apply(ACCEPT)
    info = read_view(observe(state, 0))  # the non-dealer, about to discard
    engine = SearchEngine(clock=lambda: 0.0)
    model = engine._model(info)
    assert model.kind == "accepted"
    strong = card_mask(["KH", "QH", "9H", "KS", "8D"])  # the expert refuses with this
    weak = card_mask(["7D", "8H", "JS", "QC", "9C"])  # and accepts with this
    assert model.weight(strong) < 0.5 < model.weight(weak)
    # Once he has exchanged, his hand is another: only the count he kept is read.
    state.apply_text(0, "discard 7S 8S 9D TC 7C")
    state.apply_text(1, "discard 8D")
    assert engine._model(read_view(observe(state, 0))).kind == ""


def test_search_belief_in_an_expert_opponent_falls_when_he_plays_otherwise() -> None:
    state = _deal("KS QS 7C 8C 9C", "AS 9S TD JH 8H", "TH", dealer=1)
    state.apply(STAND)
    state.apply_text(0, "KS")
    state.apply_text(1, "AS")  # the expert would follow with his lowest spade, the 9
    state.apply_text(0, "7C")
    state.apply_text(1, "JH")  # he must trump; the expert would with the 8
    state.apply_text(1, "TD")
    info = read_view(observe(state, 0))
    engine = SearchEngine(clock=lambda: 0.0)
    engine.belief = 0.5
    model = engine._model(info)
    rng = random.Random(3)
    pool = list(card_list(info.unseen & ~info.opp_excluded))
    for _ in range(400):
        model.weight(sum(1 << c for c in rng.sample(pool, 3)) | info.played[1])
    assert model.posterior() < 0.4
    # The same hands weigh less when the opponent is believed to play like the expert.
    sure, doubtful = engine._model(info), engine._model(info)
    sure.belief, doubtful.belief = 0.95, 0.05
    hand = card_mask(["AS", "9S", "TD", "JH", "8H"])
    assert sure.weight(hand) < doubtful.weight(hand) < 1.0


def test_search_takes_the_vole_with_the_master_trump() -> None:
    state = _deal("KH 7H KC QC JC", "QH 8C 9C TC 7S", "TH", dealer=1)
    state.apply(STAND)
    state.apply_text(0, "no-mark")
    for mine, theirs in (("KC", "8C"), ("QC", "9C"), ("JC", "TC")):
        state.apply_text(0, mine)
        state.apply_text(1, theirs)
    view = observe(state, 0)
    engine = SearchEngine(clock=lambda: 0.0, max_samples=50)
    assert engine.choose(view, random.Random(0)) == "KH"
    assert choose_omniscient(state, 0) == Card.parse("KH")


# --------------------------------------------------------------------------- head to head


def test_expert_beats_random() -> None:
    wins, games = play_inprocess_match(
        view_player(expert.choose), view_player(choose_random), 50, seed=11
    )
    assert wins / games >= 0.85


def test_expert_beats_greedy() -> None:
    wins, games = play_inprocess_match(
        view_player(expert.choose), view_player(greedy.choose), 100, seed=12
    )
    assert wins / games >= 0.6


def test_ceiling_beats_expert() -> None:
    wins, games = play_inprocess_match(omniscient_player, view_player(expert.choose), 20, seed=13)
    assert wins / games >= 0.75


@pytest.mark.slow
def test_search_level_1_loses_to_expert() -> None:
    """The bottom of the ladder is below ``expert`` (per deal about -6 points)."""
    engine = SearchEngine.at_level(1, clock=lambda: 0.0)
    wins, games = play_inprocess_match(
        view_player(engine.choose), view_player(expert.choose), 40, seed=15
    )
    assert wins / games <= 0.4, (wins, games)


@pytest.mark.slow
def test_search_does_not_lose_to_expert() -> None:
    """Deterministic: a frozen clock, fixed sample counts and seeded games.

    A floor against a broken engine, not a strength measure: at these sample counts
    the edge is under a point a deal, which 120 games cannot pin down
    (``bench/bench_deals.py`` and ``bench/bench_search.py --h2h`` measure it).
    """
    engine = SearchEngine(
        clock=lambda: 0.0, max_samples=SEARCH_SAMPLES[0], exchange_samples=SEARCH_SAMPLES[1]
    )
    wins, games = play_inprocess_match(
        view_player(engine.choose), view_player(expert.choose), SEARCH_PAIRS, seed=14
    )
    assert wins / games >= SEARCH_MIN_SCORE, (wins, games)
