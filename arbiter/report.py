"""Turn game results into the tables a user reads and ``standings.json``.

All the statistics come from :mod:`arbiter.stats`; this module only converts records
to compact :class:`GameResult` values (a :class:`~arbiter.stats.GameOutcome` and the
game id), counts the faults and lays the figures out.  A whole record is some 10 KB;
a result is a few hundred bytes, so a run keeps results, never records.
"""

from __future__ import annotations

import math
import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from arbiter.record import GameRecord
from arbiter.stats import (
    GameOutcome,
    HeadToHead,
    PointsPerDeal,
    RatingTable,
    ScoreEstimate,
    crosstable,
    fit_ratings,
    head_to_head,
    points_per_deal,
)

__all__ = [
    "GameResult",
    "Report",
    "build_report",
    "fault_summary",
    "outcome_of",
    "pgn_of",
    "result_of",
]

BOOTSTRAP = 400
"""Bootstrap resamples for the rating intervals."""


def outcome_of(record: GameRecord) -> GameOutcome:
    """The statistics view of one game record."""
    fault = None if record.termination.reason == "normal" else record.termination.reason
    offender = record.termination.offender if fault else None
    return GameOutcome(
        engines=(record.engines[0], record.engines[1]),
        winner=record.winner,
        points=(record.scores[0], record.scores[1]),
        deals=len(record.deals),
        pair_id=record.pair_id,
        fault=fault,
        offender=offender,
        deal_margins=tuple(d.points[0] - d.points[1] for d in record.deals),
    )


@dataclass(frozen=True, slots=True)
class GameResult:
    """What is kept of a finished game once its record is journaled."""

    game_id: int
    """Position in the tournament schedule."""
    outcome: GameOutcome
    """Engines by seat, winner, points, deals, pair, fault and offender."""

    @property
    def engines(self) -> tuple[str, str]:
        """Engine names at seat 0 and seat 1."""
        return self.outcome.engines

    @property
    def winner(self) -> int:
        """Seat that won."""
        return self.outcome.winner

    @property
    def reason(self) -> str:
        """How the game ended: ``normal`` or the fault reason."""
        return self.outcome.fault or "normal"

    @property
    def offender(self) -> int | None:
        """Seat of the bot at fault, None for a normal game."""
        return self.outcome.offender


# Shared between results: one engine-name tuple per seating, one tuple per score.
_SEATINGS: dict[tuple[str, str], tuple[str, str]] = {}
_SCORES: dict[tuple[int, int], tuple[int, int]] = {}


def result_of(record: GameRecord) -> GameResult:
    """The compact result of one game record (equal strings and tuples are shared)."""
    seating = (record.engines[0], record.engines[1])
    engines = _SEATINGS.get(seating)
    if engines is None:
        engines = _SEATINGS[seating] = (sys.intern(seating[0]), sys.intern(seating[1]))
    scores = (record.scores[0], record.scores[1])
    fault = None if record.termination.reason == "normal" else record.termination.reason
    return GameResult(
        record.game_id,
        GameOutcome(
            engines=engines,
            winner=record.winner,
            points=_SCORES.setdefault(scores, scores),
            deals=len(record.deals),
            pair_id=None if record.pair_id is None else sys.intern(record.pair_id),
            fault=None if fault is None else sys.intern(fault),
            offender=record.termination.offender if fault else None,
            deal_margins=tuple(d.points[0] - d.points[1] for d in record.deals),
        ),
    )


def fault_summary(outcomes: Iterable[GameOutcome]) -> dict[str, dict[str, int]]:
    """Engine → fault reason → games it lost by that fault; every engine is listed.

    A fault without an offender is not attributed to anyone.
    """
    summary: dict[str, Counter[str]] = {}
    for g in outcomes:
        for e in g.engines:
            summary.setdefault(e, Counter())
        if g.fault is not None and g.offender is not None:
            summary[g.engines[g.offender]][g.fault] += 1
    return {e: dict(sorted(summary[e].items())) for e in sorted(summary)}


