"""The ``ecarte`` command as a user runs it: Ctrl+C, SPRT matches, check."""

from __future__ import annotations

import errno
import os
import re
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
from arbiter.bot import traffic_dir
from arbiter.cli import main as cli_main
from arbiter.journal import encode_record, read_journal, write_records
from arbiter.record import GameRecord, Termination
from arbiter.rules import make_rules, seed_sha256
from arbiter.stats import SprtState
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
        # A suite started in the background by a script inherits SIGINT ignored (the
        # shell's rule for background jobs), and so would the arbiter: restore it.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
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


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        pytest.param(
            ["tournament", "x.yaml", "--concurency", "2"],
            "ecarte tournament: error: unrecognized argument --concurency (did you mean "
            "--concurrency?); see ecarte tournament --help",
            id="tournament-misspelt",
        ),
        pytest.param(
            ["match", "random", "greedy", "--time-per-mvoe=5"],
            "ecarte match: error: unrecognized argument --time-per-mvoe=5 (did you mean "
            "--time-per-move?); see ecarte match --help",
            id="match-misspelt-with-value",
        ),
        pytest.param(
            ["check", "./bot", "--games", "0"],
            "ecarte check: error: argument --games: 0 games: must be at least 1; "
            "see ecarte check --help",
            id="check-bad-value",
        ),
        pytest.param(
            ["stats", "run", "--pgnn", "x.pgn"],
            "ecarte stats: error: unrecognized argument --pgnn (did you mean --pgn?); "
            "see ecarte stats --help",
            id="stats-misspelt",
        ),
        pytest.param(
            ["report", "run", "extra"],
            "ecarte report: error: unrecognized argument extra; see ecarte report --help",
            id="report-extra-positional",
        ),
        pytest.param(
            ["merge", "a", "b"],
            "ecarte merge: error: the following arguments are required: --out; "
            "see ecarte merge --help",
            id="merge-missing",
        ),
        pytest.param(
            ["show", "run", "x"],
            "ecarte show: error: argument game: invalid int value: 'x'; see ecarte show --help",
            id="show-bad-type",
        ),
        pytest.param(
            ["play", "random", "--seat", "2"],
            "ecarte play: error: argument --seat: invalid choice: 2 (choose from 0, 1); "
            "see ecarte play --help",
            id="play-bad-choice",
        ),
        pytest.param(
            ["tournamnt"],
            "ecarte: error: unknown command 'tournamnt' (did you mean tournament?); "
            "see ecarte --help",
            id="unknown-command",
        ),
        pytest.param(
            [],
            "ecarte: error: the following arguments are required: command; see ecarte --help",
            id="no-command",
        ),
    ],
)
def test_a_command_line_error_is_one_line_naming_the_subcommand(
    tmp_path: Path, argv: list[str], line: str
) -> None:
    """No usage block first: the subcommand, the problem, a close option, where help is."""
    result = subprocess.run(
        [sys.executable, "-m", "arbiter", *argv],
        env=ENV,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr == line + "\n"


def _help(*argv: str) -> str:
    """``ecarte ARGV --help`` as a user reads it (argparse wraps to the terminal's width)."""
    result = subprocess.run(
        [sys.executable, "-m", "arbiter", *argv, "--help"],
        env={**ENV, "COLUMNS": "200"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0
    return result.stdout


def test_help_gives_the_defaults_and_the_clock_units() -> None:
    check = _help("check")
    assert "most games to play against random (default 30)" in check
    assert "time for each decision in milliseconds (default 2000)" in check
    assert "--clock MS  " in check and "MS milliseconds per bot and game" in check
    assert "clock increment per decision in milliseconds (default 0)" in check
    match = _help("match")
    assert "(default 20)" in match and "milliseconds (default 1000)" in match
    assert "BASE seconds with an increment of INC seconds" in match
    assert "rules preset: default or cavendish (default: default)" in _help("play")


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


def _match_against_random(bot: str, out: Path) -> subprocess.CompletedProcess[str]:
    """``ecarte match`` of the test bot ``tests/bots/BOT.py`` against random, two games."""
    command = f"{sys.executable} {ROOT / 'tests' / 'bots' / bot}.py"
    return subprocess.run(
        [sys.executable, "-m", "arbiter", "match", command, "random", "--games=2", f"--out={out}"],
        env=ENV,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_crash_in_a_match_names_its_stderr_log(tmp_path: Path) -> None:
    """The fault line quotes the panic (not only the note after it) and the fix names
    the file the bot's whole stderr went to."""
    out = tmp_path / "run"
    result = _match_against_random("proto_panic", out)
    assert result.returncode == 3, result.stderr
    log = out / "logs" / "proto_panic.stderr.log"
    assert "panicked at src/main.rs:312:5:" in log.read_text()
    fault = next(ln for ln in result.stderr.splitlines() if "proto_panic faulted" in ln)
    assert "its stderr ends: thread 'main' panicked at src/main.rs:312:5: | index out" in fault
    assert f"fix: the bot exited: its stderr log {log} shows why" in fault
    assert "OUT/logs" not in result.stderr


@pytest.mark.slow
def test_a_bot_that_lingers_after_quit_is_named_at_the_end(tmp_path: Path) -> None:
    """Not exiting on quit costs no game but two seconds a process: the user is told."""
    result = _match_against_random("proto_linger", tmp_path / "run")
    assert result.returncode == 0, result.stderr
    warning = [ln for ln in result.stderr.splitlines() if "of its processes" in ln]
    assert len(warning) == 1, result.stderr
    count = int(warning[0].split(": ")[2].split()[0])
    assert count >= 1
    assert warning[0] == (
        f"warning: engine 'proto_linger': {count} of its processes did not exit within 2 s "
        "of quit and were killed (PROTOCOL §3.9.1); each cost the run that wait"
    )
    assert "random'" not in result.stderr  # the engine that quits is not named


@pytest.mark.slow
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
    assert cli_main(["tournament", str(config), "--out", str(tmp_path / "out"), "--quiet"]) == 3
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


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (b'{"engines": [', "truncated"),
        (b'{"engines": "a,b"}', "$.engines"),
        (b'{"engines": [], "games_per_pairing": -4}', "games_per_pairing"),
        (b'{"engines": [], "seats": 2}', "seats"),
    ],
)
def test_stats_names_a_damaged_resolved_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: bytes, problem: str
) -> None:
    """config.resolved.json is read as the typed config it must be: a bad one is one line."""
    out = tmp_path / "out"
    out.mkdir()
    write_records(out / "games.jsonl", [])
    (out / "config.resolved.json").write_bytes(text)
    assert cli.main(["stats", str(out)]) == 2
    err = capsys.readouterr().err
    assert f"{out / 'config.resolved.json'}: not a resolved config" in err
    assert problem in err.lower()


def test_config_paths_resolve_against_the_config_file_from_another_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A program path, a script argument and out: in a config mean the same wherever
    ecarte is started; --out on the command line is the shell's."""
    conf = tmp_path / "conf"
    for d in ("mine", "shell"):  # each engine in a directory of its own
        (conf / "bots" / d).mkdir(parents=True)
    (conf / "bots" / "mine" / "mybot.py").write_text(
        "import runpy\nrunpy.run_module('engines.random.bot', run_name='__main__')\n"
    )
    script = conf / "bots" / "shell" / "run.sh"
    script.write_text(f"#!/bin/sh\nexec {sys.executable} -m engines.greedy.bot\n")
    script.chmod(0o755)
    (conf / "t.yaml").write_text(
        "engines:\n"
        f"  - {{name: mine, command: [{sys.executable}, bots/mine/mybot.py]}}\n"
        "  - {name: shell, command: ./bots/shell/run.sh}\n"
        "games_per_pairing: 2\nseed: 11\nout: results\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert cli_main(["tournament", "../conf/t.yaml", "--quiet"]) == 0
    records = read_journal(conf / "results" / "games.jsonl").records
    assert [r.termination.reason for r in records] == ["normal", "normal"]
    assert not (elsewhere / "results").exists()
    seen: list[Path] = []

    async def record_out(*args: object, out_dir: Path, **kwargs: object) -> list[object]:
        seen.append(out_dir)
        out_dir.mkdir()
        return []

    monkeypatch.setattr(cli, "run_tournament", record_out)
    assert cli_main(["tournament", "../conf/t.yaml", "--quiet", "--out", "mine"]) == 0
    assert [p.resolve() for p in seen] == [elsewhere / "mine"]


def _match_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one-line error of ``ecarte match ARGV`` (argparse's or ours), exit status 2."""
    try:
        code = cli_main(["match", *argv])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    assert code == 2
    return capsys.readouterr().err.strip().splitlines()[-1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--time-per-move", "-5"],
            "--time-per-move: -5 milliseconds per move: must be at least 1",
        ),
        (
            ["--time-per-move", "0"],
            "--time-per-move: 0 milliseconds per move: must be at least 1",
        ),
        (
            ["--time-per-move", "1.5"],
            "'1.5' is not a whole number of milliseconds per move",
        ),
        (["--games", "0"], "argument --games/--max-games: 0 games: must be at least 1"),
        (["--games", "3"], "--games 3: games are played in duplicate pairs, use an even number"),
        (["--concurrency", "-1"], "argument --concurrency: -1 games at once: must be at least 1"),
        (["--clock", "0+1"], "--clock 0+1: the bank must be more than 0 seconds"),
        (["--clock", "60+-1"], "--clock: clock increment '-1' must be a number of seconds >= 0"),
        (["--clock", "1m"], "--clock: clock base '1m' is not a number of seconds"),
        (
            ["--clock", "40/60"],
            "--clock 40/60: moves per period (cutechess 40/60) do not exist",
        ),
        (
            ["--clock", "60", "--time-per-move", "5"],
            "--clock and --time-per-move exclude each other: choose one",
        ),
        (
            ["--sprt", "elo0=0", "elo1=5", "alpha=0"],
            "--sprt alpha=0: an error rate must lie strictly between 0 and 0.5",
        ),
        (["--sprt", "elo0=0", "elo1=inf"], "bad --sprt value 'elo1=inf': not a finite number"),
        (["--rule", "target=3"], "--rules/--rule: bad rules option: target"),
        (["--rule", "target"], "--rule 'target': expected KEY=VALUE, e.g. --rule target=7"),
        (
            ["--rule", "next_game_dealer=loser"],
            "next_game_dealer=loser: the arena cannot honour next_game_dealer: its",
        ),
        (
            ["--rules", "nope"],
            "unknown rules preset 'nope'; known presets: default, cavendish",
        ),
        (
            ["--engine", "name=x"],
            "--engine needs cmd=COMMAND (a bundled engine name or a command line)",
        ),
        (
            ["--engine", "cmd=expert", "colour=red"],
            "unknown key 'colour'; known keys: cmd, name, dir, option.KEY, env.KEY",
        ),
        (["--engine", "cmd=./nope"], "--engine cmd='./nope': './nope' is neither a bundled engine"),
        (
            ["--engine", "cmd=expert", "name=random"],
            "engine name 'random' is used twice; give one of them name=...",
        ),
        (["--gauntlet"], "--gauntlet plays the first engine against the rest: name three or more"),
        (
            ["--engine", "cmd=expert", "--sprt", "elo1=5"],
            "--sprt tests one engine against one other, not 3 engines",
        ),
    ],
)
def test_match_refuses_bad_numbers_and_terms_with_a_clear_message(
    argv: list[str],
    message: str,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)  # nothing is played, but were it, not in the repository
    assert message in _match_error(["random", "greedy", *argv], capsys)


def test_match_needs_two_engines(capsys: pytest.CaptureFixture[str]) -> None:
    assert _match_error(["random"], capsys) == (
        "ecarte match: error: a match needs at least two engines, got 1: name them as "
        "arguments (bundled names or command lines) or with --engine cmd=..."
    )


def test_match_gauntlet_with_named_engines_options_clock_rules_and_debug_log(
    tmp_path: Path,
) -> None:
    """The cutechess-style command line reaches the bots, the records and OUT/logs/."""
    out = tmp_path / "m"
    argv = ["match", "random", "--engine", "cmd=greedy", "name=mine", "option.depth=3"]
    argv += ["--engine", "cmd=expert", "--gauntlet", "--games", "2", "--clock", "5+0.25"]
    argv += ["--rule", "target=7", "--debug", "--seed", "4", "--quiet", "--out", str(out)]
    assert cli_main(argv) == 0
    records = read_journal(out / "games.jsonl").records
    assert len(records) == 4
    assert all("random" in r.engines for r in records)
    assert {name for r in records for name in r.engines} == {"random", "mine", "expert"}
    assert all(r.rules.target == 7 for r in records)
    resolved = msgspec.json.decode((out / "config.resolved.json").read_bytes())
    assert resolved["format"] == "gauntlet" and resolved["challenger"] == "random"
    assert resolved["time_control"]["clock_ms"] == 5000
    assert resolved["time_control"]["increment_ms"] == 250
    lines = (out / "logs" / "mine.traffic.log").read_text().splitlines()
    stamp = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}\+00:00 \d+ "
    assert re.fullmatch(
        stamp + r'>> \{"type":"hello","protocol":1,"options":\{"depth":3\}\}', lines[0]
    )
    assert any(re.fullmatch(stamp + r'<< \{"type":"hello","name":"greedy".*', ln) for ln in lines)
    assert any(re.fullmatch(stamp + r'<< \{"type":"action".*', ln) for ln in lines)
    assert not (out / "logs" / "random.traffic.log").stat().st_mode & 0o077
    assert traffic_dir.get() is None  # a later run in this process logs nothing


