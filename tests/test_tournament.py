"""End-to-end tournaments: records, pairing balance, standings, resume after kill -9, shards."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
import trio

from arbiter.cli import main as cli_main
from arbiter.config import parse_config
from arbiter.journal import JournalError, read_journal
from arbiter.record import GameRecord, Termination, rereferee
from arbiter.report import GameResult
from arbiter.rules import seed_sha256
from arbiter.schedule import make_schedule, parse_shard, shard
from arbiter.stats import GameOutcome
from arbiter.tournament import Progress, TournamentError, run_tournament

ROOT = Path(__file__).resolve().parents[1]

CONFIG = """
name: small
engines:
  - name: r1
    builtin: random
    options: {seed: 1}
  - name: r2
    builtin: random
    options: {seed: 2}
  - name: greedy
games_per_pairing: {games}
seed: 77
time_control:
  per_move_ms: 2000
concurrency: 2
"""


SMALL = """
engines:
  - {name: a, builtin: random}
  - {name: b, builtin: random}
games_per_pairing: 2
seed: 77
"""
"""Two games: for the tests of what surrounds the games, not of the games."""


def _config(games: int = 4) -> str:
    return CONFIG.replace("{games}", str(games))


def _comparable(r: GameRecord) -> GameRecord:
    """A record without the timing fields, which differ from run to run."""
    deals = [
        msgspec.structs.replace(d, actions=[msgspec.structs.replace(a, ms=0.0) for a in d.actions])
        for d in r.deals
    ]
    return msgspec.structs.replace(r, deals=deals, started="", seconds=0.0)


def _run(text: str, out: Path, **kwargs: object) -> list[GameRecord]:
    """Run a tournament; its journaled records in game-id order."""
    config = parse_config(text)
    results = trio.run(
        lambda: run_tournament(config, base_dir=ROOT, out_dir=out, **kwargs)  # type: ignore[arg-type]
    )
    records = sorted(read_journal(out / "games.jsonl").records, key=lambda r: r.game_id)
    assert [r.game_id for r in results] == [r.game_id for r in records]
    assert [(r.engines, r.winner) for r in results] == [
        (tuple(r.engines), r.winner) for r in records
    ]
    return records


@pytest.mark.slow
def test_round_robin_end_to_end(tmp_path: Path) -> None:
    """Records replay, pairings are balanced, deals are shared, standings are written."""
    out = tmp_path / "rr"
    records = _run(_config(4), out)
    assert len(records) == 3 * 4
    assert [r.game_id for r in records] == list(range(12))
    for r in records:
        assert r.termination.reason == "normal"
        rereferee(r)
        assert all(len(d.deck) == 32 for d in r.deals)
    # Every pair of engines meets the same number of times, seats balanced.
    meetings = Counter(tuple(sorted(r.engines)) for r in records)
    assert set(meetings.values()) == {4}
    seat0 = Counter(r.engines[0] for r in records)
    assert set(seat0.values()) == {4}
    # Duplicate pairs: same deals, seats swapped; the same deal sets in every pairing.
    by_pair: dict[str, list[GameRecord]] = {}
    for r in records:
        assert r.pair_id is not None
        by_pair.setdefault(r.pair_id, []).append(r)
    for games in by_pair.values():
        a, b = games
        assert a.engines == b.engines[::-1]
        assert a.deal_set == b.deal_set and a.first_dealer == b.first_dealer
        n = min(len(a.deals), len(b.deals))
        assert [d.deck for d in a.deals[:n]] == [d.deck for d in b.deals[:n]]
    sets_per_pairing = {
        p: sorted({r.deal_set for r in records if tuple(sorted(r.engines)) == p}) for p in meetings
    }
    assert len({tuple(v) for v in sets_per_pairing.values()}) == 1
    # Standings from the CLI over the same journal.
    assert cli_main(["stats", str(out), "--pgn", str(tmp_path / "games.pgn")]) == 0
    standings = msgspec.json.decode((out / "standings.json").read_bytes())
    assert sum(row["games"] for row in standings["ratings"]) == 2 * len(records)
    assert (tmp_path / "games.pgn").read_text().count("[Result ") == len(records)
    resolved = msgspec.json.decode((out / "config.resolved.json").read_bytes())
    assert resolved["seed"] == 77 and "versions" in resolved


def test_refuses_to_overwrite_results(tmp_path: Path) -> None:
    """Finished results are never lost: a second run into the same OUT needs --resume."""
    out = tmp_path / "o"
    _run(SMALL, out)
    with pytest.raises(TournamentError, match="already holds 2 finished games"):
        _run(SMALL, out)


@pytest.mark.slow
def test_resume_after_truncated_last_line(tmp_path: Path) -> None:
    """A truncated last record is dropped with a warning and its game replayed."""
    whole = _run(_config(2), tmp_path / "whole")
    out = tmp_path / "cut"
    _run(_config(2), out)
    journal = out / "games.jsonl"
    data = journal.read_bytes()
    last_start = data.rstrip(b"\n").rfind(b"\n") + 1
    journal.write_bytes(data[: last_start + 40])  # half a line, no newline
    warnings: list[str] = []
    records = _run(_config(2), out, resume=True, on_event=warnings.append)
    assert any("dropped a truncated last record" in w for w in warnings)
    assert [_comparable(r) for r in records] == [_comparable(r) for r in whole]
    assert len(read_journal(journal).records) == len(whole)


def test_resume_refuses_a_journal_of_another_seed(tmp_path: Path) -> None:
    out = tmp_path / "o"
    _run(SMALL, out)
    (out / "config.resolved.json").unlink()
    with pytest.raises(JournalError, match="played with another seed"):
        _run(SMALL.replace("seed: 77", "seed: 78"), out, resume=True)


def test_damaged_middle_line_is_an_error(tmp_path: Path) -> None:
    out = tmp_path / "bad"
    _run(SMALL.replace("games_per_pairing: 2", "games_per_pairing: 4"), out)  # a middle line
    journal = out / "games.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    lines[1] = b"{not json\n"
    journal.write_bytes(b"".join(lines))
    assert cli_main(["stats", str(out)]) == 2


@pytest.mark.slow
def test_kill_9_and_resume_equals_uninterrupted_run(tmp_path: Path) -> None:
    """SIGKILL the arbiter mid-run, resume: the records equal an uninterrupted run's."""
    cfg = tmp_path / "t.yaml"
    cfg.write_text(_config(16))
    reference = _run(_config(16), tmp_path / "ref")
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "arbiter", "tournament", str(cfg), "--out", str(out), "--quiet"]
    proc = subprocess.Popen(
        cmd, env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    journal = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_bytes().count(b"\n") >= 7:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = read_journal(journal).records
    assert 7 <= len(partial) < len(reference), "the kill came mid-run"
    resumed = subprocess.run(
        [*cmd, "--resume"], env=env, cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert resumed.returncode == 0, resumed.stderr
    final = read_journal(journal).records
    # Games finish out of order under concurrency: compare by game id.
    assert [_comparable(r) for r in sorted(final, key=lambda r: r.game_id)] == [
        _comparable(r) for r in reference
    ]


@pytest.mark.slow
def test_shards_merged_equal_the_unsharded_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Shards 1/3, 2/3, 3/3 merged give exactly the unsharded records."""
    whole = _run(_config(6), tmp_path / "whole")  # three deal sets, one a shard
    dirs = []
    for k in (1, 2, 3):
        d = tmp_path / f"shard{k}"
        _run(_config(6), d, shard_spec=(k, 3))
        dirs.append(str(d))
    assert cli_main(["merge", *dirs, "--out", str(tmp_path / "merged")]) == 0
    merged = read_journal(tmp_path / "merged" / "games.jsonl").records
    assert [_comparable(r) for r in merged] == [_comparable(r) for r in whole]
    assert "lacks" not in capsys.readouterr().err
    assert (tmp_path / "merged" / "report.html").stat().st_size > 0  # the merged run's page
    # A shard forgotten: the merge says so.
    assert cli_main(["merge", *dirs[:2], "--out", str(tmp_path / "partial")]) == 0
    assert "the merged result lacks 6 game(s) of the schedule" in capsys.readouterr().err


@pytest.mark.parametrize("duplicate", [True, False])
def test_shards_partition_the_schedule_by_deal_sets(duplicate: bool) -> None:
    """Shards may run side by side on one machine: no deal set is split between two
    (its bots could pass each other the cards), duplicate pairs included."""
    games = make_schedule(["a", "b", "c", "d"], "round_robin", 6, seed=3, duplicate=duplicate)
    parts = [shard(games, k, 3) for k in (1, 2, 3)]
    ids = sorted(g.game_id for p in parts for g in p)
    assert ids == list(range(len(games)))
    sets = [{g.deal_set for g in p} for p in parts]
    assert all(sets) and sum(len(s) for s in sets) == len(set.union(*sets))
    for p in parts:
        if duplicate:
            pairs = Counter(g.pair_id for g in p)
            assert set(pairs.values()) == {2}, "a pair never straddles two shards"
        # Every pairing plays each of the shard's deal sets.
        assert Counter(g.pairing for g in p) == Counter(
            {pairing: len(p) // 6 for pairing in {g.pairing for g in games}}
        )


def test_more_shards_than_deal_sets_is_refused() -> None:
    from arbiter.schedule import ScheduleError

    games = make_schedule(["a", "b", "c"], "round_robin", 4, seed=3)
    assert len(shard(games, 2, 2)) == 6
    with pytest.raises(ScheduleError, match=r"shard 1/3: the schedule has 2 deal set\(s\)"):
        shard(games, 1, 3)


@pytest.mark.parametrize(
    ("text", "message"),
    [("0/3", "bad shard '0/3'"), ("4/3", "bad shard"), ("1-3", "expected K/N"), ("a/b", "K/N")],
    ids=["zero", "k-above-n", "no-slash", "not-numbers"],
)
def test_bad_shard(text: str, message: str) -> None:
    from arbiter.schedule import ScheduleError

    with pytest.raises(ScheduleError, match=message):
        parse_shard(text)


@pytest.mark.slow
def test_unset_seed_is_random_recorded_and_reused_on_resume(tmp_path: Path) -> None:
    """No seed: one is drawn (not guessable), recorded, and --resume continues with it."""
    text = _config(2).replace("seed: 77\n", "")
    out = tmp_path / "s"
    events: list[str] = []
    first = _run(text, out, on_event=events.append)
    assert not [e for e in events if e.startswith("warning")]
    seed = msgspec.json.decode((out / "config.resolved.json").read_bytes())["seed"]
    assert isinstance(seed, str) and re.fullmatch(r"[0-9a-f]{32}", seed)
    assert first[0].seed_sha256 == seed_sha256(seed)
    journal = out / "games.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"".join(lines[:3]))
    resumed = _run(text, out, resume=True)
    assert [_comparable(r) for r in resumed] == [_comparable(r) for r in first]
    other = _run(text, tmp_path / "other")
    assert other[0].seed_sha256 != first[0].seed_sha256


@pytest.mark.parametrize(
    ("seed", "warned"), [("77", True), ("'a-long-seed-of-thirty-two-chars!'", False)]
)
def test_a_short_seed_warns_once(tmp_path: Path, seed: str, warned: bool) -> None:
    text = (
        "engines:\n  - {name: a, builtin: random}\n  - {name: b, builtin: random}\n"
        f"games_per_pairing: 2\nseed: {seed}\n"
    )
    events: list[str] = []
    _run(text, tmp_path / "w", on_event=events.append)
    warnings = [e for e in events if e.startswith("warning: seed")]
    assert warnings == (
        [
            "warning: seed 77 is short: any bot that learns or guesses it can rebuild every "
            "deck; leave seed unset (a random 128-bit seed) for untrusted bots"
        ]
        if warned
        else []
    )


def test_shard_without_a_seed_is_refused(tmp_path: Path) -> None:
    text = _config(2).replace("seed: 77\n", "")
    with pytest.raises(TournamentError, match="--shard needs a fixed seed"):
        _run(text, tmp_path / "x", shard_spec=(1, 2))


MEMORY_BOT = """
import os, random, sys
sys.path.insert(0, {root!r})
from protocol.messages import NewGame
from protocol.sdk import run_bot

# Not the PID: in the sandbox every bot is PID 2 of its own namespace.
PROCESS = os.urandom(8).hex()

def notice(message):
    if isinstance(message, NewGame):
        with open(os.environ["SEEN_LOG"], "a") as f:
            f.write(f"{{PROCESS}} {{message.game_number}}\\n")

run_bot(lambda r: random.choice(r.legal), name="memo", author="t", version="1",
        on_notice=notice)
"""


@pytest.mark.slow
def test_no_process_is_shown_the_same_deals_twice(tmp_path: Path) -> None:
    """Duplicate deals are never replayed to a process that has seen them."""
    bot = tmp_path / "memo.py"
    bot.write_text(MEMORY_BOT.format(root=str(ROOT)))
    logs = []
    engines = ""
    for name in ("m1", "m2"):
        # Each engine logs in a directory of its own that the sandbox lets it write.
        (tmp_path / name).mkdir()
        if os.geteuid() == 0:
            os.chown(tmp_path / name, 65534, 65534)  # writable by the bots' user
        logs.append(tmp_path / name / "seen.log")
        grant = f"env: {{SEEN_LOG: {logs[-1]}}}, write_paths: [{tmp_path / name}]"
        engines += f"  - {{name: {name}, command: [{sys.executable}, {bot}], {grant}}}\n"
    text = f"engines:\n{engines}  - name: random\ngames_per_pairing: 4\nseed: 5\nconcurrency: 1\n"

    def seen() -> list[str]:
        return [line for log in logs if log.exists() for line in log.read_text().split("\n")[:-1]]

    records = _run(text, tmp_path / "out")
    assert all(r.termination.reason == "normal" for r in records)
    first = seen()
    assert len(first) == len(set(first)), "a process was dealt the same deal set twice"
    assert len(first) == sum(r.engines.count("m1") + r.engines.count("m2") for r in records)
    # For trusted bots the isolation can be turned off: processes then see deals again.
    for log in logs:
        log.unlink()
    _run(text + "isolate_deals: false\n", tmp_path / "trusted")
    again = seen()
    assert len(again) > len(set(again))


def test_schedule_shapes() -> None:
    """Formats: every pairing the same deals; double round-robin's second leg has new deals."""
    rr = make_schedule(["a", "b", "c"], "round_robin", 4, seed=1)
    assert len(rr) == 3 * 4
    sets = {p: sorted(g.deal_set for g in rr if g.pairing == p) for p in {g.pairing for g in rr}}
    assert all(v == [0, 0, 1, 1] for v in sets.values())
    drr = make_schedule(["a", "b", "c"], "double_round_robin", 4, seed=1)
    assert len(drr) == 2 * len(rr)
    by_unordered: dict[frozenset[str], list[int]] = {}
    for g in drr:
        by_unordered.setdefault(frozenset(g.engines), []).append(g.deal_set)
    assert all(sorted(v) == [0, 0, 1, 1, 2, 2, 3, 3] for v in by_unordered.values())
    gauntlet = make_schedule(["a", "b", "c"], "gauntlet", 2, seed=1, challenger="c")
    assert {g.pairing for g in gauntlet} == {("c", "a"), ("c", "b")}
    single = make_schedule(["a", "b"], "round_robin", 3, seed=1, duplicate=False)
    assert [g.engines for g in single] == [("a", "b"), ("b", "a"), ("a", "b")]
    assert all(g.pair_id is None for g in single)


def test_output_directory_is_locked(tmp_path: Path) -> None:
    """Two runs cannot write to the same OUT at once."""
    import fcntl

    out = tmp_path / "locked"
    out.mkdir()
    fd = os.open(out / ".lock", os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(TournamentError, match="another ecarte run is writing to"):
            _run(SMALL, out)
    finally:
        os.close(fd)
    assert len(_run(SMALL, out)) == 2


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished 6-game run made through the CLI under a permissive umask."""
    base = tmp_path_factory.mktemp("finished")
    cfg = base / "t.yaml"
    cfg.write_text(_config(2))
    old = os.umask(0o022)
    try:
        assert cli_main(["tournament", str(cfg), "--out", str(base / "out"), "--quiet"]) == 0
    finally:
        os.umask(old)
    return base


def _mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_output_files_are_owner_only(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Records show every card: OUT, its files and logs are 0700/0600 whatever the umask."""
    out = finished_run / "out"
    assert _mode(out) == 0o700 and _mode(out / "logs") == 0o700
    for name in ("games.jsonl", "config.resolved.json", "standings.json", ".lock"):
        assert _mode(out / name) == 0o600, name
    logs = sorted((out / "logs").iterdir())
    assert [p.name for p in logs] == [f"{n}.stderr.log" for n in ("greedy", "r1", "r2")]
    assert all(_mode(p) == 0o600 for p in logs)
    old = os.umask(0o022)
    try:
        assert cli_main(["merge", str(out), "--out", str(tmp_path / "merged")]) == 0
    finally:
        os.umask(old)
    merged = tmp_path / "merged"
    assert _mode(merged) == 0o700
    for name in ("games.jsonl", "config.resolved.json", "standings.json"):
        assert _mode(merged / name) == 0o600, name
    assert "merged 6 games" in capsys.readouterr().out


def _flip_winner(lines: list[bytes]) -> None:
    rec = msgspec.json.decode(lines[1], type=GameRecord)
    lines[1] = msgspec.json.encode(msgspec.structs.replace(rec, winner=1 - rec.winner)) + b"\n"


def _duplicate(lines: list[bytes]) -> None:
    lines.insert(2, lines[0])


def _change_card(lines: list[bytes]) -> None:
    # Swap the last two cards of deal 1: the game may even replay, but not the deal.
    rec = msgspec.json.decode(lines[1], type=GameRecord)
    deal = rec.deals[0]
    deck = [*deal.deck[:-2], deal.deck[-1], deal.deck[-2]]
    deals = [msgspec.structs.replace(deal, deck=deck), *rec.deals[1:]]
    lines[1] = msgspec.json.encode(msgspec.structs.replace(rec, deals=deals)) + b"\n"


def _outside_schedule(lines: list[bytes]) -> None:
    rec = msgspec.json.decode(lines[1], type=GameRecord)
    lines[1] = msgspec.json.encode(msgspec.structs.replace(rec, game_id=99)) + b"\n"


def _swap_seats(lines: list[bytes]) -> None:
    rec = msgspec.json.decode(lines[1], type=GameRecord)
    lines[1] = msgspec.json.encode(msgspec.structs.replace(rec, engines=rec.engines[::-1])) + b"\n"


def _forfeit_won_by_offender(lines: list[bytes]) -> None:
    rec = msgspec.json.decode(lines[1], type=GameRecord)
    end = Termination(reason="timeout", offender=rec.winner)
    lines[1] = (
        msgspec.json.encode(msgspec.structs.replace(rec, deals=[], scores=[0, 0], termination=end))
        + b"\n"
    )


@pytest.mark.parametrize(
    ("tamper", "line", "message"),
    [
        (_flip_winner, 2, "does not check out: final scores"),
        (_duplicate, 3, "appears a second time (first on line 1)"),
        (_change_card, 2, "deal 1"),
        (_outside_schedule, 2, "game 99 does not check out: game id 99 is not in the schedule"),
        (_swap_seats, 2, "engines differ from the schedule"),
        (_forfeit_won_by_offender, 2, "forfeited (timeout), record says seat"),
    ],
    ids=[
        "flipped-winner",
        "duplicated-line",
        "changed-card",
        "outside-schedule",
        "swapped-seats",
        "forfeit-won-by-offender",
    ],
)
def test_resume_refuses_a_tampered_journal(
    finished_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    tamper: Callable[[list[bytes]], None],
    line: int,
    message: str,
) -> None:
    """Bots may write to the journal: resume re-referees each record and names a bad line."""
    out = tmp_path / "out"
    shutil.copytree(finished_run / "out", out)
    journal = out / "games.jsonl"
    lines = journal.read_bytes().splitlines(keepends=True)
    tamper(lines)
    journal.write_bytes(b"".join(lines))
    cfg = str(finished_run / "t.yaml")
    code = cli_main(["tournament", cfg, "--out", str(out), "--resume", "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"ecarte tournament: error: {journal}:{line}: game " in err
    assert message in err
    assert journal.read_bytes() == b"".join(lines), "a refused journal is left as it was"


def test_stats_and_merge_refuse_a_record_that_does_not_replay(
    finished_run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """stats and merge re-referee too, and check the schedule, naming the file and line."""
    out = tmp_path / "out"
    shutil.copytree(finished_run / "out", out)
    lines = (out / "games.jsonl").read_bytes().splitlines(keepends=True)
    _flip_winner(lines)
    (out / "games.jsonl").write_bytes(b"".join(lines))
    assert cli_main(["merge", str(out), "--out", str(tmp_path / "merged")]) == 2
    assert f"ecarte merge: error: {out / 'games.jsonl'}:2: game " in capsys.readouterr().err
    assert not (tmp_path / "merged" / "games.jsonl").exists()
    lines = (finished_run / "out" / "games.jsonl").read_bytes().splitlines(keepends=True)
    _duplicate(lines)
    (out / "games.jsonl").write_bytes(b"".join(lines))
    assert cli_main(["stats", str(out)]) == 2
    assert "games.jsonl:3: game" in capsys.readouterr().err
    # With the run's config.resolved.json beside the journal, the schedule is checked too.
    for tamper, message, command in [
        (_outside_schedule, "game id 99 is not in the schedule", ["stats", str(out)]),
        (_swap_seats, "engines differ", ["merge", str(out), "--out", str(tmp_path / "m")]),
    ]:
        lines = (finished_run / "out" / "games.jsonl").read_bytes().splitlines(keepends=True)
        tamper(lines)
        (out / "games.jsonl").write_bytes(b"".join(lines))
        assert cli_main(command) == 2
        assert f"{out / 'games.jsonl'}:2: game " in (err := capsys.readouterr().err)
        assert message in err


class _Terminal(io.StringIO):
    """A stream that says it is a terminal, so Progress draws its bar."""

    def isatty(self) -> bool:
        return True


def _result(game_id: int) -> GameResult:
    return GameResult(game_id, GameOutcome(("a", "b"), game_id % 2, (5, 3), 4, None))


def test_progress_rate_and_eta_count_only_the_games_of_this_run() -> None:
    """Games found on --resume are in the count, not in the rate or the ETA."""
    progress = Progress(total=1000, stream=io.StringIO(), engines=2)
    progress.started -= 10.0  # ten seconds into the run
    for i in range(900):
        progress.record(_result(i), replayed=True)
    assert progress.line().startswith("900/1000 games (900 resumed)  0.0 games/s  ETA ?")
    for i in range(900, 920):
        progress.record(_result(i))
    # 20 games in ten seconds (and a little): 2 games/s, 80 games left.
    m = re.match(r"920/1000 games \(900 resumed\)  (\d+\.\d) games/s  ETA (\d+)s", progress.line())
    assert m is not None, progress.line()
    assert float(m[1]) in (1.9, 2.0) and 40 <= int(m[2]) <= 43


def test_progress_lines_of_their_own_never_run_into_the_bar() -> None:
    """On a terminal a line (an SPRT update) wipes the bar, ends with a newline, and the
    bar is drawn again below it."""
    stream = _Terminal()
    progress = Progress(total=10, stream=stream, engines=2)
    progress.record(_result(0))
    progress.say("SPRT: pairs 1 (+1 =0 -0)  LLR 0.10 [-2.94, 2.94]")
    progress.record(_result(1))
    rows = stream.getvalue().split("\n")
    # What stays on the screen of each row is what follows its last carriage return.
    shown = [row.rsplit("\r", 1)[-1] for row in rows]
    assert shown[0] == "\x1b[KSPRT: pairs 1 (+1 =0 -0)  LLR 0.10 [-2.94, 2.94]"
    assert shown[1].startswith("[####--------------------] 2/10 games")
    assert len(shown) == 2


def test_progress_say_prints_when_quiet_and_off_a_terminal() -> None:
    stream = io.StringIO()
    progress = Progress(total=10, stream=stream, quiet=True)
    progress.record(_result(0))
    progress.say("SPRT verdict line")
    assert stream.getvalue() == "SPRT verdict line\n"


def test_resume_counts_faults_in_a_row_in_the_order_games_finished(tmp_path: Path) -> None:
    """Withdrawals follow the order games finished in, which is the journal's: a resumed
    run reads the streaks in that order, not by game id."""
    bot = ROOT / "tests" / "bots" / "proto_fault_as_seat0.py"
    text = (
        f"engines:\n  - name: half\n    command: [{sys.executable}, {bot}]\n"
        "  - {name: r, builtin: random}\n"
        "games_per_pairing: 4\nseed: 8\nconcurrency: 1\nfaults: {withdraw_after: 2}\n"
    )
    first = _run(text, tmp_path / "first")
    faulted = [r.game_id for r in first if r.termination.offender is not None]
    clean = [r.game_id for r in first if r.termination.offender is None]
    # Seats alternate: faults and clean games take turns, so nobody was withdrawn.
    assert len(faulted) == 2 and len(clean) == 2
    assert all(r.termination.reason != "withdrawn" for r in first)
    # The same games as if they had finished fault, fault, then the clean game between
    # them (concurrency 2 can do that): the streak reached 2, the engine was withdrawn.
    lines = {
        r.game_id: line
        for r, line in zip(
            first, (tmp_path / "first" / "games.jsonl").read_bytes().splitlines(), strict=True
        )
    }
    between = next(g for g in clean if faulted[0] < g < faulted[1])
    out = tmp_path / "resumed"
    out.mkdir()
    (out / "games.jsonl").write_bytes(
        b"\n".join(lines[g] for g in (faulted[0], faulted[1], between)) + b"\n"
    )
    (out / "config.resolved.json").write_bytes(
        (tmp_path / "first" / "config.resolved.json").read_bytes()
    )
    resumed = _run(text, out, resume=True)
    (last,) = [r for r in resumed if r.game_id not in (*faulted, between)]
    assert last.termination.reason == "withdrawn"


@pytest.mark.slow
def test_no_two_games_of_one_deal_set_are_played_at_the_same_time(tmp_path: Path) -> None:
    """Bots running at once share a kernel and could pass cards through it (file locks,
    inotify): a deal set's games are played in turn, even with several workers."""
    bot = Path(__file__).parent / "bots" / "proto_clock_log.py"
    config = tmp_path / "t.yaml"
    config.write_text(
        "engines:\n"
        f"  - {{name: a, command: [{sys.executable}, {bot}]}}\n"
        f"  - {{name: b, command: [{sys.executable}, {bot}]}}\n"
        "  - {name: c, builtin: random}\n"
        "games_per_pairing: 4\nseed: 5\nconcurrency: 2\n"
    )
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "arbiter", "tournament", str(config), "--out", str(out), "--quiet"],
        cwd=Path(__file__).parents[1],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    deal_set = {
        r["game_id"]: r["deal_set"]
        for r in map(json.loads, (out / "games.jsonl").read_text().splitlines())
    }
    spans: dict[int, list[float]] = {}
    for name in ("a", "b"):
        for line in (out / "logs" / f"{name}.stderr.log").read_text().splitlines():
            game = int(re.match(r"\[game (\d+) ", line).group(1))  # type: ignore[union-attr]
            tick = float(line.rsplit(" ", 1)[1])
            span = spans.setdefault(game, [tick, tick])
            span[0], span[1] = min(span[0], tick), max(span[1], tick)
    assert len(spans) == len(deal_set) == 12
    overlaps = 0
    for g, (start, end) in spans.items():
        for h, (start2, end2) in spans.items():
            if g < h and start < end2 and start2 < end:
                assert deal_set[g] != deal_set[h], (g, h)
                overlaps += 1
    assert overlaps > 0  # the two workers did play at the same time


def test_a_refused_run_leaves_no_output_directory_behind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run refused before its first game removes the directory it made (the same
    command then works once fixed); a directory that was there already stays."""
    config = tmp_path / "small.yaml"
    config.write_text(SMALL)
    out = tmp_path / "out"
    assert cli_main(["tournament", str(config), "--out", str(out), "--shard", "2/2"]) == 2
    assert "at most 1 shard(s)" in capsys.readouterr().err
    assert not out.exists()
    out.mkdir()
    assert cli_main(["tournament", str(config), "--out", str(out), "--shard", "2/2"]) == 2
    assert out.is_dir()