def _fmt_elo(x: float) -> str:
    # inf: a score of 0 or 1, which has no finite Elo; the tables say so in words.
    if math.isinf(x):
        return "n/a"
    return f"{x + 0.0:+.0f}"  # + 0.0: no "-0"


def _fmt_err(x: float | None) -> str:
    # None: no interval computed; 0: a degenerate bootstrap (too few pairs to resample).
    if x is None or x == 0 or math.isinf(x):
        return "-"
    return f"{x:.0f}"


def _estimate_text(est: ScoreEstimate) -> str:
    """Elo, interval, LOS and nElo of one estimate, with words where a figure is undefined."""
    unit = est.unit.name.lower()
    units = f"{est.count} {unit}{'s' if est.count != 1 else ''}"
    if math.isinf(est.elo):
        outcome = "won" if est.mean > 0.5 else "lost"
        return (
            f"Elo undefined: all {units} {outcome} (a score of {100 * est.mean:.0f}% has no "
            "finite Elo; more games will give one)"
        )
    if math.isinf(est.elo_error):
        elo = f"Elo {_fmt_elo(est.elo)} (interval unbounded: too few {unit}s)"
    elif est.elo_error == 0:
        elo = f"Elo {_fmt_elo(est.elo)} (no interval: all {units} had the same result)"
    else:
        elo = f"Elo {_fmt_elo(est.elo)} ±{est.elo_error:.0f}"
    text = f"{elo}  LOS {100 * est.los:.1f}%"
    if math.isfinite(est.normalized_elo):
        text += f"  nElo {est.normalized_elo + 0.0:+.0f}"
    return text


def _pairing_gain_text(h: HeadToHead) -> str | None:
    """What duplicate pairing saved in one pairing, or why that is undefined."""
    r = h.games_needed_ratio
    if h.pairs == 0:
        return None
    if r is None:
        return (
            "  luck removed by pairing: undefined (every game of the complete pairs had "
            "the same result, so there is no single-game variance to compare with)"
        )
    if r > 1.0:
        return (
            "  luck removed by pairing: none in these games (pairs varied more than "
            f"independent games would: they need {100 * r:.0f}% of the games single games "
            f"need for the same interval width; {h.pairs} pairs)"
        )
    return (
        f"  luck removed by pairing: {100 * (1 - r):.0f}% of the single-game variance "
        f"(pairs need {100 * r:.0f}% of the games single games need for the same interval "
        f"width; {h.pairs} pairs)"
    )


