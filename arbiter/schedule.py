"""Tournament schedules: pairings, duplicate pairs, deal seeds and shards (pure).

Duplicate deals.  Games come in *pairs*: the two games of a pair play the same
deals (the same deck for deal 1, deal 2, ...) with the engines' seats swapped, so
each engine holds, in one game, exactly the cards its opponent held in the other.
The deals of pair ``p`` are fixed by ``(seed, p)`` alone, so the same set of deals is
used for every pairing: every engine faces the same cards.  Both games of a pair
start with the same seat dealing, which is what makes the deals correspond card for
card; that first dealer is drawn from the seed for each pair.

A schedule is a list of :class:`ScheduledGame` in a fixed order; game ids are their
positions.  Shards (``K/N``) take every N-th *deal set*: all the games on one set of
deals (both games of each duplicate pair, in every pairing) are in one shard, so no two
shards ever play the same deals, on two machines or side by side on one.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Literal

from arbiter.rules import Seed

__all__ = ["Format", "ScheduleError", "ScheduledGame", "make_schedule", "parse_shard", "shard"]

Format = Literal["round_robin", "double_round_robin", "gauntlet"]


class ScheduleError(ValueError):
    """Raised for a schedule that cannot be built (too few engines, bad shard, ...)."""


@dataclass(frozen=True, slots=True)
class ScheduledGame:
    """One game of a tournament, fully determined before it is played."""

    game_id: int
    """Position in the schedule (0-based), unique in the tournament."""
    engines: tuple[str, str]
    """Engine names at seat 0 and seat 1."""
    pair_id: str | None
    """Games with the same pair id play the same deals with seats swapped."""
    deal_set: int
    """Which set of deals this game plays (``rules.deck_for(seed, deal_set, n)``)."""
    first_dealer: int
    """Seat that deals first."""
    pairing: tuple[str, str]
    """The pairing this game belongs to, in schedule order (first-named engine first)."""


def _pairings(engines: list[str], fmt: Format, challenger: str | None) -> list[tuple[str, str]]:
    if len(engines) < 2:
        raise ScheduleError("a tournament needs at least two engines")
    if fmt == "gauntlet":
        if challenger is None:
            raise ScheduleError("format gauntlet needs a challenger")
        if challenger not in engines:
            raise ScheduleError(f"challenger {challenger!r} is not one of the engines")
        return [(challenger, e) for e in engines if e != challenger]
    pairs = [(a, b) for i, a in enumerate(engines) for b in engines[i + 1 :]]
    if fmt == "double_round_robin":
        pairs += [(b, a) for a, b in pairs]
    return pairs


def make_schedule(
    engines: list[str],
    fmt: Format,
    games_per_pairing: int,
    seed: Seed,
    *,
    challenger: str | None = None,
    duplicate: bool = True,
) -> list[ScheduledGame]:
    """The whole schedule of a tournament, in the order games are started.

    With ``duplicate`` (the default) ``games_per_pairing`` must be even: it is twice
    the number of pairs.  Rounds are interleaved (pair 0 of every pairing, then pair 1,
    ...) so that partial results are balanced across pairings.
    """
    if games_per_pairing < 1:
        raise ScheduleError("games_per_pairing must be at least 1")
    if duplicate and games_per_pairing % 2:
        raise ScheduleError(
            f"games_per_pairing is {games_per_pairing}: with duplicate deals it must be even "
            "(games come in pairs)"
        )
    pairings = _pairings(engines, fmt, challenger)
    # The second leg of a double round-robin plays new deals: replaying the first
    # leg's deals with the same seats would repeat its games and count them twice.
    legs = 2 if fmt == "double_round_robin" else 1
    per_leg = len(pairings) // legs
    rng = random.Random(f"ecarte-schedule/{seed}")
    games: list[ScheduledGame] = []
    units = games_per_pairing // 2 if duplicate else games_per_pairing
    dealers = [rng.randrange(2) for _ in range(units * legs)]
    # One tuple per seating, shared by all the games (a schedule may hold 100,000s).
    seatings = [(p, (p[1], p[0])) for p in pairings]
    for u in range(units):
        for i, (pairing, swapped) in enumerate(seatings):
            a, b = pairing
            deal_set = u + units * (i // per_leg)
            if duplicate:
                pid = f"{a}~{b}#{deal_set}"
                for seats in (pairing, swapped):
                    games.append(
                        ScheduledGame(len(games), seats, pid, deal_set, dealers[deal_set], pairing)
                    )
            else:
                # Alternate seats so that each engine sits at seat 0 half the time.
                seats = pairing if u % 2 == 0 else swapped
                games.append(
                    ScheduledGame(len(games), seats, None, deal_set, dealers[deal_set], pairing)
                )
    return games


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``K/N`` (1 <= K <= N) into ``(K, N)``."""
    k_text, sep, n_text = text.partition("/")
    try:
        k, n = int(k_text), int(n_text)
    except ValueError:
        k = n = 0
    if not sep or not 1 <= k <= n:
        raise ScheduleError(f"bad shard {text!r}: expected K/N with 1 <= K <= N, like 2/3")
    return k, n


def shard(games: list[ScheduledGame], k: int, n: int) -> list[ScheduledGame]:
    """The deterministic slice ``k`` of ``n``: every n-th deal set, with all its games.

    A deal set is never split: bots of two shards running at the same time on one
    machine could otherwise pass each other the cards of the deals they share (see the
    README, "What the sandbox does not stop").  :class:`ScheduleError` if the schedule
    has fewer deal sets than ``n``, which would leave a shard without games.
    """
    units: dict[int, int] = {}
    for g in games:
        units.setdefault(g.deal_set, len(units))
    if len(units) < n:
        raise ScheduleError(
            f"shard {k}/{n}: the schedule has {len(units)} deal set(s) (each played in every "
            f"pairing) and a deal set is never split, so at most {len(units)} shard(s); "
            "use fewer shards or more games per pairing"
        )
    return [g for g in games if units[g.deal_set] % n == k - 1]
