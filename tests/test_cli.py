"""The ``ecarte`` command as a user runs it: Ctrl+C, SPRT matches, check."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import tomllib
import uuid
from pathlib import Path

import msgspec
import pytest

from arbiter import cli
from arbiter.cli import main as cli_main
from arbiter.journal import encode_record, read_journal, write_records
from arbiter.record import GameRecord, Termination
from arbiter.rules import make_rules, seed_sha256
from tests.disk_helpers import fill_disk_after

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def _processes_with_marker(marker: str) -> list[int]:
    """PIDs whose environment holds ``marker`` (the bots of one test run)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if marker.encode() in environ and "State:\tZ" not in status:
            found.append(int(entry.name))
    return found


@pytest.mark.slow
def test_ctrl_c_stops_cleanly_and_prints_the_resume_command(tmp_path: Path) -> None:
    marker = f"ECARTE_TEST_{uuid.uuid4().hex}"
    cfg = tmp_path / "t.yaml"
    cfg.write_text(
        "engines:\n"
        f"  - {{name: a, builtin: random, env: {{MARK: {marker}}}}}\n"
        f"  - {{name: b, builtin: greedy, env: {{MARK: {marker}}}}}\n"
        "games_per_pairing: 400\nconcurrency: 2\n"
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        [sys.executable, "-m", "arbiter", "tournament", str(cfg), "--out", str(out)],
        env=ENV,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    journal = out / "games.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_bytes().count(b"\n") >= 5:
            break
        time.sleep(0.01)
    # Bots are restarted between games, so look a few times before concluding.
    for _ in range(50):
        if _processes_with_marker(marker):
            break
        time.sleep(0.02)
    else:
        pytest.fail("no bot is running")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "interrupted" in err and "resume with: ecarte tournament" in err
    assert "--resume" in err and str(out) in err
    # The drawn seed is read back from config.resolved.json, never put on a command line.
    seed = msgspec.json.decode((out / "config.resolved.json").read_bytes())["seed"]
    assert "--seed" not in err and seed not in err
    found = read_journal(journal)
    assert found.warnings == [] and len(found.records) >= 5
    assert _processes_with_marker(marker) == [], "no bot survives Ctrl+C"


def test_version_prints_the_installed_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`ecarte --version` prints the version of pyproject.toml and exits 0."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    with pytest.raises(SystemExit) as info:
        cli_main(["--version"])
    assert info.value.code == 0
    assert capsys.readouterr().out == f"ecarte {project['version']}\n"


@pytest.mark.parametrize(
    ("given", "hint"),
    [
        ([], None),
        (["CONFIG"], None),
        (["--seed", "42"], "--seed 42"),
        (["--seed", "my key"], "--seed 'my key'"),
    ],
    ids=["drawn", "in-config", "int", "string"],
)
def test_resume_hint_repeats_only_a_seed_the_user_typed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: list[str],
    hint: str | None,
) -> None:
    async def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_tournament", interrupted)
    config = tmp_path / "t.yaml"
    config.write_text("engines: [{name: random}, {name: greedy}]\nseed: 42\n")
    argv = [str(config) if a == "CONFIG" else a for a in given]
    assert cli.main(["tournament", "--out", str(tmp_path / "o"), *argv]) == 130
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("resume with:")]
    assert "--resume" in line
    if hint is None:
        assert "--seed" not in line
    else:
        assert line.endswith(hint)


@pytest.mark.parametrize(
    ("given", "tail"),
    [
        (["random", "greedy", "--games", "4"], "--games 4 --resume --out OUT"),
        (["random", "greedy", "--seed", "7"], "--games 20 --resume --out OUT --seed 7"),
        (
            ["random", "greedy", "--sprt", "elo0=0", "elo1=5", "--time-per-move", "50"],
            "--time-per-move 50 --sprt elo0=0 elo1=5 --games 20000 --resume --out OUT",
        ),
        (["tournament", "CONFIG", "--shard", "2/3"], "--resume --out OUT --shard 2/3"),
    ],
    ids=["match", "match-seed", "match-sprt", "tournament-shard"],
)
def test_resume_hint_repeats_the_command_as_typed(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    given: list[str],
    tail: str,
) -> None:
    """Each command's hint repeats what decides the schedule, and nothing drawn."""

    async def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "run_tournament", interrupted)
    config = tmp_path / "t.yaml"
    config.write_text("engines: [{name: random}, {name: greedy}]\nseed: 42\n")
    out = str(tmp_path / "o")
    argv = [str(config) if a == "CONFIG" else a for a in given]
    if argv[0] != "tournament":
        argv.insert(0, "match")
    assert cli.main([*argv, "--out", out]) == 130
    (line,) = [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("resume with:")]
    assert line.startswith(f"resume with: ecarte {argv[0]} ")
    assert line.endswith(tail.replace("OUT", out))
    assert line.count("--seed") == given.count("--seed")