class Report:
    """Every table of a tournament, computed once."""

    def __init__(self, results: Sequence[GameResult], *, seed: int = 0) -> None:
        self.results = list(results)
        self.outcomes = [r.outcome for r in self.results]
        self.engines = sorted({e for r in self.results for e in r.engines})
        self.ratings: RatingTable | None = (
            fit_ratings(self.outcomes, bootstrap=BOOTSTRAP, seed=seed)
            if len(self.engines) >= 2 and _connected(self.outcomes)
            else None
        )
        pairings = sorted({tuple(sorted(r.engines)) for r in self.results})
        self.h2h: list[tuple[HeadToHead, PointsPerDeal]] = [
            (head_to_head(self.outcomes, a, b), points_per_deal(self.outcomes, a, b))
            for a, b in pairings
        ]
        self.faults = fault_summary(self.outcomes)

    def standings_text(self) -> str:
        """The rank table (joint Bradley-Terry fit, 95 % intervals from a pair bootstrap)."""
        lines = []
        if self.ratings is None:
            return "standings: not enough connected games to rate the engines\n"
        lines.append(
            f"{'rank':>4}  {'engine':<16} {'Elo':>6} {'±95%':>6} {'games':>6} {'score':>7}"
            f"  {'faults':>6}"
        )
        for row in self.ratings.rows:
            nfaults = sum(self.faults.get(row.engine, {}).values())
            lines.append(
                f"{row.rank:>4}  {row.engine:<16} {_fmt_elo(row.rating):>6} "
                f"{_fmt_err(row.error):>6} {row.games:>6} {100 * row.score:>6.1f}%  {nfaults:>6}"
            )
        lines.append(
            f"(Elo relative to the pool average; intervals from {BOOTSTRAP} bootstrap "
            "resamples of duplicate pairs)"
        )
        if any(math.isinf(row.rating) for row in self.ratings.rows):
            lines.append("(Elo n/a: an engine that won or lost every game has no finite Elo)")
        if any(row.error is not None and math.isinf(row.error) for row in self.ratings.rows):
            lines.append("(±95% -: the interval is unbounded, too few games)")
        return "\n".join(lines) + "\n"

    def crosstable_text(self) -> str:
        """Engine-by-engine scores."""
        table = crosstable(self.outcomes)
        names = table.engines
        width = max([8, *(len(n) for n in names)])
        head = " " * (width + 2) + " ".join(f"{n[:9]:>9}" for n in names)
        lines = [head]
        for row in names:
            cells = []
            for col in names:
                cell = table.cell(row, col)
                cells.append(f"{'':>9}" if cell is None else f"{cell.wins:>4}-{cell.losses:<4}")
            lines.append(f"{row:<{width}}  " + " ".join(cells))
        return "\n".join(lines) + "\n"

    def head_to_head_text(self) -> str:
        """Per pairing: score, Elo on games and on pairs, LOS, luck share, points per deal."""
        out = []
        for h, ppd in self.h2h:
            ge = h.game_estimate
            out.append(
                f"{h.engine_a} vs {h.engine_b}: {h.games} games, +{h.wins} -{h.losses} "
                f"({100 * h.score:.1f}%)"
            )
            out.append(f"  games: {_estimate_text(ge)}")
            pe = h.pair_estimate
            if pe is not None:
                out.append(
                    f"  pairs: {h.pairs} (won {h.pairs_won}, split {h.pairs_split}, lost "
                    f"{h.pairs_lost})  {_estimate_text(pe)}"
                )
            gain = _pairing_gain_text(h)
            if gain is not None:
                out.append(gain)
            est = ppd.pair_estimate or ppd.game_estimate
            if est is not None and math.isfinite(est.error):
                out.append(
                    f"  points per deal for {h.engine_a}: {est.mean:+.3f} ±{est.error:.3f} "
                    f"({est.unit.name.lower()}s, {ppd.deals} deals)"
                )
            if h.incomplete_pairs:
                out.append(f"  incomplete pairs (left out of pair figures): {h.incomplete_pairs}")
        ratios = [
            (h.pairs, h.games_needed_ratio) for h, _ in self.h2h if h.games_needed_ratio is not None
        ]
        total = sum(n for n, _ in ratios)
        if total:
            pooled = sum(n * r for n, r in ratios) / total
            change = (
                f"{100 * (1 - pooled):.0f}% fewer"
                if pooled <= 1.0
                else f"{100 * (pooled - 1):.0f}% more: no gain in these games"
            )
            out.append(
                f"over all pairings ({total} pairs): duplicate pairs need {100 * pooled:.0f}% of "
                f"the games single games need for the same interval width ({change})"
            )
        return "\n".join(out) + "\n"

    def faults_text(self) -> str:
        """Faults per engine and reason (forfeits are counted as losses above)."""
        rows = [
            f"  {engine}: " + ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items()))
            for engine, reasons in sorted(self.faults.items())
            if reasons
        ]
        if not rows:
            return "faults: none\n"
        return "faults (each one a forfeited game, counted as a loss):\n" + "\n".join(rows) + "\n"

    def text(self) -> str:
        """The whole report (one line when no game was recorded, e.g. all were aborted)."""
        if not self.results:
            return "no games were recorded\n"
        # The standings come last: they are what stays on the screen.
        return "\n".join(
            [
                "== head to head",
                self.head_to_head_text(),
                self.faults_text(),
                "== crosstable (row's wins-losses against column)",
                self.crosstable_text(),
                "== standings",
                self.standings_text(),
            ]
        )

    def rating_rows(self) -> list[dict[str, Any]]:
        """The standings as plain data (non-finite figures as null); empty without ratings."""
        if self.ratings is None:
            return []
        return [
            {
                "rank": r.rank,
                "engine": r.engine,
                "elo": _finite(r.rating),
                "lower": _finite(r.lower),
                "upper": _finite(r.upper),
                "games": r.games,
                "wins": r.wins,
                "score": r.score,
            }
            for r in self.ratings.rows
        ]

    def to_json(self) -> dict[str, Any]:
        """The figures as plain data for ``standings.json``."""
        data: dict[str, Any] = {"games": len(self.results), "engines": self.engines}
        if self.ratings is not None:
            data["ratings"] = self.rating_rows()
        data["head_to_head"] = [_h2h_json(h, p) for h, p in self.h2h]
        data["faults"] = self.faults
        return data


