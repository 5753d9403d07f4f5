"""Report tables and standings.json built from records."""

from __future__ import annotations

from arbiter.record import DealRecord, GameRecord, Termination
from arbiter.report import build_report, fault_summary, outcome_of, pgn_of, result_of
from arbiter.rules import make_rules, seed_sha256
from arbiter.stats import GameOutcome


def _record(
    gid: int,
    engines: list[str],
    winner: int,
    pair: str | None,
    reason: str = "normal",
    offender: int | None = None,
) -> GameRecord:
    scores = [5, 2] if winner == 0 else [2, 5]
    deal = DealRecord(
        number=1, dealer=0, deck=[], actions=[], tricks=[3, 2], points=[scores[0], scores[1]]
    )
    return GameRecord(
        game_id=gid,
        engines=engines,
        pair_id=pair,
        deal_set=gid // 2,
        seed_sha256=seed_sha256(1),
        first_dealer=0,
        rules=make_rules(),
        deals=[deal],
        scores=scores,
        winner=winner,
        termination=Termination(reason=reason, offender=offender),
    )


RECORDS = [
    _record(0, ["a", "b"], 0, "p0"),
    _record(1, ["b", "a"], 1, "p0"),
    _record(2, ["a", "b"], 0, "p1"),
    _record(3, ["b", "a"], 0, "p1"),
    _record(4, ["a", "c"], 0, "p2"),
    _record(5, ["c", "a"], 0, "p2", "timeout", 1),
    _record(6, ["b", "c"], 1, "p3"),
    _record(7, ["c", "b"], 0, "p3"),
]


def test_outcome_of_record() -> None:
    o = outcome_of(RECORDS[5])
    assert o.engines == ("c", "a") and o.winner == 0 and o.fault == "timeout"
    assert o.offender == 1 and o.deal_margins == (3,) and o.pair_id == "p2"


def test_report_tables_and_json() -> None:
    report = build_report([result_of(r) for r in RECORDS], seed=1)
    text = report.text()
    for heading in ("== standings", "== crosstable", "== head to head"):
        assert heading in text
    assert "a vs b: 4 games, +3 -1 (75.0%)" in text
    assert "pairs: 2 (won 1, split 1, lost 0)" in text
    assert "faults (each one a forfeited game, counted as a loss):\n  a: timeout 1" in text
    data = report.to_json()
    assert data["games"] == 8 and data["engines"] == ["a", "b", "c"]
    assert {row["engine"] for row in data["ratings"]} == {"a", "b", "c"}
    assert data["faults"]["a"] == {"timeout": 1}
    h = next(x for x in data["head_to_head"] if x["engines"] == ["a", "b"])
    assert h["pairs"] == {"won": 1, "split": 1, "lost": 0}


def test_pgn_headers() -> None:
    pgn = pgn_of([result_of(r) for r in RECORDS[:2]])
    assert pgn.count('[Result "1-0"]') == 1 and pgn.count('[Result "0-1"]') == 1
    assert '[White "b"]' in pgn and '[Termination "normal"]' in pgn


def test_substituted_offender_may_win() -> None:
    """Records written before the offender lost under every policy (a random_substitute
    game won by the offender's substitute) still count as written."""
    won_by_offender = _record(8, ["a", "b"], 0, None, "illegal_action", 0)
    report = build_report([result_of(r) for r in [*RECORDS, won_by_offender]], seed=1)
    assert "a: illegal_action 1, timeout 1" in report.text()


def test_report_of_no_games() -> None:
    """A run whose every game was aborted: one clear line, and standings.json still builds."""
    report = build_report([])
    assert report.text() == "no games were recorded\n"
    assert report.to_json() == {"games": 0, "engines": [], "head_to_head": [], "faults": {}}


def game(
    first: str, second: str, winner: int, fault: str | None = None, offender: int | None = None
) -> GameOutcome:
    """An unpaired four-deal game between ``first`` (seat 0) and ``second``."""
    points = (5, 3) if winner == 0 else (3, 5)
    return GameOutcome((first, second), winner, points, 4, None, fault, offender)


def test_fault_summary() -> None:
    games = [
        game("A", "B", 1, fault="timeout", offender=0),
        game("B", "A", 0, fault="timeout", offender=1),
        game("A", "B", 0, fault="illegal_action", offender=1),
        game("A", "C", 0),
        game("A", "C", 0, fault="arbiter_error"),  # no offender: not attributed
    ]
    assert fault_summary(games) == {
        "A": {"timeout": 2},
        "B": {"illegal_action": 1},
        "C": {},
    }


def test_head_to_head_says_why_elo_is_undefined_instead_of_printing_inf() -> None:
    """All games one way: the text names the cause, never "inf"."""
    records = [
        _record(i, ["a", "b"] if i % 2 == 0 else ["b", "a"], i % 2, f"p{i // 2}") for i in range(4)
    ]
    text = build_report([result_of(r) for r in records], seed=1).head_to_head_text()
    assert "games: Elo undefined: all 4 games won (a score of 100% has no finite Elo" in text
    assert "pairs: 2 (won 2, split 0, lost 0)  Elo undefined: all 2 pairs won" in text
    assert (
        "luck removed by pairing: undefined (every game of the complete pairs had the same "
        "result, so there is no single-game variance to compare with)"
    ) in text
    assert "inf" not in text


def test_luck_removed_by_pairing_is_never_a_negative_share() -> None:
    """Pairs won 2-0 and lost 0-2 vary more than single games: no gain, said in words."""
    records = [
        _record(0, ["a", "b"], 0, "p0"),
        _record(1, ["b", "a"], 1, "p0"),
        _record(2, ["a", "b"], 1, "p1"),
        _record(3, ["b", "a"], 0, "p1"),
    ]
    text = build_report([result_of(r) for r in records], seed=1).head_to_head_text()
    assert (
        "luck removed by pairing: none in these games (pairs varied more than independent "
        "games would: they need 200% of the games single games need for the same interval "
        "width; 2 pairs)"
    ) in text
    assert "(100% more: no gain in these games)" in text
    assert "-100%" not in text and "±inf" not in text
    assert "Elo +0 ±" in text and "Elo -0" not in text
