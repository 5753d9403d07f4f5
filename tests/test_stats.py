"""Tests of arbiter.stats against values worked by hand (the working is in the comments)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import pytest

from arbiter.stats import (
    DEFAULT_PRIOR_DRAWS,
    Z_95,
    EloModel,
    GameOutcome,
    Hypothesis,
    PairCounts,
    SprtState,
    Unit,
    crosstable,
    elo_from_score,
    estimate_score,
    fit_ratings,
    head_to_head,
    los,
    normalized_elo,
    points_per_deal,
    score_from_elo,
    sprt,
    sprt_bounds,
)

NELO = 800 / math.log(10)


def game(
    first: str,
    second: str,
    winner: int,
    pair_id: str | None = None,
    *,
    deals: int = 4,
    points: tuple[int, int] | None = None,
    fault: str | None = None,
    offender: int | None = None,
    deal_margins: tuple[int, ...] = (),
) -> GameOutcome:
    """A game between ``first`` (seat 0) and ``second``; 5-3 for the winner by default."""
    if points is None:
        points = (5, 3) if winner == 0 else (3, 5)
    return GameOutcome(
        engines=(first, second),
        winner=winner,
        points=points,
        deals=deals,
        pair_id=pair_id,
        fault=fault,
        offender=offender,
        deal_margins=deal_margins,
    )


def pair(pair_id: str, a: str, b: str, a_wins: int) -> list[GameOutcome]:
    """A duplicate pair in which ``a`` won ``a_wins`` (0, 1 or 2) of the two games."""
    first = game(a, b, 0 if a_wins >= 1 else 1, pair_id)
    second = game(b, a, 1 if a_wins == 2 else 0, pair_id)
    return [first, second]


def outcomes_from(results: dict[tuple[str, str], tuple[int, int]]) -> list[GameOutcome]:
    """Unpaired games: (x, y) -> (wins of x, wins of y)."""
    games = []
    for (x, y), (wx, wy) in results.items():
        games += [game(x, y, 0)] * wx + [game(x, y, 1)] * wy
    return games


# ----------------------------------------------------------------- basic formulas


@pytest.mark.parametrize(
    ("score", "elo"),
    [
        # -400·log10(1/0.75 − 1) = 400·log10(3) = 190.8485 (the classic "75 % is +191").
        pytest.param(0.75, 190.84850188786498, id="three-quarters"),
        pytest.param(0.25, -190.84850188786498, id="one-quarter"),
        pytest.param(0.5, 0.0, id="even"),
        # 1/s − 1 = 1/9 -> 400·log10(9) = 381.697.
        pytest.param(0.9, 381.69700377572997, id="nine-tenths"),
        pytest.param(1.0, math.inf, id="all-wins"),
        pytest.param(0.0, -math.inf, id="all-losses"),
    ],
)
def test_elo_from_score(score: float, elo: float) -> None:
    assert elo_from_score(score) == pytest.approx(elo, abs=1e-9)


@pytest.mark.parametrize("score", [-0.1, 1.5, math.nan], ids=["negative", "above-one", "nan"])
def test_elo_from_score_rejects_scores_outside_0_1(score: float) -> None:
    with pytest.raises(ValueError, match="score"):
        elo_from_score(score)


def test_score_from_elo() -> None:
    # 1/(1 + 10^(−100/400)) = 1/(1 + 0.562341) = 0.640065 (the usual "+100 Elo is 64 %").
    assert score_from_elo(100) == pytest.approx(0.6400649998028851, abs=1e-12)
    assert score_from_elo(-100) == pytest.approx(1 - 0.6400649998028851, abs=1e-12)
    assert score_from_elo(math.inf) == 1.0
    assert score_from_elo(-math.inf) == 0.0
    assert score_from_elo(-1e6) == 0.0  # no overflow far out
    for elo in (-700.0, -12.5, 0.0, 33.0, 450.0):
        assert elo_from_score(score_from_elo(elo)) == pytest.approx(elo, abs=1e-9)


def test_los() -> None:
    # 60 wins, 40 losses: σ_μ = √(0.6·0.4/100) = 0.0489898, z = 0.1/σ_μ = 2.0412415,
    # Φ(2.0412415) = 0.9793866 (normal table: Φ(2.04) = 0.97932).
    assert los(0.6, math.sqrt(0.24 / 100)) == pytest.approx(0.9793865833314181, abs=1e-9)
    assert los(0.5, 0.1) == 0.5
    # Φ(−1) = 0.158655 (normal table).
    assert los(0.4, 0.1) == pytest.approx(0.15865525393145707, abs=1e-12)
    assert (los(0.7, 0.0), los(0.3, 0.0), los(0.5, 0.0)) == (1.0, 0.0, 0.5)


def test_normalized_elo_uses_sigma_of_one_game() -> None:
    # Games: 0.1/√0.24 · 800/ln 10 = 0.204124 · 347.43559 = 70.9200.
    assert normalized_elo(0.6, 0.24, Unit.GAME) == pytest.approx(70.91999191795665, abs=1e-9)
    # Pairs: σ_game = √(2·0.0725) = 0.380789; 0.05/0.380789 · 347.43559 = 45.6205.
    assert normalized_elo(0.55, 0.0725, Unit.PAIR) == pytest.approx(45.62052738350186, abs=1e-9)
    assert normalized_elo(0.5, 0.0, Unit.PAIR) == 0.0
    assert normalized_elo(0.6, 0.0, Unit.GAME) == math.inf


def test_estimate_score_on_games() -> None:
    # 60 wins out of 100: μ = 0.6, σ² = 0.24, σ_μ = 0.0489898.
    # μ ± 1.959964·σ_μ = [0.5039818, 0.6960182] -> Elo [2.7669, 143.9092], ± = 70.5712;
    # Elo(0.6) = 400·log10(1.5) = 70.4365.
    est = estimate_score([1.0] * 60 + [0.0] * 40, Unit.GAME)
    assert est.unit is Unit.GAME
    assert est.count == 100
    assert est.mean == pytest.approx(0.6)
    assert est.variance == pytest.approx(0.24)
    assert est.stderr == pytest.approx(0.04898979485566356)
    assert est.elo == pytest.approx(70.43650362227247, abs=1e-9)
    assert est.elo_lower == pytest.approx(2.76687322256089, abs=1e-6)
    assert est.elo_upper == pytest.approx(143.90923301091422, abs=1e-6)
    assert est.elo_error == pytest.approx(70.57117989417667, abs=1e-6)
    assert est.los == pytest.approx(0.9793865833314181, abs=1e-9)
    assert est.normalized_elo == pytest.approx(70.91999191795665, abs=1e-9)
    assert Z_95 == pytest.approx(1.959963984540054, abs=1e-12)


def test_estimate_score_all_wins_is_infinite_not_nan() -> None:
    est = estimate_score([1.0, 1.0, 1.0], Unit.PAIR)
    assert (est.elo, est.elo_lower, est.elo_upper, est.elo_error) == (math.inf,) * 4
    assert est.los == 1.0


def test_estimate_score_rejects_empty_and_out_of_range() -> None:
    with pytest.raises(ValueError, match="no pair scores"):
        estimate_score([], Unit.PAIR)
    with pytest.raises(ValueError, match="must lie in"):
        estimate_score([2.0], Unit.GAME)


# -------------------------------------------------------------------- game outcomes


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        pytest.param({"engines": ("A", "A")}, "two different engines", id="same-engine"),
        pytest.param({"winner": 2}, "winner must be 0 or 1", id="bad-winner"),
        pytest.param({"deals": -1}, "deals must be", id="negative-deals"),
        pytest.param({"offender": 1}, "no fault reason", id="offender-without-fault"),
        pytest.param({"offender": 3, "fault": "x"}, "offender must be", id="bad-offender"),
        pytest.param({"deal_margins": (1, 1)}, "2 deal margins for 4 deals", id="margins"),
    ],
)
def test_game_outcome_validation(kwargs: dict[str, object], message: str) -> None:
    fields: dict[str, object] = {
        "engines": ("A", "B"),
        "winner": 0,
        "points": (5, 3),
        "deals": 4,
        "pair_id": None,
    }
    fields.update(kwargs)
    with pytest.raises(ValueError, match=message):
        GameOutcome(**fields)  # type: ignore[arg-type]


def test_game_outcome_perspective() -> None:
    g = game("A", "B", 1, deal_margins=(1, -2, -1, -1))
    assert (g.score_of("A"), g.score_of("B")) == (0.0, 1.0)
    assert (g.margin_of("A"), g.margin_of("B")) == (-3, 3)
    assert game("A", "B", 0, points=(6, 2)).margin_of("B") == -4
    with pytest.raises(ValueError, match="'C' did not play"):
        g.score_of("C")


# --------------------------------------------------------------------- head to head


def h2h_games() -> list[GameOutcome]:
    """10 complete pairs (A: 2 won 2-0, 7 split, 1 lost 0-2), 1 unpaired, 1 incomplete."""
    games: list[GameOutcome] = []
    for i, a_wins in enumerate([2, 2, 1, 1, 1, 1, 1, 1, 1, 0]):
        first, second = pair(f"p{i}", "A", "B", a_wins)
        # Seat A second in the odd pairs' first game, to exercise both perspectives.
        games += [second, first] if i % 2 else [first, second]
    games.append(game("B", "A", 1, None))  # unpaired: A wins
    games.append(game("A", "B", 1, "lonely", fault="timeout", offender=0))  # A lost by a fault
    return games


def test_head_to_head_games_and_pairs() -> None:
    h = head_to_head(h2h_games(), "A", "B")
    # Games: 4 + 7 + 0 (pairs) + 1 (unpaired) = 12 wins out of 22.
    assert (h.games, h.wins, h.losses) == (22, 12, 10)
    assert h.score == pytest.approx(12 / 22)
    assert h.game_estimate.unit is Unit.GAME
    assert h.game_estimate.count == 22
    assert (h.faults_a, h.faults_b) == (1, 0)
    assert (h.unpaired_games, h.incomplete_pairs, h.pairs) == (1, 1, 10)
    assert (h.pairs_won, h.pairs_split, h.pairs_lost) == (2, 7, 1)
    # Pairs: μ = (2·1 + 7·½)/10 = 0.55; E[x²] = (2 + 7/4)/10 = 0.375; σ² = 0.375 − 0.3025.
    p = h.pair_estimate
    assert p is not None
    assert p.unit is Unit.PAIR
    assert p.count == 10
    assert p.mean == pytest.approx(0.55)
    assert p.variance == pytest.approx(0.0725)
    assert p.elo == pytest.approx(elo_from_score(0.55))
    assert p.normalized_elo == pytest.approx(45.62052738350186, abs=1e-9)
    # The 20 paired games: 11 wins, σ²_game = 0.55·0.45 = 0.2475.
    # r = (0.0725/10)/(0.2475/20) = 0.585859; luck share = 1 − r = 0.414141.
    assert h.games_needed_ratio == pytest.approx(0.0725 / 10 / (0.2475 / 20))
    assert h.luck_share == pytest.approx(1 - 0.0725 / 10 / (0.2475 / 20))
    assert h.pair_estimate is not None and p.elo_error < h.game_estimate.elo_error


def test_head_to_head_is_antisymmetric() -> None:
    games = h2h_games()
    ab, ba = head_to_head(games, "A", "B"), head_to_head(games, "B", "A")
    assert ab.game_estimate.elo == pytest.approx(-ba.game_estimate.elo)
    assert ab.pair_estimate is not None and ba.pair_estimate is not None
    assert ab.pair_estimate.elo_lower == pytest.approx(-ba.pair_estimate.elo_upper)
    assert (ba.pairs_won, ba.pairs_lost, ba.faults_b) == (1, 2, 1)


def test_head_to_head_without_complete_pairs_or_variance() -> None:
    h = head_to_head([game("A", "B", 0), game("B", "A", 1, "x")], "A", "B")
    assert (h.pair_estimate, h.luck_share, h.games_needed_ratio) == (None, None, None)
    # All four games won by A: the pair variance ratio is undefined (0/0).
    h = head_to_head(pair("p", "A", "B", 2) + pair("q", "A", "B", 2), "A", "B")
    assert h.pair_estimate is not None and h.pair_estimate.mean == 1.0
    assert h.luck_share is None


def test_head_to_head_errors() -> None:
    with pytest.raises(ValueError, match="no games between 'A' and 'C'"):
        head_to_head(h2h_games(), "A", "C")
    with pytest.raises(ValueError, match="more than two games"):
        head_to_head([*pair("p", "A", "B", 1), game("A", "B", 0, "p")], "A", "B")
    with pytest.raises(ValueError, match="not a duplicate pair"):
        head_to_head([game("A", "B", 0, "p"), game("A", "B", 1, "p")], "A", "B")


# ----------------------------------------------------------------- points per deal


def test_points_per_deal_ratio_estimator() -> None:
    games = [
        # Pair p1: A +3 (deal margins) and A +1 (B's points 4-5): M = 4 over D = 10 deals.
        game("A", "B", 0, "p1", deals=5, points=(5, 2), deal_margins=(1, 1, -1, 1, 1)),
        game("B", "A", 1, "p1", deals=5, points=(4, 5)),
        # Pair p2: A −3 and A +1: M = −2 over D = 8.
        game("A", "B", 1, "p2", points=(2, 5)),
        game("B", "A", 1, "p2", points=(4, 5)),
        # Pair p3: A −1 and A +2: M = 1 over D = 6.
        game("B", "A", 0, "p3", deals=3, points=(5, 4)),
        game("A", "B", 0, "p3", deals=3, points=(5, 3)),
        # Incomplete pair: in the game figures only.
        game("A", "B", 0, "p4", deals=2, points=(5, 1)),
    ]
    result = points_per_deal(games, "A", "B")
    assert (result.games, result.deals) == (7, 26)
    # Pairs: R = 3/24 = 0.125; residuals M − R·D = 2.75, −3, 0.25; Σ² = 16.625;
    # Var = 3/2 · 16.625/24² = 0.0432943, se = 0.2080728.
    p = result.pair_estimate
    assert p is not None
    assert (p.unit, p.count, p.deals) == (Unit.PAIR, 3, 24)
    assert p.mean == pytest.approx(0.125)
    assert p.stderr == pytest.approx(0.20807275370248104)
    assert p.error == pytest.approx(Z_95 * 0.20807275370248104)
    assert (p.lower, p.upper) == pytest.approx((0.125 - p.error, 0.125 + p.error))
    # Games: 7 units, margins 3, 1, −3, 1, −1, 2, 4 over 5, 5, 4, 4, 3, 3, 2 deals:
    # R = 7/26; Var = 7/6 · Σ(M − R·D)²/26².
    g = result.game_estimate
    assert g is not None
    r = 7 / 26
    units = [(3, 5), (1, 5), (-3, 4), (1, 4), (-1, 3), (2, 3), (4, 2)]
    var = 7 / 6 * sum((m - r * d) ** 2 for m, d in units) / 26**2
    assert (g.unit, g.count, g.deals) == (Unit.GAME, 7, 26)
    assert g.mean == pytest.approx(r)
    assert g.stderr == pytest.approx(math.sqrt(var))
    # From B's side everything changes sign.
    other = points_per_deal(games, "B", "A").pair_estimate
    assert other is not None and other.mean == pytest.approx(-0.125)


def test_points_per_deal_single_unit_and_no_deals() -> None:
    result = points_per_deal(
        [game("A", "B", 0, deals=3), game("A", "B", 0, deals=0, fault="timeout", offender=1)],
        "A",
        "B",
    )
    assert result.pair_estimate is None
    g = result.game_estimate
    assert g is not None and g.count == 1 and g.stderr == math.inf


# ------------------------------------------------------------------ joint ratings


def test_two_player_fit_is_elo_of_the_score() -> None:
    games = outcomes_from({("A", "B"): (30, 10)})
    table = fit_ratings(games, prior_draws=0)
    # Pool average 0: ±½·Elo(0.75) = ±95.424.
    assert table.ratings() == pytest.approx({"A": 190.84850188786498 / 2, "B": -95.42425094393249})
    anchored = fit_ratings(games, anchor="B", prior_draws=0)
    assert anchored.row("A").rating == pytest.approx(elo_from_score(0.75), abs=1e-9)
    # The default prior is 0.01 virtual draws: the score becomes 30.005/40.01 exactly.
    assert DEFAULT_PRIOR_DRAWS == 0.01
    regular = fit_ratings(games, anchor="B")
    assert regular.row("A").rating == pytest.approx(elo_from_score(30.005 / 40.01), abs=1e-9)


def test_three_player_fit_recovers_consistent_ratings() -> None:
    # A-B 30-10 and B-C 30-10 (each 75 %: +190.85) and A-C 45-5 (90 %: +381.70 =
    # 2·190.85, since 9 = 3·3). The data fit Bradley–Terry exactly, so the MLE is
    # C = 0, B = 190.85, A = 381.70.
    games = outcomes_from({("A", "B"): (30, 10), ("B", "C"): (30, 10), ("A", "C"): (45, 5)})
    table = fit_ratings(games, anchor="C", prior_draws=0)
    assert table.ratings() == pytest.approx(
        {"A": 381.69700377572997, "B": 190.84850188786498, "C": 0.0}, abs=1e-8
    )
    assert [row.engine for row in table.rows] == ["A", "B", "C"]
    assert [row.rank for row in table.rows] == [1, 2, 3]
    a = table.row("A")
    assert (a.games, a.wins) == (90, 75)
    assert a.score == pytest.approx(75 / 90)
    assert (a.lower, a.upper, a.error) == (None, None, None)
    pooled = fit_ratings(games, prior_draws=0).ratings()
    assert sum(pooled.values()) == pytest.approx(0.0, abs=1e-9)
    assert pooled["A"] - pooled["C"] == pytest.approx(381.69700377572997, abs=1e-8)


def test_fit_satisfies_the_likelihood_equations() -> None:
    # At the Bradley–Terry MLE every engine's expected score equals its actual score.
    games = outcomes_from(
        {("A", "B"): (7, 3), ("B", "C"): (2, 6), ("C", "A"): (5, 5), ("A", "D"): (9, 2),
         ("D", "B"): (4, 4)}
    )  # fmt: skip
    ratings = fit_ratings(games, prior_draws=0).ratings()
    for engine in ratings:
        mine = [g for g in games if engine in g.engines]
        actual = sum(g.score_of(engine) for g in mine)
        expected = sum(
            score_from_elo(ratings[engine] - ratings[g.engines[1 - g.seat_of(engine)]])
            for g in mine
        )
        assert expected == pytest.approx(actual, abs=1e-8)


def test_fit_stays_finite_when_an_engine_wins_everything() -> None:
    games = outcomes_from({("A", "B"): (10, 0), ("B", "C"): (5, 5)})
    ratings = fit_ratings(games, anchor="B").ratings()
    # 10 + 0.005 wins against 0.005: 400·log10(10.005/0.005) = 1320.5.
    assert ratings["A"] == pytest.approx(400 * math.log10(10.005 / 0.005), abs=1e-6)
    with pytest.raises(ValueError, match="no finite maximum"):
        fit_ratings(games, prior_draws=0)


def test_fit_errors() -> None:
    with pytest.raises(ValueError, match="no games"):
        fit_ratings([])
    with pytest.raises(ValueError, match="anchor 'Z'"):
        fit_ratings(outcomes_from({("A", "B"): (1, 1)}), anchor="Z")
    with pytest.raises(ValueError, match=r"separate groups.*\['A', 'B'\], \['C', 'D'\]"):
        fit_ratings(outcomes_from({("A", "B"): (1, 1), ("C", "D"): (2, 1)}))


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    games = outcomes_from({("A", "B"): (30, 10), ("B", "C"): (25, 15), ("A", "C"): (35, 5)})
    table = fit_ratings(games, anchor="C", bootstrap=300, seed=7)
    assert table == fit_ratings(games, anchor="C", bootstrap=300, seed=7)
    assert table != fit_ratings(games, anchor="C", bootstrap=300, seed=8)
    for row in table.rows:
        assert row.lower is not None and row.upper is not None and row.error is not None
        assert row.lower <= row.rating <= row.upper
        assert row.error == pytest.approx((row.upper - row.lower) / 2)
    c = table.row("C")
    assert (c.lower, c.upper, c.error) == (0.0, 0.0, 0.0)
    a_error = table.row("A").error
    assert a_error is not None and a_error > 20.0


def test_bootstrap_resamples_whole_pairs() -> None:
    # Every pair split 1-1 (the seat decided each game): resampling pairs can only ever
    # give 50 %, so the interval is a point; resampling games would give about ±70 Elo.
    games = [g for i in range(40) for g in pair(f"p{i}", "A", "B", 1)]
    row = fit_ratings(games, anchor="B", bootstrap=200).row("A")
    assert (row.rating, row.lower, row.upper) == pytest.approx((0.0, 0.0, 0.0), abs=1e-9)
    unpaired = [game(*g.engines, g.winner) for g in games]
    spread = fit_ratings(unpaired, anchor="B", bootstrap=200).row("A").error
    assert spread is not None and spread > 40.0


def test_crosstable() -> None:
    games = outcomes_from({("A", "B"): (3, 1), ("B", "C"): (2, 2), ("C", "A"): (1, 0)})
    # Totals: A 3/5, B 3/8, C 3/5 -> A and C tie at 60 % (name decides), then B.
    table = crosstable(games)
    assert table.engines == ("A", "C", "B")
    ab = table.cell("A", "B")
    assert ab is not None and (ab.games, ab.wins, ab.losses, ab.score) == (4, 3, 1, 0.75)
    ba = table.cell("B", "A")
    assert ba is not None and (ba.wins, ba.score) == (1, 0.25)
    assert table.cell("A", "A") is None
    assert table.cells[1][0] == table.cell("C", "A")
    assert crosstable(games, order=["B", "A", "C"]).engines == ("B", "A", "C")
    with pytest.raises(ValueError, match="permutation"):
        crosstable(games, order=["A", "B"])
    with pytest.raises(KeyError):
        table.cell("A", "Z")


# --------------------------------------------------------------------------- SPRT


def maximise(f: Callable[[float], float], lo: float, hi: float) -> float:
    """Maximum of a unimodal function on (lo, hi): a grid, then golden-section search."""
    steps = 4000
    xs = [lo + (hi - lo) * (i + 0.5) / steps for i in range(steps)]
    best = max(range(steps), key=lambda i: f(xs[i]))
    a, b = xs[max(best - 1, 0)], xs[min(best + 1, steps - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(200):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if f(c) > f(d):
            b = d
        else:
            a = c
    return f((a + b) / 2)


def loglik(observed: Sequence[float], p: Sequence[float]) -> float:
    if min(p) <= 0:
        return -math.inf
    return sum(o * math.log(q) for o, q in zip(observed, p, strict=True))


def max_loglik_fixed_mean(observed: Sequence[float], s: float) -> float:
    # Outcomes 0, ½, 1 with mean s: p½ free, p1 = s − p½/2, p0 = 1 − s − p½/2.
    def f(p_half: float) -> float:
        return loglik(observed, (1 - s - p_half / 2, p_half, s - p_half / 2))

    return maximise(f, 0.0, 2 * min(s, 1 - s))


def max_loglik_fixed_t(observed: Sequence[float], t: float) -> float:
    # Outcomes 0, ½, 1 with (μ − ½)/σ = t: for each μ, σ² = ((μ − ½)/t)²,
    # p½ = 4(μ − μ² − σ²), p1 = μ − p½/2, p0 = 1 − p½ − p1.
    def f(mu: float) -> float:
        var = ((mu - 0.5) / t) ** 2
        p_half = 4 * (mu - mu * mu - var)
        p_one = mu - p_half / 2
        return loglik(observed, (1 - p_half - p_one, p_half, p_one))

    return maximise(f, 0.5, 1.0) if t > 0 else maximise(f, 0.0, 0.5)


def test_sprt_bounds() -> None:
    # ln(0.05/0.95) = −ln 19 = −2.944439; ln(0.95/0.05) = ln 19.
    assert sprt_bounds(0.05, 0.05) == pytest.approx((-math.log(19), math.log(19)))
    # α = 0.05, β = 0.10: ln(0.1/0.95) = −2.251292, ln(0.9/0.05) = ln 18 = 2.890372.
    assert sprt_bounds(0.05, 0.1) == pytest.approx((-2.2512917986064953, 2.8903717578961645))


def test_gsprt_logistic_llr_against_a_direct_maximisation() -> None:
    counts = PairCounts(lost=20, split=50, won=30)
    n = counts.total
    observed = (0.2, 0.5, 0.3)
    # LLR = N·(max log-lik with mean s1 − max log-lik with mean s0), per pair.
    expected = n * (
        max_loglik_fixed_mean(observed, score_from_elo(10.0))
        - max_loglik_fixed_mean(observed, score_from_elo(0.0))
    )
    result = sprt(counts, 0.0, 10.0)
    assert result.llr == pytest.approx(expected, abs=1e-7)
    assert result.llr == pytest.approx(0.4940413877156607, abs=1e-9)  # this module, pinned
    assert (result.decision, result.pairs) == (None, 100)
    # The same pairs given as scores.
    scores = [0.0] * 20 + [0.5] * 50 + [1.0] * 30
    assert sprt(scores, 0.0, 10.0) == result


def test_gsprt_normalized_llr_against_a_direct_maximisation() -> None:
    counts = PairCounts(lost=20, split=50, won=30)
    observed = (0.2, 0.5, 0.3)
    # Normalized Elo 10 on pairs: (μ − ½)/σ_pair = √2·10/(800/ln 10).
    t1 = math.sqrt(2) * 10.0 / NELO
    expected = 100 * (max_loglik_fixed_t(observed, t1) - max_loglik_fixed_mean(observed, 0.5))
    result = sprt(counts, 0.0, 10.0, model=EloModel.NORMALIZED)
    assert result.llr == pytest.approx(expected, abs=1e-7)
    t0 = -math.sqrt(2) * 5.0 / NELO
    expected = 100 * (max_loglik_fixed_t(observed, t1) - max_loglik_fixed_t(observed, t0))
    result = sprt(counts, -5.0, 10.0, model=EloModel.NORMALIZED)
    assert result.llr == pytest.approx(expected, abs=1e-7)


def test_gsprt_decisions_and_regularisation() -> None:
    assert sprt(PairCounts(0, 0, 0), 0, 5).llr == 0.0
    # An outcome never seen counts 0.001 (fishtest): (0.001, 50, 60) over N = 110.001.
    counts = PairCounts(lost=0, split=50, won=60)
    n = 110.001
    observed = (0.001 / n, 50 / n, 60 / n)
    expected = n * (
        max_loglik_fixed_mean(observed, score_from_elo(20.0))
        - max_loglik_fixed_mean(observed, score_from_elo(0.0))
    )
    result = sprt(counts, 0.0, 20.0)
    assert result.llr == pytest.approx(expected, abs=1e-6)
    assert result.decision is Hypothesis.H1 and result.decision == "H1"
    assert sprt(PairCounts(60, 50, 0), 0.0, 20.0).decision == "H0"


def test_gsprt_errors() -> None:
    with pytest.raises(ValueError, match="elo0 < elo1"):
        sprt(PairCounts(1, 1, 1), 5.0, 0.0)
    with pytest.raises(ValueError, match="within ±200"):
        sprt(PairCounts(1, 1, 1), 0.0, 250.0, model=EloModel.NORMALIZED)
    with pytest.raises(ValueError, match="alpha and beta"):
        sprt(PairCounts(1, 1, 1), 0.0, 5.0, alpha=0.0)
    with pytest.raises(ValueError, match=r"pair score must be 0, 0\.5 or 1"):
        sprt([0.25], 0.0, 5.0)


def test_sprt_state_follows_games_as_they_come_in() -> None:
    state = SprtState(0.0, 10.0, engine="A")
    games = h2h_games()
    counted = [state.add_outcome(g) for g in games]
    # One True per completed pair (the second game of each); unpaired and lonely: False.
    assert counted.count(True) == 10
    assert state.counts == PairCounts(lost=1, split=7, won=2)
    assert state.result() == sprt(PairCounts(1, 7, 2), 0.0, 10.0)
    manual = SprtState(0.0, 10.0)
    for score in (0.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.0, 1.0):
        manual.add_pair_score(score)
    assert manual.result() == state.result()
    with pytest.raises(ValueError, match="engine under test"):
        manual.add_outcome(games[0])