def _finite(x: float | None) -> float | None:
    return None if x is None or not math.isfinite(x) else round(x, 3)


def _h2h_json(h: HeadToHead, ppd: PointsPerDeal) -> dict[str, Any]:
    def est(e: Any) -> dict[str, Any] | None:
        if e is None:
            return None
        return {
            "count": e.count,
            "score": e.mean,
            "elo": _finite(e.elo),
            "elo_lower": _finite(e.elo_lower),
            "elo_upper": _finite(e.elo_upper),
            "los": e.los,
            "normalized_elo": _finite(e.normalized_elo),
        }

    margin = ppd.pair_estimate or ppd.game_estimate
    return {
        "engines": [h.engine_a, h.engine_b],
        "games": h.games,
        "wins": h.wins,
        "losses": h.losses,
        "games_estimate": est(h.game_estimate),
        "pairs_estimate": est(h.pair_estimate),
        "pairs": {"won": h.pairs_won, "split": h.pairs_split, "lost": h.pairs_lost},
        "luck_share": h.luck_share,
        "games_needed_ratio": h.games_needed_ratio,
        "points_per_deal": None
        if margin is None
        else {"mean": margin.mean, "error": _finite(margin.error), "unit": margin.unit.name},
    }


def _connected(outcomes: Sequence[GameOutcome]) -> bool:
    engines = sorted({e for o in outcomes for e in o.engines})
    if not engines:
        return False
    links: dict[str, set[str]] = {e: set() for e in engines}
    for o in outcomes:
        links[o.engines[0]].add(o.engines[1])
        links[o.engines[1]].add(o.engines[0])
    seen = {engines[0]}
    todo = [engines[0]]
    while todo:
        for n in links[todo.pop()]:
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return len(seen) == len(engines)


def build_report(results: Sequence[GameResult], seed: int = 0) -> Report:
    """Compute every table from game results."""
    return Report(results, seed=seed)


def pgn_of(results: Sequence[GameResult], event: str = "Ecarte tournament") -> str:
    """Results as PGN headers (one empty game per result) for Ordo and BayesElo.

    Seat 0 is written as White; a game has no draws, so each result is 1-0 or 0-1.
    """
    chunks = []
    for r in results:
        result = "1-0" if r.winner == 0 else "0-1"
        chunks.append(
            f'[Event "{event}"]\n[Site "?"]\n[Date "????.??.??"]\n[Round "{r.game_id + 1}"]\n'
            f'[White "{r.engines[0]}"]\n[Black "{r.engines[1]}"]\n[Result "{result}"]\n'
            f'[Termination "{r.reason}"]\n\n{result}\n'
        )
    return "\n".join(chunks)
