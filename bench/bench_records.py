"""Records per second that ``--resume`` can check, next to plain decoding.

A synthetic journal of random-playout games (``synthetic_journal.py``) is read
three ways, each the fastest of a few runs:

- floor: :class:`~arbiter.journal.JournalReader` alone (read and decode each line);
- re-refereed: :func:`~arbiter.journal.checked_entries` (decode, replay through the
  rules, refuse duplicate game ids), what ``ecarte stats`` and ``merge`` do;
- resume: the same plus the schedule check (game id, engines, seats, deal set,
  first dealer, rules, every deck), what ``--resume`` does.

Prints figures only.  Run from the repository root:

    PYTHONPATH=. python bench/bench_records.py [games]
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from synthetic_journal import SEED, config_for, write_journal

from arbiter.journal import JournalReader, checked_entries
from arbiter.tournament import schedule_check, schedule_of

RUNS = 3


def best(fn: Callable[[], int]) -> tuple[float, int]:
    """Fastest wall time of ``fn`` over RUNS runs, and what it counted."""
    times = []
    count = 0
    for _ in range(RUNS):
        t0 = time.perf_counter()
        count = fn()
        times.append(time.perf_counter() - t0)
    return min(times), count


def main() -> None:
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "games.jsonl"
        write_journal(path, games)
        config = config_for(games)
        assert config.seed == SEED
        check = schedule_check(schedule_of(config), config.resolved_rules(), SEED)
        size = path.stat().st_size
        floor, n = best(lambda: sum(1 for _ in JournalReader(path)))
        referee, _ = best(lambda: sum(1 for _ in checked_entries(JournalReader(path))))
        resume, _ = best(lambda: sum(1 for _ in checked_entries(JournalReader(path), check)))
    print(f"{n} records, {size / n / 1000:.1f} KB each, best of {RUNS} runs")
    rows = [
        ("floor (read + decode)", floor),
        ("re-refereed (stats, merge)", referee),
        ("resume checks (+ schedule)", resume),
    ]
    for label, seconds in rows:
        print(
            f"{label:<28} {n / seconds:>9,.0f} records/s  ({seconds / floor:.1f}x the floor's time)"
        )
    print(f"resume over 100,000 games: about {100_000 * resume / n:.0f} s of checking")


if __name__ == "__main__":
    main()