@pytest.mark.slow
def test_sprt_match_reaches_a_decision(tmp_path: Path) -> None:
    """expert vs random is far apart: the SPRT accepts H1 after a few pairs."""
    out = tmp_path / "sprt"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "arbiter",
            "match",
            "expert",
            "random",
            "--sprt",
            "elo0=0",
            "elo1=100",
            "--seed",
            "5",
            "--out",
            str(out),
            "--quiet",
        ],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "-> accept H1" in result.stderr
    records = read_journal(out / "games.jsonl").records
    assert 2 <= len(records) < 200
    assert "== standings" in result.stdout


def test_check_passes_the_random_engine() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "arbiter", "check", f"{sys.executable} -m engines.random.bot"],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "PASS" in result.stdout and "never answered" not in result.stdout


@pytest.mark.slow
def test_check_reports_a_bot_that_never_answers(tmp_path: Path) -> None:
    bot = tmp_path / "mute.py"
    bot.write_text("import time\ntime.sleep(60)\n")
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "arbiter",
            "check",
            f"{sys.executable} {bot}",
            "--handshake-ms",
            "1000",
        ],
        env={**ENV},
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "no_handshake" in result.stdout and "fix: answer the arbiter's hello" in result.stdout


def test_check_quotes_the_error_a_crashing_bot_printed(tmp_path: Path) -> None:
    bot = tmp_path / "crash.py"
    bot.write_text('raise SystemExit("mybot: cannot load weights")\n')
    result = subprocess.run(
        [sys.executable, "-m", "arbiter", "check", f"{sys.executable} {bot}"],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "its stderr ends: mybot: cannot load weights" in result.stdout
    assert "stopped after game 3" in result.stdout


def test_full_disk_ends_the_run_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The journal cannot be written: exit status 2 and one line naming the file; the
    games recorded before are intact, and --resume finishes the run once there is room."""
    config = tmp_path / "t.yaml"
    config.write_text(
        "engines: [{name: r1, builtin: random}, {name: r2, builtin: random}]\n"
        "games_per_pairing: 4\nseed: 5\nconcurrency: 1\n"
    )
    out = tmp_path / "out"
    fill_disk_after(monkeypatch, records_fit=2)
    assert cli_main(["tournament", str(config), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines()[-1] == (
        f"ecarte tournament: error: cannot write {out / 'games.jsonl'}: No space left on "
        "device; the 2 games finished before are recorded: make room and continue the run "
        "with --resume"
    )
    found = read_journal(out / "games.jsonl")
    assert [r.game_id for r in found.records] == [0, 1] and found.warnings == []
    monkeypatch.undo()
    assert cli_main(["tournament", str(config), "--out", str(out), "--resume", "--quiet"]) == 0
    assert [r.game_id for r in read_journal(out / "games.jsonl").records] == [0, 1, 2, 3]


def test_run_progress_escapes_what_a_bot_wrote(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fault's detail quotes the bot (here a field name): it reaches the terminal escaped."""
    bot = ROOT / "tests" / "bots" / "proto_terminal_escapes.py"
    config = tmp_path / "t.yaml"
    config.write_text(
        f"engines:\n  - name: hostile\n    command: [{sys.executable}, {bot}, field]\n"
        "  - {name: r, builtin: random}\ngames_per_pairing: 2\nseed: 5\nconcurrency: 1\n"
    )
    assert cli_main(["tournament", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    err = capsys.readouterr().err
    assert 'unknown field "\\x1b[2J\\x07\\u202e"' in err
    assert all(ch == "\n" or ch.isprintable() for ch in err), err


def test_merge_refuses_shards_of_different_seeds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    dirs = []
    for i, seed in enumerate((1, 2)):
        record = GameRecord(
            game_id=i,
            engines=["a", "b"],
            pair_id=None,
            deal_set=i,
            seed_sha256=seed_sha256(seed),
            first_dealer=0,
            rules=make_rules(),
            deals=[],
            scores=[0, 0],
            winner=0,
            termination=Termination(reason="disconnected", offender=1),
        )
        shard_dir = tmp_path / f"shard-{i}"
        shard_dir.mkdir()
        write_records(shard_dir / "games.jsonl", [encode_record(record)])
        dirs.append(str(shard_dir))
    assert cli.main(["merge", *dirs, "--out", str(tmp_path / "all")]) == 2
    assert "different seeds" in capsys.readouterr().err