def test_sprt_games_is_the_maximum_and_the_summary_says_no_decision(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s"
    argv = ["match", "random", "greedy", "--sprt", "elo0=0", "elo1=5", "--games", "4"]
    assert cli_main([*argv, "--seed", "2", "--quiet", "--out", str(out)]) == 0
    assert len(read_journal(out / "games.jsonl").records) == 4
    captured = capsys.readouterr()
    assert "at most 4 games (2 pairs)" in captured.err
    (verdict,) = [ln for ln in captured.out.splitlines() if ln.startswith("SPRT verdict")]
    assert re.fullmatch(
        r"SPRT verdict: no decision after 2 pairs: the maximum of 2 pairs \(--games 4\) was "
        r"reached \(LLR -?\d+\.\d\d, bounds \[-2\.94, 2\.94\]; H0: Elo <= 0, H1: Elo >= 5 "
        r"for random against greedy\)",
        verdict,
    )


@pytest.mark.parametrize(
    ("pairs", "verdict"),
    [
        ([1.0, 0.5, 0.5, 0.5] * 500, "SPRT verdict: H1 accepted after"),
        ([0.0, 0.5, 0.5, 0.5] * 500, "SPRT verdict: H0 accepted after"),
        ([0.5, 1.0], "SPRT verdict: no decision after 2 pairs: the run ended early (LLR"),
    ],
    ids=["H1", "H0", "undecided"],
)
def test_sprt_verdict_names_the_hypothesis(pairs: list[float], verdict: str) -> None:
    state = SprtState(0.0, 10.0, engine="a")
    for score in pairs:
        state.add_pair_score(score)
        if state.result().decision is not None:
            break
    text = cli.sprt_verdict(state, "a", "b", max_pairs=100)
    assert text.startswith(verdict)
    assert "bounds [-2.94, 2.94]; H0: Elo <= 0, H1: Elo >= 10 for a against b)" in text


def test_faults_are_told_as_they_happen_and_the_run_ends_with_status_3(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each fault is one line when it happens (game, engine, reason, line, fix); a run with
    faults or a withdrawal ends with a summary and exit status 3, so scripts notice."""
    bot = ROOT / "tests" / "bots" / "proto_garbage.py"
    config = tmp_path / "t.yaml"
    config.write_text(
        f"engines:\n  - name: talker\n    command: [{sys.executable}, {bot}]\n"
        "  - {name: r, builtin: random}\ngames_per_pairing: 6\nseed: 5\nconcurrency: 1\n"
        "faults: {withdraw_after: 2}\n"
    )
    out = tmp_path / "out"
    assert cli_main(["tournament", str(config), "--out", str(out), "--quiet"]) == cli.EXIT_FAULTS
    lines = capsys.readouterr().err.splitlines()
    faults = [ln for ln in lines if " faulted: " in ln]
    assert len(faults) == 2
    assert faults[0].startswith("game 0: talker faulted: invalid_message: malformed JSON")
    assert "its line: 'I play the king of spades!'" in faults[0]
    assert faults[0].endswith(
        "fix: write logs and debug output to stderr: stdout carries protocol lines only"
    )
    assert "talker withdrawn after 2 faults in a row" in lines
    assert lines[-1] == (
        "the run had faults: 6 of 6 games were lost by a fault: talker (withdrawn 4, "
        "invalid_message 2). Withdrawn: talker (their remaining games were forfeited). "
        f"Exit status 3. To see a game: ecarte show {out} 0"
    )


def test_a_run_without_faults_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "t.yaml"
    config.write_text(
        "engines:\n  - {name: a, builtin: random}\n  - {name: b, builtin: greedy}\n"
        "games_per_pairing: 2\nseed: 5\n"
    )
    assert cli_main(["tournament", str(config), "--out", str(tmp_path / "o"), "--quiet"]) == 0
    assert "the run had faults" not in capsys.readouterr().err


def test_stats_on_a_config_file_says_it_is_no_journal(
    capsys: pytest.CaptureFixture[str],
) -> None:
    config = ROOT / "configs" / "bundled.yaml"
    assert cli_main(["stats", str(config)]) == 2
    assert capsys.readouterr().err == (
        f"ecarte stats: error: {config} is not a game journal (one JSON game record per "
        "line): give a run's output directory or its games.jsonl\n"
    )


def test_output_into_a_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    """``ecarte stats OUT | head``: when the reader is gone, no traceback, status 141."""
    out = tmp_path / "out"
    assert (
        cli_main(
            [
                "match",
                "random",
                "greedy",
                "--games",
                "2",
                "--seed",
                "3",
                "--out",
                str(out),
                "--quiet",
            ]
        )
        == 0
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "arbiter", "stats", str(out)],
        env=ENV,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # long before the interpreter has started and printed anything
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141, err
    assert "Traceback" not in err and "BrokenPipeError" not in err


def test_the_report_after_a_run_never_costs_its_results_or_status(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the size limit the page is written only on request; a page that cannot be
    written is a warning, and the run keeps its exit status."""
    argv = ["match", "random", "greedy", "--games", "2", "--seed", "3", "--quiet"]
    monkeypatch.setattr(cli, "REPORT_AFTER_RUN_MAX_GAMES", 1)
    big = tmp_path / "big"
    assert cli_main([*argv, "--out", str(big)]) == 0
    assert "report: not written for 2 games" in capsys.readouterr().out
    assert not (big / "report.html").exists()
    monkeypatch.setattr(cli, "REPORT_AFTER_RUN_MAX_GAMES", 3000)

    def no_room(out: Path) -> Path:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cli, "_write_html_report", no_room)
    assert cli_main([*argv, "--out", str(tmp_path / "full")]) == 0
    captured = capsys.readouterr()
    assert "standings" in captured.out
    assert "warning: report.html was not written: [Errno 28] No space left on device" in (
        captured.err
    )


def test_a_bot_that_uses_up_its_users_epoll_watches_ends_the_run_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Epoll watches are counted per user for the whole machine: a bot run as the arena's
    own user can take them all, and trio can then watch no pipe.  The run ends with one
    line saying so (the games recorded stay), not a traceback; other errors still raise."""
    # Raised where trio's I/O manager raises it (a frame of a file named _io_*.py).
    where = compile(
        "raise OSError(errno.ENOSPC, 'No space left on device')", "_io_epoll.py", "exec"
    )

    def refused(args: object) -> int:
        try:
            exec(where, {"errno": errno})
        except OSError as exc:
            raise ExceptionGroup("games", [exc, AssertionError()]) from None
        return 0

    monkeypatch.setattr(cli, "cmd_tournament", refused)
    assert cli.main(["tournament"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        "ecarte tournament: error: the kernel refused the arbiter a resource it needs to "
        "watch a bot's pipes (No space left on device): "
    )
    assert "Traceback" not in err and "--resume plays the rest" in err

    def disk_full(args: object) -> int:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(cli, "cmd_tournament", disk_full)
    with pytest.raises(OSError):
        cli.main(["tournament"])
