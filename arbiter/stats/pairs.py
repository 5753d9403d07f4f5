"""Duplicate pairs: the input of the statistics and the units they are computed on.

Everything in :mod:`arbiter.stats` is pure: lists of :class:`GameOutcome` in, frozen
result values out.

**Units.**  A game has a winner, so one game scores 1 or 0 for an engine.  Games are
played in *duplicate pairs*: the same deals twice, seats swapped.  The pair scores
(g1 + g2)/2 ∈ {0, ½, 1} and is the independent unit, because the luck of the deal
cancels between its two games (whoever held the good cards in game one gives them
to the opponent in game two).  Every estimate says which unit it was computed on
(:class:`Unit`); nothing ever guesses "pairs or games" from the length of a vector.
A pair whose partner game is missing (an *incomplete* pair) is left out of the pair
figures and counted apart; unpaired games (``pair_id`` None) only enter the game
figures.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Final

__all__ = ["PAIR_VALUES", "GameOutcome", "PairCounts", "Unit", "games_between", "group_units"]

PAIR_VALUES: Final = (0.0, 0.5, 1.0)
"""The scores a complete pair can have: lost 0-2, split 1-1, won 2-0."""


@dataclass(frozen=True, slots=True)
class GameOutcome:
    """One finished game, as the statistics see it."""

    engines: tuple[str, str]
    """(first-named engine, second-named engine)."""
    winner: int
    """0 or 1: index into ``engines`` of the winner."""
    points: tuple[int, int]
    """Game points each engine scored (e.g. 5 and 3)."""
    deals: int
    """Number of deals played in the game."""
    pair_id: str | None
    """Games sharing a pair_id form a duplicate pair; None for an unpaired game."""
    fault: str | None = None
    """Fault reason ("timeout", "illegal_action", ...) if the game ended by a fault."""
    offender: int | None = None
    """Index into ``engines`` of the faulting engine; it lost the game."""
    deal_margins: tuple[int, ...] = ()
    """Point margin of each deal for engines[0] (its points minus the other's); may be empty."""

    def __post_init__(self) -> None:
        if len(self.engines) != 2 or self.engines[0] == self.engines[1]:
            raise ValueError(f"a game needs two different engines, got {self.engines!r}")
        if self.winner not in (0, 1):
            raise ValueError(f"winner must be 0 or 1, got {self.winner!r}")
        if self.deals < 0:
            raise ValueError(f"deals must be >= 0, got {self.deals!r}")
        if self.offender is not None:
            if self.offender not in (0, 1):
                raise ValueError(f"offender must be 0, 1 or None, got {self.offender!r}")
            if self.fault is None:
                raise ValueError("an offender is given but no fault reason")
            # No check that the offender lost: records written before the offender lost
            # under every policy may show a random_substitute game it won.
        if self.deal_margins and len(self.deal_margins) != self.deals:
            raise ValueError(
                f"{len(self.deal_margins)} deal margins for {self.deals} deals in a game "
                f"between {self.engines[0]!r} and {self.engines[1]!r}"
            )

    def seat_of(self, engine: str) -> int:
        """Index of ``engine`` in ``engines``; ValueError if it did not play."""
        if engine == self.engines[0]:
            return 0
        if engine == self.engines[1]:
            return 1
        raise ValueError(f"{engine!r} did not play in the game {self.engines!r}")

    def score_of(self, engine: str) -> float:
        """1.0 if ``engine`` won the game, 0.0 if it lost."""
        return 1.0 if self.seat_of(engine) == self.winner else 0.0

    def margin_of(self, engine: str) -> int:
        """Total point margin of ``engine``: the sum of the deal margins, else the points."""
        if self.deal_margins:
            margin = sum(self.deal_margins)
        else:
            margin = self.points[0] - self.points[1]
        return margin if self.seat_of(engine) == 0 else -margin


class Unit(Enum):
    """The independent unit a set of scores is made of."""

    GAME = "game"
    """One game, scored 0 or 1; games are taken as independent."""
    PAIR = "pair"
    """A duplicate pair, scored 0, ½ or 1 (the mean of its two games)."""


@dataclass(frozen=True, slots=True)
class PairCounts:
    """Outcomes of complete duplicate pairs for one engine."""

    lost: int
    """Pairs lost 0-2 (score 0)."""
    split: int
    """Pairs split 1-1 (score ½)."""
    won: int
    """Pairs won 2-0 (score 1)."""

    def __post_init__(self) -> None:
        if min(self.lost, self.split, self.won) < 0:
            raise ValueError(f"pair counts must be >= 0, got {self!r}")

    @classmethod
    def from_scores(cls, scores: Iterable[float]) -> PairCounts:
        """Count pair scores, each 0, 0.5 or 1."""
        counts = [0, 0, 0]
        for s in scores:
            if s not in PAIR_VALUES:
                raise ValueError(f"a pair score must be 0, 0.5 or 1, got {s!r}")
            counts[int(s * 2)] += 1
        return cls(*counts)

    @property
    def total(self) -> int:
        """Number of pairs."""
        return self.lost + self.split + self.won


def group_units(outcomes: Iterable[GameOutcome]) -> list[tuple[GameOutcome, ...]]:
    """Group games into independent units: pairs by pair_id, unpaired games alone.

    Raises ValueError for a pair_id on more than two games, or on two games that are
    not the same two engines with the seats swapped.
    """
    groups: dict[str, list[GameOutcome]] = {}
    units: list[tuple[GameOutcome, ...] | str] = []
    for game in outcomes:
        if game.pair_id is None:
            units.append((game,))
            continue
        group = groups.get(game.pair_id)
        if group is None:
            groups[game.pair_id] = [game]
            units.append(game.pair_id)
            continue
        first = group[0]
        if len(group) == 2:
            raise ValueError(f"pair {game.pair_id!r} has more than two games")
        if game.engines != (first.engines[1], first.engines[0]):
            raise ValueError(
                f"pair {game.pair_id!r} is not a duplicate pair: seats {first.engines!r} "
                f"and then {game.engines!r}"
            )
        group.append(game)
    return [u if isinstance(u, tuple) else tuple(groups[u]) for u in units]


def games_between(outcomes: Iterable[GameOutcome], a: str, b: str) -> list[GameOutcome]:
    if a == b:
        raise ValueError(f"a pairing needs two different engines, got {a!r} twice")
    games = [g for g in outcomes if g.engines in ((a, b), (b, a))]
    if not games:
        raise ValueError(f"no games between {a!r} and {b!r}")
    return games
