"""Memory of a run per game: resume over synthetic journals, RSS projected to 100,000 games.

A two-engine run's journal of N random-playout games (``synthetic_journal.py``) is
resumed by ``run_tournament`` in a fresh interpreter, once with the first N/2 games
and once with all N (every game is already there: nothing is played, but the
journal is read, checked and kept in the form the runner keeps for its report).
The growth per game is the difference of the two resident sizes, measured while the
runner's returned results are still alive; the projection for 100,000 games adds
that growth to the N-game figure.  The floor is a fresh interpreter with the
project imported.  Peak is the high-water mark (VmHWM) of the whole resume.  Prints
figures only (Linux: reads /proc/self/status).  Run from the repository root:

    PYTHONPATH=. python bench/bench_memory.py [games]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

TARGET = 100_000


def status_kb(key: str) -> int:
    """A field of /proc/self/status in KB (VmRSS, VmHWM)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    raise KeyError(key)


def child(argv: list[str]) -> None:
    """Measure in this interpreter; print ``rss_kb peak_kb``."""
    import gc

    import trio
    from synthetic_journal import config_for

    import arbiter.cli  # noqa: F401  (the whole project, as the ecarte command loads it)
    from arbiter.tournament import run_tournament

    if argv[0] == "floor":
        gc.collect()
        print(status_kb("VmRSS"), status_kb("VmHWM"))
        return
    out, games = Path(argv[1]), int(argv[2])
    config = config_for(games)
    kept = trio.run(
        lambda: run_tournament(config, base_dir=out, out_dir=out, resume=True, concurrency=1)
    )
    assert len(kept) == games, len(kept)
    gc.collect()
    print(status_kb("VmRSS"), status_kb("VmHWM"))


def measure(*args: str) -> tuple[int, int]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).parent), *sys.path])}
    done = subprocess.run(
        [sys.executable, __file__, "--child", *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    rss, peak = done.stdout.split()
    return int(rss), int(peak)


def main() -> None:
    from synthetic_journal import write_journal

    games = int(sys.argv[1]) if len(sys.argv) > 1 else 40_000
    half = games // 2 - games // 2 % 2
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full"
        write_journal(full / "games.jsonl", games)
        part = Path(tmp) / "half"
        part.mkdir()
        with open(full / "games.jsonl", "rb") as src, open(part / "games.jsonl", "wb") as dst:
            for _ in range(half):
                dst.write(src.readline())
        size = (full / "games.jsonl").stat().st_size
        floor, _ = measure("floor")
        rss_half, _ = measure("resume", str(part), str(half))
        rss_full, peak_full = measure("resume", str(full), str(games))
    per_game = (rss_full - rss_half) * 1024 / (games - half)
    projected = rss_full + per_game * (TARGET - games) / 1024
    mb = 1 / 1024
    print(f"journal: {games} games, {size / games / 1000:.1f} KB a record")
    print(f"floor (interpreter + project imported)   {floor * mb:7.1f} MB RSS")
    print(f"resume of {half:>6} games                     {rss_half * mb:7.1f} MB RSS")
    print(
        f"resume of {games:>6} games                     {rss_full * mb:7.1f} MB RSS"
        f"   peak {peak_full * mb:.1f} MB"
    )
    print(f"growth per game                          {per_game:7.0f} bytes")
    print(f"projected for {TARGET:,} games            {projected * mb:7.1f} MB RSS")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
    else:
        main()
