"""Bots locked in: hostile bot processes against the sandbox and the arbiter's guard.

Each attack is a real bot in ``tests/bots/hostile_*.py`` run by the real ``ecarte``
command in a child process (signals, subreaping and ``kill -9`` concern that process).
"""

from __future__ import annotations

import json
import os
import pwd
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arbiter import sandbox
from arbiter.bot import BotCommand, open_bot
from arbiter.faults import ResourceLimit
from arbiter.sandbox import SandboxPlan, SandboxUnavailable, minimal_env, sandbox_enabled

ROOT = Path(__file__).resolve().parents[1]
BOTS = ROOT / "tests" / "bots"

# CI installs bubblewrap and sets ECARTE_REQUIRE_SANDBOX: there these tests never skip.
if sandbox.sandbox_unavailable() is not None and os.environ.get("ECARTE_REQUIRE_SANDBOX"):
    raise RuntimeError(f"the sandbox is required here: {sandbox.sandbox_unavailable()}")
needs_sandbox = pytest.mark.skipif(
    sandbox.sandbox_unavailable() is not None,
    reason=f"no sandbox here: {sandbox.sandbox_unavailable()}",
)


def _config(
    tmp_path: Path, engine: str, *, mode: str, per_move_ms: int = 2000, games: int = 2
) -> Path:
    path = tmp_path / "conf" / "t.yaml"
    path.parent.mkdir(exist_ok=True)
    path.write_text(
        "engines:\n"
        f"  - {engine}\n"
        "  - name: random\n"
        f"games_per_pairing: {games}\nseed: 11\nconcurrency: 1\nsandbox: {mode}\n"
        f"time_control: {{per_move_ms: {per_move_ms}}}\n"
    )
    return path


def _ecarte(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "arbiter", *map(str, args)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def _with_marker(marker: str) -> list[int]:
    """Live (non-zombie) processes whose command line contains ``marker``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def _wait_gone(marker: str, seconds: float = 3.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := _with_marker(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique word in the command lines of a test's bot processes; kills leftovers."""
    word = f"ecarte-test-{os.urandom(6).hex()}"
    yield word
    for pid in _with_marker(word):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


# ----------------------------------------------------------------------------- the plan


def test_plan_hides_output_and_config_inside_the_engines_own_directory(tmp_path: Path) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("")
    (tmp_path / "out").mkdir()
    config = tmp_path / "t.yaml"
    config.write_text("")
    plan = SandboxPlan.for_engine(
        [sys.executable, str(bot)],
        None,
        own_dir_configured=False,
        hidden=[str(tmp_path / "out"), str(config)],
    )
    real = os.path.realpath(tmp_path)
    assert real in plan.read_paths
    assert set(plan.hidden) == {os.path.join(real, "out"), os.path.join(real, "t.yaml")}
    assert plan.write_paths == ()
    assert plan.network is False


def _old_run(where: Path, marker: str = "config.resolved.json") -> Path:
    where.mkdir(parents=True)
    (where / marker).write_text('{"seed": "0123456789abcdef0123456789abcdef"}')
    return where


def test_find_runs_finds_run_outputs_without_entering_them_or_following_links(
    tmp_path: Path,
) -> None:
    a = _old_run(tmp_path / "tournaments" / "a")
    b = _old_run(tmp_path / "deep" / "er" / "b", "games.jsonl")
    _old_run(a / "inner")  # inside a run: hidden with it, not searched
    (tmp_path / "elsewhere").mkdir()
    _old_run(tmp_path / "elsewhere" / "c")
    (tmp_path / "bot").mkdir()
    (tmp_path / "bot" / "link").symlink_to(tmp_path / "elsewhere")
    found, unfinished = sandbox.find_runs([str(tmp_path / "bot"), str(tmp_path / "deep")])
    assert (found, unfinished) == ([str(b)], [])
    found, _ = sandbox.find_runs([str(tmp_path)])
    assert sorted(found) == sorted([str(a), str(b), str(tmp_path / "elsewhere" / "c")])
    # A search that runs out of entries names the roots it did not finish.
    found, unfinished = sandbox.find_runs([str(tmp_path)], limit=3)
    assert unfinished == [str(tmp_path)]


def test_plan_hides_earlier_runs_in_the_engines_directories(tmp_path: Path) -> None:
    """Another run with the same seed deals the same decks: its files must not be seen."""
    bot = tmp_path / "bot.py"
    bot.write_text("")
    old = _old_run(tmp_path / "tournaments" / "monday")
    granted = tmp_path.parent / f"{tmp_path.name}-data"
    shard = _old_run(granted / "results" / "shard-1", "games.jsonl")
    plan = SandboxPlan.for_engine(
        [sys.executable, str(bot)], None, own_dir_configured=False, allow_paths=[str(granted)]
    )
    assert set(plan.hidden) == {os.path.realpath(old), os.path.realpath(shard)}
    assert plan.unsearched == ()


def test_a_version_managers_root_is_not_searched_for_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``python3`` through a pyenv shim grants pyenv's root: interpreters, 100,000+ files."""
    shims = tmp_path / ".pyenv" / "shims"
    shims.mkdir(parents=True)
    (shims / "python3").write_text("#!/bin/sh\n")
    (shims / "python3").chmod(0o755)
    bot = tmp_path / "bots" / "bot.py"
    bot.parent.mkdir()
    bot.write_text("")
    monkeypatch.setenv("PATH", str(shims))
    searched: list[list[str]] = []
    real_find_runs = sandbox.find_runs

    def spy(roots: list[str], **kwargs: int) -> tuple[list[str], list[str]]:
        searched.append(list(roots))
        return real_find_runs(roots, **kwargs)

    monkeypatch.setattr(sandbox, "find_runs", spy)
    plan = SandboxPlan.for_engine(["python3", str(bot)], None, own_dir_configured=False)
    root = os.path.realpath(tmp_path / ".pyenv")
    assert root in plan.read_paths
    assert searched == [[os.path.realpath(bot.parent)]]


def test_a_shims_directory_of_the_bots_own_does_not_stop_the_search(tmp_path: Path) -> None:
    """Only a version manager's root reached through ``PATH`` is spared the search."""
    bot = tmp_path / "bot.py"
    bot.write_text("")
    (tmp_path / "shims").mkdir()
    old = _old_run(tmp_path / "tournaments" / "r1")
    plan = SandboxPlan.for_engine([sys.executable, str(bot)], None, own_dir_configured=False)
    assert plan.hidden == (os.path.realpath(old),)


@pytest.mark.parametrize("case", ["grant inside the output", "bot in a run's logs"])
def test_a_grant_or_bot_inside_a_run_output_is_refused(tmp_path: Path, case: str) -> None:
    """A path the engine may read must not lie in a run's output: masking the run would
    mask the grant, and leaving it would show the seed or the logs."""
    out = tmp_path / "out"
    (out / "logs").mkdir(parents=True)
    bot = tmp_path / "bots" / "bot.py"
    bot.parent.mkdir()
    bot.write_text("")
    if case == "grant inside the output":  # of the run being started: nothing in it yet
        argv, allow, secret = [sys.executable, str(bot)], [str(out / "logs")], [str(out)]
        why = "keep run outputs out of engines' directories and grants"
    else:
        (out / "games.jsonl").write_text("")
        (out / "logs" / "look.py").write_text("")
        argv, allow, secret = [sys.executable, str(out / "logs" / "look.py")], [], []
        why = r"lies in .*out, which holds a run's output \(games.jsonl: every deal\)"
    with pytest.raises(sandbox.SandboxConflict, match=why):
        SandboxPlan.for_engine(
            argv, None, own_dir_configured=False, allow_paths=allow, secret=secret
        )


@pytest.mark.parametrize("case", ["out is the bot's directory", "bot inside an old run"])
def test_a_run_output_that_cannot_be_hidden_is_refused(tmp_path: Path, case: str) -> None:
    bot = tmp_path / "bot.py"
    bot.write_text("")
    if case == "bot inside an old run":
        (tmp_path / "games.jsonl").write_text("")
    secret = [str(tmp_path)] if case == "out is the bot's directory" else []
    why = "keep run outputs out of engines" if secret else r"may read, holds a run's output"
    with pytest.raises(sandbox.SandboxConflict, match=why):
        SandboxPlan.for_engine(
            [sys.executable, str(bot)], None, own_dir_configured=False, secret=secret
        )


@pytest.mark.slow
@needs_sandbox
def test_a_sandboxed_bot_cannot_read_an_earlier_run_in_its_own_directory(
    tmp_path: Path,
) -> None:
    """``ecarte match`` run from a bot's directory leaves ``tournaments/`` in it."""
    home = tmp_path / "mybot"
    home.mkdir()
    script = home / "snoop.py"
    script.write_text((BOTS / "hostile_snoop.py").read_text())
    (home / "notes.txt").write_text("the bot's own file")
    old = _old_run(home / "tournaments" / "monday")
    (old / "games.jsonl").write_text("{}\n")
    paths = ":".join(
        str(p) for p in (home / "notes.txt", old, old / "config.resolved.json", old / "games.jsonl")
    )
    engine = (
        f"{{name: snoop, command: [{sys.executable}, {script}], env: {{SNOOP_PATHS: '{paths}'}}}}"
    )
    config = _config(tmp_path, engine, mode="on")
    out = tmp_path / "out"
    assert _snooped(config, out)["readable"] == [str(home / "notes.txt")]
    # An output directory that is the bot's own cannot be hidden: the run is refused.
    proc = _ecarte("tournament", config, "--out", home, "--quiet")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2
    assert (
        f"ecarte tournament: error: engine 'snoop': {os.path.realpath(home)} holds a run's" in err
    )
    assert not (home / "games.jsonl").exists()


def test_plan_never_hides_the_engine_itself(tmp_path: Path) -> None:
    mine = tmp_path / "engines" / "mine"
    mine.mkdir(parents=True)
    plan = SandboxPlan.for_engine(
        ["./bot"], str(mine), own_dir_configured=True, hidden=[str(tmp_path / "engines")]
    )
    assert os.path.realpath(mine) in plan.read_paths
    assert plan.hidden == ()


def test_minimal_env_passes_only_the_basics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "hunter2")
    monkeypatch.setenv("LANG", "C.UTF-8")
    env = minimal_env({"MYBOT": "1"}, home="/tmp")
    assert "AWS_SECRET_ACCESS_KEY" not in env
    assert env["LANG"] == "C.UTF-8" and env["HOME"] == "/tmp" and env["MYBOT"] == "1"
    assert set(env) <= {*sandbox.MINIMAL_ENV_KEYS, "HOME", "MYBOT"}


def test_sandbox_modes_where_it_is_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "sandbox_unavailable", lambda: "bwrap is not installed")
    assert sandbox_enabled("off") == (False, None)
    enabled, warning = sandbox_enabled("auto")
    assert not enabled
    assert warning is not None and "not sandboxed (bwrap is not installed)" in warning
    assert "output directory" in warning
    with pytest.raises(SandboxUnavailable, match="sandbox: on, but bwrap is not installed"):
        sandbox_enabled("on")


# ----------------------------------------------------------------------------- attacks


def _records(config: Path, out: Path, *, status: int) -> list[dict[str, Any]]:
    """Run ``config`` into ``out`` (exit ``status`` expected); its game records."""
    proc = _ecarte("tournament", config, "--out", out, "--quiet")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == status, err
    return [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]


@needs_sandbox
def test_a_sandboxed_bot_cannot_write_into_its_opponents_pipe(tmp_path: Path) -> None:
    engine = f"{{name: framer, command: [{sys.executable}, {BOTS / 'hostile_framer.py'}]}}"
    out = tmp_path / "out"
    records = _records(_config(tmp_path, engine, mode="on", games=4), out, status=0)
    assert len(records) == 4
    for r in records:
        offender = r["termination"]["offender"]
        assert offender is None or r["engines"][offender] != "random", r["termination"]
    # Each log line is "[game G pid P] text": keep the text.
    text = (out / "logs" / "framer.stderr.log").read_text().splitlines()
    log = " ".join(line.split("] ", 1)[1] for line in text).split()
    assert log.count("framed") > 4  # it tried before every decision
    assert set(log[1::2]) == {"0"}, "the framer reached another process's pipe"


def _snoop(tmp_path: Path, mode: str) -> dict[str, object]:
    other = tmp_path / "other-engine"
    other.mkdir()
    (other / "weights.bin").write_bytes(b"secret")
    out = tmp_path / f"out-{mode}"
    config = tmp_path / "conf" / "t.yaml"
    paths = ":".join(
        str(p)
        for p in (out, out / "config.resolved.json", out / "logs", config, other / "weights.bin")
    )
    engine = (
        f"{{name: snoop, command: [{sys.executable}, {BOTS / 'hostile_snoop.py'}], "
        f"env: {{SNOOP_PATHS: '{paths}'}}}}\n"
        f"  - {{name: other, command: [{sys.executable}, -m, engines.random.bot], "
        f"cwd: {other}}}"
    )
    _config(tmp_path, engine, mode=mode)
    return _snooped(config, out, env={**os.environ, "SECRET": "1"})


def _snooped(config: Path, out: Path, env: dict[str, str] | None = None) -> dict[str, object]:
    """Run ``config`` into ``out``; what the snoop bot reported it could see."""
    proc = _ecarte("tournament", config, "--out", out, "--quiet", env=env)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    line = next(
        line
        for line in (out / "logs" / "snoop.stderr.log").read_text().splitlines()
        if "] SNOOP " in line
    )
    found: dict[str, object] = json.loads(line.split("] SNOOP ", 1)[1])
    return found


@pytest.mark.slow
@needs_sandbox
def test_a_sandboxed_bot_sees_no_output_config_other_engine_or_process(tmp_path: Path) -> None:
    found = _snoop(tmp_path, "on")
    assert found["readable"] == []
    pids = found["pids"]
    assert isinstance(pids, list) and set(pids) <= {1, found["pid"]}
    assert found["parent_cmdline"] is False
    assert isinstance(found["env"], list) and "SECRET" not in found["env"]
    # bwrap sets PWD to the start directory.
    assert set(found["env"]) <= {*sandbox.MINIMAL_ENV_KEYS, "HOME", "PWD", "SNOOP_PATHS"}


@pytest.mark.slow
def test_without_the_sandbox_the_same_bot_sees_everything(tmp_path: Path) -> None:
    """The control experiment: what the sandbox takes away (the environment stays minimal)."""
    found = _snoop(tmp_path, "off")
    readable = found["readable"]
    assert isinstance(readable, list) and len(readable) == 5
    assert isinstance(found["pids"], list) and len(found["pids"]) > 2
    assert isinstance(found["env"], list) and "SECRET" not in found["env"]


ESCAPE_MODES = [
    pytest.param("on", marks=needs_sandbox, id="sandbox"),
    pytest.param("off", marks=pytest.mark.slow, id="bare"),
]


def _escape_engine(marker: str, *, stuck: bool) -> str:
    mode = "stuck" if stuck else "play"
    return (
        f"{{name: escape, command: [{sys.executable}, {BOTS / 'hostile_escape.py'}, {mode}, "
        f"{marker}]}}"
    )


@pytest.mark.parametrize("mode", ESCAPE_MODES)
def test_no_process_outlives_a_run(tmp_path: Path, marker: str, mode: str) -> None:
    config = _config(tmp_path, _escape_engine(marker, stuck=False), mode=mode)
    proc = _ecarte("tournament", config, "--out", tmp_path / "out", "--quiet")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert _wait_gone(marker) == []


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("mode", ESCAPE_MODES)
def test_sigterm_and_sighup_stop_bots_keep_results_and_print_the_resume_hint(
    tmp_path: Path, marker: str, mode: str, signum: int
) -> None:
    config = _config(tmp_path, _escape_engine(marker, stuck=True), mode=mode, per_move_ms=60_000)
    out = tmp_path / "out"
    proc = _ecarte("tournament", config, "--out", out)
    deadline = time.monotonic() + 30

    def playing() -> bool:
        # config.resolved.json is written once the preflight's processes are gone; then
        # the game's bot and an escaped grandchild carry the marker.
        return (out / "config.resolved.json").exists() and len(_with_marker(marker)) >= 2

    while not playing() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert playing()
    time.sleep(0.3)  # into the game
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert f"stopped by {signal.Signals(signum).name}" in err
    assert "resume with: ecarte tournament" in err
    assert (out / "config.resolved.json").exists()
    assert _wait_gone(marker) == []


@pytest.mark.slow
@needs_sandbox
def test_kill_9_of_the_arbiter_takes_every_sandboxed_process_with_it(
    tmp_path: Path, marker: str
) -> None:
    config = _config(tmp_path, _escape_engine(marker, stuck=True), mode="on", per_move_ms=60_000)
    out = tmp_path / "out"
    proc = _ecarte("tournament", config, "--out", out)
    deadline = time.monotonic() + 30

    def playing() -> bool:  # past the preflight, in the game (see the test above)
        return (out / "config.resolved.json").exists() and len(_with_marker(marker)) >= 2

    while not playing() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert playing()
    proc.kill()
    proc.communicate(timeout=10)
    assert _wait_gone(marker) == []


@pytest.mark.slow
def test_kill_9_of_the_arbiter_takes_an_unsandboxed_bot_with_it(
    tmp_path: Path, marker: str
) -> None:
    """Without the sandbox the bot dies (PR_SET_PDEATHSIG); what it setsid()s away may not."""
    config = _config(tmp_path, _escape_engine(marker, stuck=True), mode="off", per_move_ms=60_000)
    proc = _ecarte("tournament", config, "--out", tmp_path / "out")
    bot = "hostile_escape.py"
    deadline = time.monotonic() + 30

    def bots() -> list[int]:
        return [
            p
            for p in _with_marker(marker)
            if bot.encode() in Path(f"/proc/{p}/cmdline").read_bytes()
        ]

    while not bots() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bots()
    time.sleep(0.3)
    proc.kill()
    proc.communicate(timeout=10)
    deadline = time.monotonic() + 3
    while bots() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert bots() == []


@needs_sandbox
def test_memory_limit_caps_the_sandboxes_in_memory_files_and_dev_is_read_only(
    tmp_path: Path,
) -> None:
    """Files in /tmp or /dev/shm are memory no process limit counts: capped at memory_mb."""
    code = (
        "import errno, json\n"
        "out = {}\n"
        "for path in ('/tmp/fill', '/dev/shm/fill', '/dev/fill', '/fill', HIDDEN + '/fill'):\n"
        "    written = 0\n"
        "    try:\n"
        "        with open(path, 'wb') as f:\n"
        "            for _ in range(32):\n"
        "                f.write(bytes(1 << 20)); f.flush(); written += 1\n"
        "        out[path] = ['ok', written]\n"
        "    except OSError as exc:\n"
        "        out[path] = [errno.errorcode[exc.errno], written]\n"
        "print(json.dumps(out))\n"
    )
    # A masked directory (here: another engine's) must not be a writable tmpfs either.
    mine, other = tmp_path / "mine", tmp_path / "mine" / "other"
    other.mkdir(parents=True)
    code = f"HIDDEN = {str(other)!r}\n" + code
    plan = SandboxPlan.for_engine(
        [sys.executable], str(mine), own_dir_configured=True, hidden=[str(other)]
    )
    argv = sandbox.wrap_command([sys.executable, "-c", code], None, plan, memory_mb=8)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    found = json.loads(done.stdout)
    assert found["/tmp/fill"][0] == "ENOSPC" and found["/tmp/fill"][1] <= 8
    assert found["/dev/shm/fill"][0] == "ENOSPC" and found["/dev/shm/fill"][1] <= 8
    assert found["/dev/fill"] == ["EROFS", 0]
    assert found["/fill"] == ["EROFS", 0]  # bwrap's root is memory too
    assert found[str(other) + "/fill"] == ["EROFS", 0]
    # Without a memory limit the same bot writes its 32 MiB to /tmp.
    argv = sandbox.wrap_command([sys.executable, "-c", code], None, plan)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    assert json.loads(done.stdout)["/tmp/fill"] == ["ok", 32]


def test_a_directory_too_large_to_search_is_named_in_a_warning(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"d{i}").mkdir()
    bot = tmp_path / "bot.py"
    bot.write_text("")
    argv = [sys.executable, str(bot)]
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False)
    assert plan.unsearched == ()
    limited = sandbox.find_runs([str(tmp_path)], limit=2)
    assert limited == ([], [str(tmp_path)])
    big = SandboxPlan(read_paths=plan.read_paths, unsearched=(str(tmp_path),))
    warnings = sandbox.plan_warnings({"big": big, "bare": None})
    assert warnings == [
        f"warning: engine 'big': {tmp_path} holds over 100,000 entries, too many to search "
        "for earlier runs' outputs, which a bot could read if there are any in it (keep run "
        "outputs out of engines' directories)"
    ]


def test_the_docs_list_every_variable_of_the_minimal_environment() -> None:
    """README and PROTOCOL §2.8 name each variable a bot gets, as the code passes them."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    protocol = (ROOT / "PROTOCOL.md").read_text(encoding="utf-8")
    section = protocol[protocol.index("**§2.8**") : protocol.index("## §3")]
    for key in (*sandbox.MINIMAL_ENV_KEYS, "HOME", "PWD"):
        assert f"`{key}`" in section, key
        assert readme.count(f"`{key}`") >= 2, key  # the env key's row and the safeguards
    assert "LC_*" not in section + readme  # only LC_ALL and LC_CTYPE are passed on


@pytest.mark.slow
@needs_sandbox
def test_a_sandboxed_bot_that_closes_its_stdout_is_disconnected_not_late(tmp_path: Path) -> None:
    """bubblewrap holds the pipe open, so no end of file comes: the arbiter looks."""
    engine = f"{{name: mute, command: [{sys.executable}, {BOTS / 'proto_close_stdout.py'}]}}"
    config = _config(tmp_path, engine, mode="on", per_move_ms=300)
    records = _records(config, tmp_path / "out", status=3)  # 3: the run had faults
    assert [r["termination"]["reason"] for r in records] == ["disconnected"] * 2
    for r in records:
        assert r["termination"]["detail"].startswith("closed its stdout while still running")


@needs_sandbox
@pytest.mark.parametrize("case", ["shard", "whole", "write grant"])
def test_an_output_a_bot_could_prepare_or_a_shard_could_read_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """Shards share a seed and run side by side: a shard's output where a bot may read is
    refused; so is any output where a bot may write. A whole run's output in the bot's
    directory is fine: masked from its bots, and found and masked by later runs."""
    from arbiter.cli import main as cli_main

    home = tmp_path / "mybot"
    (home / "data").mkdir(parents=True)
    if os.geteuid() == 0:
        os.chown(home / "data", 65534, 65534)  # writable by the bots' user
    grant = ", write_paths: [data]" if case == "write grant" else ""
    config = home / "t.yaml"
    config.write_text(
        "engines:\n"
        f"  - {{name: mine, command: [{sys.executable}, -m, engines.random.bot], cwd: .{grant}}}\n"
        "  - {name: random, builtin: random}\n"
        "games_per_pairing: 4\nseed: 0123456789abcdef0123456789abcdef\nsandbox: on\n"
    )
    out = home / ("data" if case == "write grant" else "runs") / "s1"
    args = ["tournament", str(config), "--out", str(out), "--quiet"]
    code = cli_main([*args, "--shard", "1/2"] if case == "shard" else args)
    err = capsys.readouterr().err
    real = os.path.realpath(home)
    if case == "whole":
        assert code == 0, err
        assert "warning" not in err
        assert len((out / "games.jsonl").read_text().splitlines()) == 4
        return
    assert code == 2
    assert not (out / "games.jsonl").exists()
    if case == "shard":
        assert (
            f"the output directory {out} of this shard lies inside {real}, which engine "
            "'mine' may read: the bots of the other shards"
        ) in err
    else:
        assert (
            f"error: engine 'mine': {real}/data, which the engine may write (write_paths), "
            f"holds {out}, this run's output, which the bot could have prepared"
        ) in err


def test_an_output_under_a_directory_every_bot_reads_is_masked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An --out in the arena's own tree, the virtual environment or /opt is masked too."""
    public = tmp_path / "venv"
    out = public / "runs" / "r1"
    out.mkdir(parents=True)
    monkeypatch.setattr(sandbox, "arena_paths", lambda: (str(public),))
    bot = tmp_path / "bots" / "bot.py"
    bot.parent.mkdir()
    bot.write_text("")
    plan = SandboxPlan.for_engine(
        [sys.executable, str(bot)], None, own_dir_configured=False, secret=[str(out)]
    )
    assert plan.hidden == (str(out),)
    assert plan.dir_holding(str(out)) == str(public)


def test_no_file_of_a_run_is_written_through_a_symbolic_link(tmp_path: Path) -> None:
    """A link planted where the run writes its seed must not carry it elsewhere."""
    from arbiter.journal import JournalError, write_private

    target = tmp_path / "where-the-bot-reads.json"
    link = tmp_path / "config.resolved.json"
    link.symlink_to(target)
    with pytest.raises(JournalError, match="is a symbolic link"):
        write_private(link, b'{"seed": "secret"}')
    assert not target.exists()


@needs_sandbox
def test_check_refuses_a_bot_kept_inside_a_run_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from arbiter.cli import main as cli_main

    old = _old_run(tmp_path / "r1")
    (old / "logs").mkdir()
    bot = old / "logs" / "look.py"
    bot.write_text("")
    code = cli_main(["check", f"{sys.executable} {bot}", "--games", "1"])
    err = capsys.readouterr().err.splitlines()
    assert code == 2
    assert err == [
        f"ecarte check: error: {os.path.realpath(bot.parent)}, which the engine may read, "
        f"lies in {os.path.realpath(old)}, which holds a run's output (config.resolved.json: "
        "the seed): move the engine or its grants out of it, or remove that file if it is no "
        "run's"
    ]


@needs_sandbox
def test_a_sandboxed_bot_cannot_change_kernel_settings(tmp_path: Path) -> None:
    """Run as root, a bot keeps uid 0 without capabilities; files in /proc/sys check only
    the uid: writable, they would let it run a program outside (kernel.core_pattern)."""
    code = (
        "import errno, json, os\n"
        "out = {}\n"
        "for path in ('/proc/sys/kernel/core_pattern', '/proc/sys/vm/overcommit_memory'):\n"
        "    try:\n"
        "        os.close(os.open(path, os.O_WRONLY))\n"  # opening changes nothing
        "        out[path] = 'writable'\n"
        "    except OSError as exc:\n"
        "        out[path] = errno.errorcode[exc.errno]\n"
        "print(json.dumps(out))\n"
    )
    plan = SandboxPlan.for_engine([sys.executable], None, own_dir_configured=False)
    argv = sandbox.wrap_command([sys.executable, "-c", code], None, plan)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    found = json.loads(done.stdout)
    assert set(found.values()) <= {"EROFS", "EACCES", "ENOENT"}, found


# ----------------------------------------------------------------------------- the bot's user

ROOT_ARENA = os.geteuid() == 0
NOBODY = 65534


def _whoami_config(tmp_path: Path, *, give_data: bool = True) -> Path:
    """A config whose engine ``mine`` is :file:`tests/bots/proto_whoami.py` kept in
    ``tmp_path/mine`` with a root-only ``secret`` and a ``data`` write grant (given to
    nobody when the arena is root, with ``give_data``)."""
    home = tmp_path / "mine"
    (home / "data").mkdir(parents=True)
    script = home / "whoami.py"
    script.write_text((BOTS / "proto_whoami.py").read_text())
    secret = home / "secret"
    secret.write_text("the arena's own\n")
    secret.chmod(0o600)
    if ROOT_ARENA and give_data:
        os.chown(home / "data", NOBODY, NOBODY)  # as the README says to do for a grant
    config = tmp_path / "t.yaml"
    command = f"[{sys.executable}, whoami.py, {home / 'data'}, {secret}]"
    config.write_text(
        "engines:\n"
        f"  - {{name: mine, command: {command}, cwd: mine, write_paths: [mine/data]}}\n"
        "  - {name: random, builtin: random}\n"
        "games_per_pairing: 2\nconcurrency: 1\nsandbox: on\n"
    )
    return config


def _reports(data: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(data.glob("whoami-*.json"))]


@needs_sandbox
def test_a_root_arena_runs_sandboxed_bots_as_nobody(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run as root, the arena runs bots as nobody: with no group but its own and no
    capability, it cannot read root's files in its own directory, and what it leaves in
    its write grant (a set-user-ID program included) belongs to nobody, not to root."""
    from arbiter.cli import main as cli_main

    config = _whoami_config(tmp_path)
    code = cli_main(["tournament", str(config), "--out", str(tmp_path / "out"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    # The only warning: what a write grant lets a bot keep (isolate_deals cannot clear it).
    warnings = [line for line in err.splitlines() if "warning" in line]
    assert len(warnings) == 1 and "(write_paths): it can keep notes" in warnings[0]
    reports = _reports(tmp_path / "mine" / "data")
    assert reports
    planted = list((tmp_path / "mine" / "data").glob("planted-*"))
    assert planted
    if not ROOT_ARENA:  # an arena not run as root runs bots as its own user
        assert {r["uid"] for r in reports} == {os.getuid()}
        return
    for report in reports:
        assert report == {
            "uid": NOBODY,
            "gid": NOBODY,
            "groups": [],
            "cap_eff": 0,
            "secret": "EACCES",
        }
    for path in planted:
        assert path.stat().st_uid == NOBODY  # a set-user-ID nobody program: no gain


@needs_sandbox
def test_a_bot_nobody_cannot_reach_is_refused_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Run as root, an engine whose directory nobody cannot read, or whose write grant it
    cannot write, is refused: falling back to root would let the bot's author choose
    root by packaging the bot so."""
    from arbiter.cli import main as cli_main

    config = _whoami_config(tmp_path, give_data=False)
    home = tmp_path / "mine"
    out = tmp_path / "out"
    code = cli_main(["tournament", str(config), "--out", str(out), "--quiet"])
    err = capsys.readouterr().err
    if not ROOT_ARENA:
        assert code == 0, err
        code = cli_main(["tournament", str(config), "--out", str(out), "--bot-user", "nobody"])
        assert code == 2
        assert "error: bot_user: nobody (uid 65534) needs the arena to run as root" in (
            capsys.readouterr().err
        )
        return
    assert code == 2
    assert (
        f"error: engine 'mine' runs as nobody (uid 65534) (the arena runs as root): "
        f"{home}/data (write_paths) is not writable by nobody (uid 65534) (drwxr-xr-x, owned "
        f"by root): give it to that user (chown 65534 {home}/data); or set bot_user: root to "
        "run bots as root"
    ) in err
    assert not out.exists() and not list((home / "data").iterdir())  # nothing ran
    os.chown(home / "data", NOBODY, NOBODY)
    home.chmod(0o700)
    code = cli_main(["tournament", str(config), "--out", str(out), "--bot-user", "nobody"])
    assert code == 2
    assert (
        f"error: engine 'mine' runs as nobody (uid 65534) (bot_user): {home} is not readable "
        f"by nobody (uid 65534) (drwx------, owned by root): make it readable (chmod o+rx "
        f"{home})"
    ) in capsys.readouterr().err
    # bot_user: root is the way back to the old behaviour (the grant root's again).
    os.chown(home / "data", 0, 0)
    code = cli_main(["tournament", str(config), "--out", str(out), "--bot-user", "root"])
    assert code == 0
    assert {r["uid"] for r in _reports(home / "data")} == {0}
    os.chown(home / "data", NOBODY, NOBODY)
    # A directory nobody may read holding a file it may not: the bot fails to start,
    # and the error says which user it ran as and what to do.
    home.chmod(0o755)
    (home / "whoami.py").chmod(0o600)
    code = cli_main(["tournament", str(config), "--out", str(tmp_path / "out3"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2
    assert "Permission denied" in err
    assert (
        "; the bot runs as nobody (uid 65534) (bot_user), which must be able to read its "
        "files: make them readable by others (chmod -R o+rX on its directory), or set "
        "bot_user: root"
    ) in err


def test_a_write_grant_the_user_cannot_write_is_named(tmp_path: Path) -> None:
    """The permission check reads the bits a user gets as owner, group or other."""
    user = sandbox.BotUser("someone", 4242, 4343)
    mine, data = tmp_path / "mine", tmp_path / "data"
    mine.mkdir()
    data.mkdir()
    plan = SandboxPlan(read_paths=(str(mine),), write_paths=(str(data),))
    mine.chmod(0o750)
    data.chmod(0o755)
    assert sandbox.unreachable_for(user, plan) == (
        f"{mine} is not readable by someone (uid 4242) (drwxr-x---, owned by "
        f"{sandbox._owner(mine.stat())}): make it readable (chmod o+rx {mine})"
    )
    mine.chmod(0o705)
    assert "(write_paths) is not writable by someone (uid 4242)" in str(
        sandbox.unreachable_for(user, plan)
    )
    assert f"chown 4242 {data}" in str(sandbox.unreachable_for(user, plan))
    data.chmod(0o777)
    assert sandbox.unreachable_for(user, plan) is None
    if ROOT_ARENA:  # the owner's and the group's bits, which only root can hand out
        os.chown(mine, 0, 4343)
        mine.chmod(0o050)
        data.chmod(0o700)
        os.chown(data, 4242, 0)
        assert sandbox.unreachable_for(user, plan) is None
        mine.chmod(0o705)
        assert sandbox.unreachable_for(user, plan) is not None  # group bits apply, not other


def test_bot_user_choices(monkeypatch: pytest.MonkeyPatch) -> None:
    assert sandbox.resolve_bot_user("auto", sandboxed=False) == (None, None)
    with pytest.raises(sandbox.BotUserError, match="no user named 'no-such-user-here'"):
        sandbox.resolve_bot_user("no-such-user-here", sandboxed=True)
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert sandbox.resolve_bot_user("auto", sandboxed=True) == (None, None)
    assert sandbox.resolve_bot_user(1000, sandboxed=True) == (None, None)  # itself
    with pytest.raises(sandbox.BotUserError, match=r"needs the arena to run as root"):
        sandbox.resolve_bot_user("nobody", sandboxed=True)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    assert sandbox.resolve_bot_user("root", sandboxed=True) == (None, None)
    user, note = sandbox.resolve_bot_user("auto", sandboxed=True)
    assert (user, note) == (sandbox.BotUser("nobody", NOBODY, NOBODY), None)
    # A uid without a name is used as it is, its group the same number.
    assert sandbox.resolve_bot_user("54321", sandboxed=False)[0] == sandbox.BotUser(
        "54321", 54321, 54321
    )


@needs_sandbox
async def test_bots_cannot_leave_notes_in_the_kernel_keyring() -> None:
    """Keyrings belong to a user, not to a sandbox, and a key outlives the process that
    added it: bots run as one user could pass a hand on to the process that plays the
    same deals from the other seat.  Every sandbox fails the keyring calls."""
    from arbiter.bot import BotCommand, open_bot

    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    script = str(BOTS / "keyring_note.py")
    plan = SandboxPlan.for_engine([sys.executable, script], None, own_dir_configured=False)
    replies = []
    for args in (["put", "KS QS TD"], ["get"]):
        command = BotCommand(
            [sys.executable, script, *args],
            base_env=minimal_env(home="/tmp"),
            sandbox=plan,
            user=user,
        )
        async with open_bot(command, name="note", log_path=None) as bot:
            replies.append((await bot.request(b"go", timeout=10))[0].decode())
    assert replies == ["put EPERM", "get EPERM"]


@needs_sandbox
@pytest.mark.parametrize("how", ["process", "child"])
async def test_a_bot_cannot_start_a_session_of_its_own(how: str) -> None:
    """The kernel schedules a session's processes as one group: a bot whose busy children
    each started a session took a share of the cores per child, and its opponent timed
    out on its own clock.  setsid fails in every sandbox, for the bot and its children,
    and the bot stays in the session the arbiter started it in."""
    code = (
        "import os, sys\n"
        "sys.stdin.readline()\n"
        "def attempt():\n"
        "    try:\n"
        "        os.setsid()\n"
        "        return 'new session'\n"
        "    except OSError as exc:\n"
        "        return f'{exc.strerror} {os.getsid(0) == os.getsid(1)}'\n"
        "if sys.argv[1] == 'child':\n"
        "    r, w = os.pipe()\n"
        "    if os.fork() == 0:\n"
        "        os.write(w, attempt().encode()); os._exit(0)\n"
        "    os.wait(); print(os.read(r, 100).decode(), flush=True)\n"
        "else:\n"
        "    print(attempt(), flush=True)\n"
    )
    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    argv = [sys.executable, "-c", code, how]
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False)
    command = BotCommand(argv, base_env=minimal_env(home="/tmp"), sandbox=plan, user=user)
    async with open_bot(command, name="sessions", log_path=None) as bot:
        reply = (await bot.request(b"go", timeout=10))[0].decode()
    # Still in the session of the sandbox's first process (PID 1 inside).
    assert reply == "Operation not permitted True"


@needs_sandbox
async def test_an_engines_loader_variables_reach_the_bot_not_the_sandboxs_programs(
    tmp_path: Path,
) -> None:
    """bwrap, setpriv (which drops root) and the step that sets up the bot's own user
    namespace run with privileges the bot has not: an engine's ``LD_*`` variables
    (``LD_PRELOAD`` would run the bot's code in them) are given to the bot alone.
    ``LD_DEBUG`` shows who obeyed them: each program that did logs its loading into the
    bot's write grant."""
    from arbiter.bot import BotCommand, open_bot

    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    logs = tmp_path / "logs"
    logs.mkdir()
    if user is not None:
        os.chown(logs, user.uid, user.gid)
    script = "import os, sys; sys.stdin.readline(); print(os.environ.get('LD_DEBUG'), flush=True)"
    argv = [sys.executable, "-c", script]
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False, write_paths=[str(logs)])
    command = BotCommand(
        argv,
        env={"LD_DEBUG": "libs", "LD_DEBUG_OUTPUT": str(logs / "ld"), "SECRET_TOKEN": "s3cr3t"},
        base_env=minimal_env(home="/tmp"),
        sandbox=plan,
        user=user,
        own_namespace=True,  # its sh runs with the namespace's capabilities
        processes=64,
    )
    async with open_bot(command, name="ld", log_path=None) as bot:
        assert (await bot.request(b"go", timeout=10))[0] == b"libs"
        # What the bot is given is on no command line (other users can read those).
        family = [bot.pid, *(p for p, _, parent, _ in sandbox.proc_stats() if parent == bot.pid)]
        cmdlines = b"".join(Path(f"/proc/{pid}/cmdline").read_bytes() for pid in family)
        assert b"s3cr3t" not in cmdlines
    programs = {
        line.split("initialize program: ")[1].strip()
        for log in logs.glob("ld.*")
        for line in log.read_text().splitlines()
        if "initialize program: " in line
    }
    assert programs and all("python" in p for p in programs), programs


@needs_sandbox
def test_a_link_out_of_the_bots_directory_is_not_followed(tmp_path: Path) -> None:
    """A bot that ships ``model.bin -> /elsewhere/book.txt`` (or a linked ``data/``)
    would choose the directory it is shown: such links are not followed, with a warning;
    a path the operator wrote out of the directory (``..``, absolute) still is."""
    mine, other, shared = tmp_path / "mine", tmp_path / "other", tmp_path / "shared"
    for d in (mine, other, shared):
        d.mkdir()
    (other / "book.txt").write_text("the other engine's book\n")
    (shared / "lib.txt").write_text("shared on purpose\n")
    (mine / "model.bin").symlink_to(other / "book.txt")
    (mine / "data").symlink_to(other)
    code = (
        "import sys\n"
        "for path in sys.argv[1:]:\n"
        "    try:\n"
        "        print(path, open(path).read().strip())\n"
        "    except OSError as exc:\n"
        "        print(path, type(exc).__name__)\n"
    )
    (mine / "bot.py").write_text(code)
    argv = [sys.executable, "bot.py", "model.bin", "data/book.txt", "../shared/lib.txt"]
    plan = SandboxPlan.for_engine(argv, str(mine), own_dir_configured=True)
    assert set(plan.unfollowed) == {
        ("model.bin", str(other / "book.txt")),
        ("data/book.txt", str(other / "book.txt")),
    }
    assert str(shared) in plan.read_paths and str(other) not in plan.read_paths
    warnings = sandbox.plan_warnings({"mine": plan})
    assert warnings[0] == (
        f"warning: engine 'mine': model.bin is a symbolic link out of the engine's directory, "
        f"to {other / 'book.txt'}, which the sandbox does not show (links in a bot's directory "
        "are the bot's to choose); name the target itself in the command, or grant it with "
        "allow_paths"
    )
    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    done = subprocess.run(
        sandbox.wrap_command(argv, str(mine), plan, user=user),
        cwd=mine,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    assert done.stdout.splitlines() == [
        "model.bin FileNotFoundError",
        "data/book.txt FileNotFoundError",
        "../shared/lib.txt shared on purpose",
    ]


def test_links_below_the_engines_directory_are_the_bots_and_not_followed(tmp_path: Path) -> None:
    """With no cwd the engine's directory is the config's: a link of one engine's files
    into another's is not followed there either, nor is the program itself a link."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    for d in (mine, other):
        d.mkdir()
        (d / "bot.py").write_text("")
    (other / "book.txt").write_text("")
    (mine / "weights.bin").symlink_to("../other/book.txt")
    (mine / "run").symlink_to(other / "bot.py")
    argv = [sys.executable, "mine/bot.py", "mine/weights.bin"]
    assert sandbox.own_dirs(argv, str(tmp_path), own_dir_configured=False) == [str(mine)]
    assert sandbox.links_out(argv, str(tmp_path)) == [("mine/weights.bin", str(other / "book.txt"))]
    # The program made absolute (as engine_argv does), inside the engine's directory.
    program = [str(mine / "run")]
    assert sandbox.own_dirs(program, str(tmp_path), own_dir_configured=False) == []
    # A symbolic link as the configured cwd, below the config's directory, is named.
    (mine / "build").symlink_to(other)
    assert sandbox.linked_cwd("mine/build", str(tmp_path)) == str(other)
    assert sandbox.linked_cwd("mine", str(tmp_path)) is None
    assert sandbox.linked_cwd(str(mine / "build"), str(tmp_path)) is None  # absolute: as written


def test_a_write_grant_holding_what_the_sandbox_hides_or_shares_is_refused(tmp_path: Path) -> None:
    """In a directory it may write, a bot could rename what holds a masked path (the
    mask would miss it at the next start) or change code the other bots run."""
    mine, other = tmp_path / "mine", tmp_path / "mine" / "other"
    (mine / "src").mkdir(parents=True)
    other.mkdir()
    (mine / "src" / "bot.py").write_text("")
    argv = [sys.executable, str(mine / "src" / "bot.py")]
    with pytest.raises(sandbox.SandboxConflict, match=r"holds .*/other, a path hidden from it"):
        SandboxPlan.for_engine(
            argv, str(mine), own_dir_configured=False, write_paths=[str(mine)], hidden=[str(other)]
        )
    old_run = mine / "runs" / "old"
    old_run.mkdir(parents=True)
    (old_run / "games.jsonl").write_text("")
    with pytest.raises(sandbox.SandboxConflict, match="an earlier run's output"):
        SandboxPlan.for_engine(argv, str(mine), own_dir_configured=False, write_paths=[str(mine)])
    (old_run / "games.jsonl").unlink()
    arena = sandbox.arena_paths()[0]
    with pytest.raises(sandbox.SandboxConflict, match="the arena's own code, which every bot runs"):
        SandboxPlan.for_engine(argv, None, own_dir_configured=False, write_paths=[arena])
    # Read-only binds inside a write grant are left to it (not looked up again apart).
    plan = SandboxPlan.for_engine(
        argv, str(mine), own_dir_configured=False, write_paths=[str(mine)]
    )
    assert plan is not None and str(mine / "src") not in plan.read_paths
    assert plan.write_paths == (str(mine),)


def test_what_could_run_in_the_sandboxs_privileged_programs_reaches_only_the_bot() -> None:
    """With a user to switch to, the loader's, locale's and time zone's variables are set
    by env after setpriv; bwrap's own options carry only the rest."""
    user = sandbox.BotUser("nobody", NOBODY, NOBODY)
    plan = SandboxPlan()
    env = {"PATH": "/usr/bin", "LD_PRELOAD": "x.so", "LANG": "C.UTF-8", "LC_ALL": "C", "K": "v"}
    options, command = sandbox.wrap_parts(["/bin/true"], "/", plan, user=user, env=env)
    assert options[options.index("--clearenv") :].count("--setenv") == 2
    assert ["--setenv", "PATH", "/usr/bin"] == options[
        options.index("PATH") - 1 : options.index("PATH") + 2
    ]
    after = command[command.index("--") + 1 :]
    assert after == ["/usr/bin/env", "LD_PRELOAD=x.so", "LANG=C.UTF-8", "LC_ALL=C", "/bin/true"]
    with pytest.raises(sandbox.SandboxConflict, match="has '=' in its path"):
        sandbox.wrap_parts(["/opt/a=b/bot"], "/", plan, user=user, env=env)


@pytest.mark.parametrize("spec", ["4294967295", 4294967296, 2**40, "٣"])
def test_a_user_id_the_kernel_would_read_as_root_or_no_change_is_refused(
    spec: str | int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(sandbox.BotUserError):
        sandbox.resolve_bot_user(spec, sandboxed=True)


def test_grants_one_engine_could_turn_against_another_are_refused(tmp_path: Path) -> None:
    """A directory one engine may write must not be or hold one another is shown: the
    writer could change the other's program, read its notes, or swap its directories
    for links that the other's next sandbox would follow."""
    shared, books, notes = tmp_path / "bot", tmp_path / "shared", tmp_path / "shared" / "books"
    for d in (shared, notes):
        d.mkdir(parents=True)
    sandbox.check_write_grants({"a": [str(shared)], "b": [str(tmp_path / "b")]}, {"a": []})
    cases = [
        ({"a": [str(shared)], "b": [str(shared)]}, {"a": [str(shared)]}),  # one program
        ({"a": [], "b": [str(notes)]}, {"a": [str(books)]}),  # b's grant in a's
    ]
    for shown, writable in cases:
        with pytest.raises(
            sandbox.SandboxConflict, match=r"engine 'a' may write .* shown to engine 'b'"
        ):
            sandbox.check_write_grants(shown, writable)
    # Within one engine a grant inside another is left to it (not bound apart).
    deep = books / "sub" / "deep"
    deep.mkdir(parents=True)
    plan = SandboxPlan.for_engine(
        [sys.executable], None, own_dir_configured=False, write_paths=[str(books), str(deep)]
    )
    assert plan.write_paths == (str(books),)


def test_another_engines_notes_in_this_ones_directory_are_masked(tmp_path: Path) -> None:
    from arbiter.config import parse_config
    from arbiter.tournament import engine_commands

    for d in ("a/bdata", "b"):
        (tmp_path / d).mkdir(parents=True)
    for name in ("a/a.py", "b/b.py"):
        (tmp_path / name).write_text("")
    config = parse_config(
        "engines:\n"
        f"  - {{name: a, command: [{sys.executable}, a.py], cwd: a}}\n"
        f"  - {{name: b, command: [{sys.executable}, b.py], cwd: b, write_paths: [a/bdata]}}\n"
    )
    if ROOT_ARENA:
        os.chown(tmp_path / "a" / "bdata", NOBODY, NOBODY)
    commands = engine_commands(config, tmp_path, sandboxed=True, hidden=[])
    plan = commands["a"].sandbox
    assert plan is not None and str(tmp_path / "a" / "bdata") in plan.hidden


def test_an_engine_shown_another_engines_directory_is_refused(tmp_path: Path) -> None:
    """A directory link in alice's directory, named on her command line by an absolute
    path (``/bots/alice/data/book.txt``, data -> ../bob), would make bob's directory one
    of hers, which could then not be hidden from her."""
    from arbiter.config import parse_config
    from arbiter.tournament import TournamentError, engine_commands

    alice, bob = tmp_path / "bots" / "alice", tmp_path / "bots" / "bob"
    for d in (alice, bob):
        d.mkdir(parents=True)
        (d / "bot.py").write_text("")
    (bob / "book.txt").write_text("")
    (alice / "data").symlink_to("../bob")
    book = alice / "data" / "book.txt"
    config = parse_config(
        "engines:\n"
        f"  - {{name: alice, command: [{sys.executable}, {alice / 'bot.py'}, {book}]}}\n"
        f"  - {{name: bob, command: [{sys.executable}, {bob / 'bot.py'}]}}\n"
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    with pytest.raises(
        TournamentError, match=r"engine 'alice' would be shown .*bob, which is or lies in"
    ):
        engine_commands(config, elsewhere, sandboxed=True, hidden=[])
    # One program in two configurations shares its directory: fine.
    twins = parse_config(
        "engines:\n"
        f"  - {{name: b1, command: [{sys.executable}, {bob / 'bot.py'}, --fast]}}\n"
        f"  - {{name: b2, command: [{sys.executable}, {bob / 'bot.py'}]}}\n"
    )
    assert set(engine_commands(twins, elsewhere, sandboxed=True, hidden=[])) == {"b1", "b2"}


def test_a_user_whose_group_is_roots_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    import pwd

    entry = pwd.struct_passwd(("grp0", "x", 1234, 0, "", "/", "/bin/sh"))
    monkeypatch.setattr(pwd, "getpwnam", lambda name: entry)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(sandbox.BotUserError, match=r"group is root's \(gid 0\)"):
        sandbox.resolve_bot_user("grp0", sandboxed=True)
    user, note = sandbox.resolve_bot_user("auto", sandboxed=True)  # 'nobody' is grp0 here
    assert user is None and note is not None and "bots run as root" in note


@needs_sandbox
def test_an_output_reached_through_a_link_a_bot_may_swap_is_resolved_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--out`` through a link in a directory the bot may write: the bot repoints the
    link when it starts; the run goes on writing where the link led at its start."""
    from arbiter.cli import main as cli_main

    grant, first, second = tmp_path / "w", tmp_path / "first", tmp_path / "second"
    for d in (grant, first, second):
        d.mkdir()
    (grant / "link").symlink_to(first)
    if ROOT_ARENA:
        os.chown(grant, NOBODY, NOBODY)
        os.lchown(grant / "link", NOBODY, NOBODY)
    bot = tmp_path / "bot" / "swap.py"
    bot.parent.mkdir()
    bot.write_text(
        "import os, random\n"
        "from protocol.sdk import run_bot\n"
        f"link = {str(grant / 'link')!r}\n"
        "os.rename(link, link + '.old')\n"
        f"os.symlink({str(second)!r}, link)\n"
        "run_bot(lambda r: random.choice(r.legal), name='swap', author='t', version='1')\n"
    )
    config = tmp_path / "t.yaml"
    config.write_text(
        "engines:\n"
        f"  - {{name: swap, command: [{sys.executable}, bot/swap.py], write_paths: [w]}}\n"
        "  - {name: random, builtin: random}\n"
        "games_per_pairing: 2\nsandbox: on\n"
    )
    out = grant / "link" / "run"
    assert cli_main(["tournament", str(config), "--out", str(out), "--quiet"]) == 0, (
        capsys.readouterr().err
    )
    assert (first / "run" / "games.jsonl").exists()
    assert list(second.iterdir()) == []


def test_a_file_that_is_a_link_out_of_its_directory_is_not_followed_named_absolutely(
    tmp_path: Path,
) -> None:
    """``ecarte match "python3 /bots/bob/bot.py /bots/bob/book.txt"`` from elsewhere names
    bob's link by an absolute path: still bob's link, not followed (to carol's book, or
    behind a directory nobody may enter, which a root-built sandbox would bind anyway)."""
    bob, carol, private = tmp_path / "bob", tmp_path / "carol", tmp_path / "private" / "in"
    for d in (bob, carol, private):
        d.mkdir(parents=True)
    (bob / "bot.py").write_text("")
    (carol / "book.txt").write_text("")
    (private / "secret.txt").write_text("")
    (bob / "book.txt").symlink_to("../carol/book.txt")
    (bob / "weights.bin").symlink_to(private / "secret.txt")
    argv = [sys.executable, str(bob / "bot.py"), str(bob / "book.txt"), str(bob / "weights.bin")]
    elsewhere = str(tmp_path / "elsewhere")
    assert sandbox.own_dirs(argv, elsewhere, own_dir_configured=False) == [str(bob)]
    assert sandbox.links_out(argv, elsewhere) == [
        (str(bob / "book.txt"), str(carol / "book.txt")),
        (str(bob / "weights.bin"), str(private / "secret.txt")),
    ]


@needs_sandbox
async def test_checks_opponent_does_not_import_the_bots_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ecarte check`` run from a bot's directory: its bundled opponent must not import
    an ``engines`` package of the bot's (run as root outside the sandbox, it did)."""
    from arbiter.check import check_bot

    marker = tmp_path / "imported"
    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "__init__.py").write_text(
        f"open({str(marker)!r}, 'a').write('x')\n__path__[:] = {[str(ROOT / 'engines')]!r}\n"
    )
    monkeypatch.chdir(tmp_path)
    report = await check_bot([sys.executable, "-I", "-m", "engines.random.bot"], games=1)
    assert report.games >= 1
    assert not marker.exists()


def test_no_file_of_a_run_goes_through_a_linked_logs_directory(tmp_path: Path) -> None:
    from arbiter.journal import JournalError, make_private_dir

    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "logs").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(JournalError, match="logs is a symbolic link"):
        make_private_dir(tmp_path / "logs")


def test_a_write_grant_is_named_as_a_memory_isolate_deals_cannot_clear(tmp_path: Path) -> None:
    from arbiter.config import parse_config
    from arbiter.tournament import engine_commands

    (tmp_path / "notes").mkdir()
    if ROOT_ARENA:
        os.chown(tmp_path / "notes", NOBODY, NOBODY)
    text = "engines:\n  - {name: mine, builtin: random, write_paths: [notes]}\n  - {name: random}\n"
    said: list[str] = []
    engine_commands(parse_config(text), tmp_path, sandboxed=True, hidden=[], warn=said.append)
    assert said == [
        "warning: engine 'mine' may write notes (write_paths): it can keep notes from one "
        "process to the next, the cards of a duplicate pair's first game included, which "
        "isolate_deals cannot stop; grant write_paths only to bots you trust"
    ]
    said.clear()
    config = parse_config(text + "isolate_deals: false\n")
    engine_commands(config, tmp_path, sandboxed=True, hidden=[], warn=said.append)
    assert said == []


def test_a_directory_reached_through_a_link_must_be_reachable_by_the_bots_user() -> None:
    """Built as root, the sandbox would show a directory behind one the bot's user may not
    enter; reached through a link of the bot's (``data -> /private/inner``), it is
    shown only if the user could reach it anyway."""
    import shutil
    import tempfile

    # Under /tmp itself: the whole way to the directory counts (pytest's is private).
    root = Path(tempfile.mkdtemp(prefix="ecarte-link-"))
    try:
        root.chmod(0o755)
        mine, inner = root / "mine", root / "private" / "inner"
        for d in (mine, inner):
            d.mkdir(parents=True)
        (mine / "bot.py").write_text("")
        (inner / "secret.txt").write_text("")
        (root / "private").chmod(0o700)
        (mine / "data").symlink_to(inner)
        argv = [sys.executable, str(mine / "bot.py"), str(mine / "data" / "secret.txt")]
        plan = SandboxPlan.for_engine(argv, str(root / "elsewhere"), own_dir_configured=False)
        assert plan.linked == (str(inner),)
        user = sandbox.BotUser("someone", 4242, 4242)
        assert sandbox.unreachable_for(user, plan) == (
            f"{inner}, reached through a symbolic link on the way its command names it, lies "
            f"behind {root / 'private'}, which someone (uid 4242) may not enter: name it by "
            "its real path"
        )
        (root / "private").chmod(0o755)
        assert sandbox.unreachable_for(user, plan) is None
    finally:
        shutil.rmtree(root)


def test_two_bots_in_one_directory_or_a_linked_absolute_cwd_are_caught(tmp_path: Path) -> None:
    """``bots/alice.py`` and ``bots/bob.py`` would each be shown the other's files; a
    ``cwd`` named absolutely through the bot's ``current -> /elsewhere`` link counts as
    reached through a link (shown only where the bot's user could go)."""
    bots = tmp_path / "bots"
    bots.mkdir()
    for name in ("alice.py", "bob.py"):
        (bots / name).write_text("")
    argv = {n: [sys.executable, str(bots / f"{n}.py")] for n in ("alice", "bob")}
    owns = {n: sandbox.own_dirs(a, None, own_dir_configured=False) for n, a in argv.items()}
    programs = {n: sandbox.program_files(a, None) for n, a in argv.items()}
    with pytest.raises(sandbox.SandboxConflict, match="engine 'alice' would be shown"):
        sandbox.check_own_dirs(owns, programs)
    (tmp_path / "v3").mkdir()
    (bots / "current").symlink_to(tmp_path / "v3")
    plan = SandboxPlan.for_engine(argv["bob"], str(bots / "current"), own_dir_configured=True)
    assert plan.linked == (str(tmp_path / "v3"),)


def test_two_packages_or_directories_in_one_directory_are_two_programs(tmp_path: Path) -> None:
    """``python3 -m alice`` and ``python3 -m bob`` run from one ``bots/`` (or the two
    package directories as arguments) are two bots, each shown the other's files."""
    bots = tmp_path / "bots"
    for name in ("alice", "bob"):
        (bots / name).mkdir(parents=True)
        (bots / name / "__main__.py").write_text("")
    for form in (["-m"], []):
        argv = {n: [sys.executable, *form, n] for n in ("alice", "bob")}
        owns = {n: [str(bots)] for n in argv}
        programs = {n: sandbox.program_files(a, str(bots)) for n, a in argv.items()}
        with pytest.raises(sandbox.SandboxConflict, match="would be shown"):
            sandbox.check_own_dirs(owns, programs)
    # The same package with other options is one program.
    same = {
        n: sandbox.program_files([sys.executable, "-m", "bob", *o], str(bots))
        for n, o in (("b1", ["--fast"]), ("b2", []))
    }
    sandbox.check_own_dirs({"b1": [str(bots)], "b2": [str(bots)]}, same)


# ----------------------------------------------------------------------------- process cap

_FORKER = (
    "import os, sys, time\n"
    "def fork_until(n):\n"
    "    kids = []\n"
    "    for _ in range(n):\n"
    "        try:\n"
    "            pid = os.fork()\n"
    "        except OSError:\n"
    "            break\n"
    "        if pid == 0:\n"
    "            time.sleep(float(sys.argv[1])); os._exit(0)\n"
    "        kids.append(pid)\n"
    "    return kids\n"
    "kids = fork_until(60)\n"
    "print(len(kids), flush=True)\n"
    "for pid in kids: os.waitpid(pid, 0)\n"
)


@needs_sandbox
def test_a_bots_processes_are_capped_and_counted_apart_from_other_bots(tmp_path: Path) -> None:
    """Two bots run as one user at once, each capped at 20 processes: each gets its own 20
    (the count is per sandbox, so one bot's fork bomb cannot stop the other from starting),
    and neither gets more, nor escapes the count through a user namespace of its own or
    raises its limit."""
    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    assert sandbox.own_namespace_unavailable(user) is None
    plan = SandboxPlan.for_engine([sys.executable], str(tmp_path), own_dir_configured=True)

    def start(code: str, *args: str, processes: int | None = 20) -> subprocess.Popen[str]:
        argv = [sys.executable, "-c", code, *args]
        wrapped = sandbox.wrap_command(
            argv, None, plan, user=user, own_namespace=True, processes=processes
        )
        return subprocess.Popen(wrapped, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    first = start(_FORKER, "1.5")
    assert first.stdout is not None
    held = int(first.stdout.readline())  # the first bot holds its children meanwhile
    second = start(_FORKER, "0")
    out, err = second.communicate(timeout=30)
    first.communicate(timeout=30)
    # 20 tasks a sandbox: the forking process is one of them.
    assert held == 19 and int(out) == 19, err
    # Uncapped, the same bot gets all 60.
    uncapped = start(_FORKER, "0", processes=None)
    out, _ = uncapped.communicate(timeout=30)
    assert int(out) == 60
    escape = (
        "import ctypes, os, resource\n"
        "try:\n"
        "    resource.setrlimit(resource.RLIMIT_NPROC, (1000, 1000))\n"
        "    print('raised')\n"
        "except (ValueError, OSError):\n"
        "    print('kept', resource.getrlimit(resource.RLIMIT_NPROC))\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "print('unshared' if libc.unshare(0x10000000) == 0 else 'no unshare')\n"
        "exec(EXEC)\n"
    )
    escaper = start(f"EXEC = {_FORKER!r}\n" + escape, "0")
    out, err = escaper.communicate(timeout=30)
    # No namespace of its own either (USER_NAMESPACE_LIMITS): nowhere to be counted apart.
    assert out.splitlines() == ["kept (20, 20)", "no unshare", "19"], err


@needs_sandbox
@pytest.mark.parametrize("mode", ["fork", "thread"])
async def test_process_limit(mode: str, tmp_path: Path) -> None:
    """A sandboxed bot that starts processes or threads without end meets its cap and
    its death is charged to the limit, its own error in its log."""
    argv = [sys.executable, str(BOTS / "fork_bomb.py"), mode]
    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False)
    command = BotCommand(argv, sandbox=plan, user=user, own_namespace=True, processes=12)
    async with open_bot(command, name="bomb", log_path=tmp_path / "bomb.log") as bot:
        with pytest.raises(ResourceLimit, match="process limit of 12 processes and threads"):
            await bot.request(b"go", timeout=10)
    said = (tmp_path / "bomb.log").read_text()
    assert "Resource temporarily unavailable" in said or "can't start new thread" in said


@needs_sandbox
def test_a_fork_bomb_in_a_tournament_is_a_resource_limit_fault(tmp_path: Path) -> None:
    """limits.processes from the config reaches every process of the engine; the bot that
    meets it loses its games to the limit, and the run says how to read that."""
    engine = f"{{name: bomb, command: [{sys.executable}, {BOTS / 'proto_fork_bomb.py'}]}}"
    config = _config(tmp_path, engine, mode="on")
    config.write_text(config.read_text() + "limits: {processes: 16}\n")
    out = tmp_path / "out"
    proc = _ecarte("tournament", config, "--out", out, "--quiet")
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 3, err  # the run had faults
    records = [json.loads(line) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        term = record["termination"]
        assert term["reason"] == "resource_limit", term
        assert "process limit of 16 processes and threads reached" in term["detail"]
    assert "fix: the bot started more processes and threads than limits.processes" in err


def test_every_sandboxed_engine_gets_the_process_cap_or_the_run_says_why_not(
    tmp_path: Path,
) -> None:
    """Every sandboxed bot gets a user namespace of its own, with the process cap (on by
    default); where it cannot (bots run as root, whom the kernel does not count) the run
    says so once, and unsandboxed bots are not capped (their count would include every
    process of their user)."""
    from arbiter.config import parse_config
    from arbiter.tournament import engine_commands

    text = "engines:\n  - {name: a, builtin: random}\n  - {name: b, builtin: random}\n"
    said: list[str] = []
    commands = engine_commands(
        parse_config(text), tmp_path, sandboxed=True, hidden=[], warn=said.append
    )
    assert [c.processes for c in commands.values()] == [256, 256] and said == []
    assert all(c.own_namespace for c in commands.values())
    config = parse_config(text + "limits: {processes: 40}\n")
    commands = engine_commands(config, tmp_path, sandboxed=False, hidden=[], warn=said.append)
    assert [c.processes for c in commands.values()] == [None, None] and said == []
    if ROOT_ARENA:
        config = parse_config(text + "bot_user: root\n")
        commands = engine_commands(config, tmp_path, sandboxed=True, hidden=[], warn=said.append)
        assert [c.processes for c in commands.values()] == [None, None]
        assert said == [
            "warning: bots get no user namespace of their own: the bots run as root, whom "
            "the kernel does not count; limits.processes (256) is not applied and a bot can "
            "start processes without bound and use up its user's kernel counters "
            "(namespaces, inotify), which other programs of that user share"
        ]
        said.clear()
        config = parse_config(text + "bot_user: root\nlimits: {processes: null}\n")
        engine_commands(config, tmp_path, sandboxed=True, hidden=[], warn=said.append)
        assert said == [
            "warning: bots get no user namespace of their own: the bots run as root, whom "
            "the kernel does not count; a bot can start processes without bound and use up "
            "its user's kernel counters (namespaces, inotify), which other programs of that "
            "user share"
        ]


def test_a_probe_that_fails_is_told_by_its_last_word(tmp_path: Path) -> None:
    """What the machine refuses (a namespace, a tool) reaches the warning as the tool said it."""
    refusal = "echo first >&2; echo 'unshare: Operation not permitted' >&2; exit 1"
    failed = sandbox._probe_failure(["/bin/sh", "-c", refusal])
    assert failed == "unshare: Operation not permitted"
    assert sandbox._probe_failure(["/bin/sh", "-c", "exit 4"]) == "exit status 4"
    assert sandbox._probe_failure(["/bin/true"]) is None
    failed = sandbox._probe_failure([str(tmp_path / "nothing")])
    assert failed is not None and failed.startswith("nothing could not be run: ")


@needs_sandbox
def test_the_system_files_a_bot_is_shown_are_readable_by_its_user() -> None:
    """The sandbox's /etc is built by root: run as another user, the bot must still read
    the loader cache, its user's name, the time zone and the certificates (Node.js reads
    /etc/ssl/openssl.cnf at start and exits without it)."""
    wanted = ["/etc/passwd", "/etc/ld.so.cache", "/etc/ssl/openssl.cnf", "/etc/localtime"]
    shown = [path for path in wanted if os.path.exists(path)]
    assert "/etc/passwd" in shown
    code = (
        "import os, pwd, sys\n"
        "for path in sys.argv[1:]:\n"
        "    print(path, os.access(path, os.R_OK))\n"
        "print(pwd.getpwuid(os.getuid()).pw_name)\n"
    )
    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    plan = SandboxPlan.for_engine([sys.executable], None, own_dir_configured=False)
    argv = sandbox.wrap_command([sys.executable, "-c", code, *shown], None, plan, user=user)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=30, check=True)
    name = "nobody" if user is not None else pwd.getpwuid(os.getuid()).pw_name
    assert done.stdout.splitlines() == [*(f"{path} True" for path in shown), name]


def test_a_grant_through_a_bots_link_or_of_live_state_is_refused(tmp_path: Path) -> None:
    """A bot ships ``data -> /proc`` and asks, in its README, for ``allow_paths:
    [evil/data]``: bound, the host's /proc would show the opponent's memory.  A link in
    an engine's directory or below the config's is refused on a grant's way; the
    running system's state is refused as a grant however it is named; a link the
    operator keeps elsewhere is followed."""
    from arbiter.config import parse_config
    from arbiter.tournament import TournamentError, engine_commands

    cfg = tmp_path / "cfg"
    evil = cfg / "evil"
    evil.mkdir(parents=True)
    (evil / "bot.py").write_text("")
    (evil / "data").symlink_to("/proc")
    (evil / "notes").symlink_to("/dev/shm")
    books = tmp_path / "srv" / "books"
    books.mkdir(parents=True)
    (tmp_path / "links").mkdir()
    (tmp_path / "links" / "books").symlink_to(books)
    (cfg / "books").symlink_to(books)

    def commands(grants: str) -> None:
        text = (
            f"engines:\n  - {{name: evil, command: [{sys.executable}, evil/bot.py], {grants}}}\n"
            "  - {name: random}\n"
        )
        engine_commands(parse_config(text), cfg, sandboxed=True, hidden=[])

    with pytest.raises(TournamentError, match=r"allow_paths entry evil/data leads through the "):
        commands("allow_paths: [evil/data]")
    with pytest.raises(TournamentError, match=r"write_paths entry evil/notes leads through "):
        commands("write_paths: [evil/notes]")
    with pytest.raises(TournamentError, match=r"allow_paths entry books leads through the "):
        commands("allow_paths: [books]")  # below the config's directory: maybe a bot's
    for grant in ("/proc", "/proc/self", "/dev/shm", "/run", "/"):
        with pytest.raises(TournamentError, match=r"never the running system's state"):
            commands(f"allow_paths: [{grant}]")
    commands(f"allow_paths: [{tmp_path / 'links' / 'books'}]")  # the operator's link
    commands(f"allow_paths: [{books}]")


def test_an_engine_kept_where_every_bot_looks_is_named_in_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every sandbox shows /opt, /usr and the arena's installation: an engine kept there
    (its cwd, its script, its book) cannot be hidden from the others, and the run says so.
    The program itself (an interpreter there) and the bundled engines are not named."""
    opt = tmp_path / "opt"
    alice = opt / "alice"
    alice.mkdir(parents=True)
    (alice / "bot.py").write_text("")
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "bot.py").write_text("")
    monkeypatch.setattr(sandbox, "SYSTEM_PATHS", (*sandbox.SYSTEM_PATHS, str(opt)))

    def warned(argv: list[str], cwd: str | None) -> list[str]:
        plan = SandboxPlan.for_engine(argv, cwd, own_dir_configured=cwd is not None)
        return sandbox.plan_warnings({"alice": plan})

    expected = [
        f"warning: engine 'alice': {alice} lies where every bot is shown (a system directory "
        "or the arena's installation): its files cannot be hidden from the other engines; "
        "keep a bot's files out of /opt, /usr and the virtual environment"
    ]
    assert warned([sys.executable, "bot.py"], str(alice)) == expected
    assert warned([sys.executable, str(alice / "bot.py")], None) == expected
    assert warned([sys.executable, str(tmp_path / "mine" / "bot.py")], None) == []
    assert warned([sys.executable, "-m", "engines.random.bot"], None) == []
    js = ROOT / "engines" / "js"  # an example bot beside the bundled engines: public code
    assert warned(["node", "bot.js"], str(js)) == []


def test_an_orphan_that_will_not_die_does_not_stall_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A killed process stuck in the kernel (a hung network file system) cannot be
    reaped at once: reaping waits a moment at most, and the next call tries again."""
    monkeypatch.setattr(sandbox, "_subreaper", True)
    me = os.getpid()
    monkeypatch.setattr(sandbox, "proc_stats", lambda: iter([(4242, b"D", me, 4242)]))
    killed: list[int] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: killed.append(pid))
    monkeypatch.setattr(os, "waitpid", lambda pid, flags: (0, 0))  # never gone
    start = time.monotonic()
    assert sandbox.reap_escapees([]) == 1
    assert killed == [4242]
    assert time.monotonic() - start < sandbox.REAP_WAIT + 0.5


@needs_sandbox
def test_a_bot_cannot_use_up_its_users_kernel_counters() -> None:
    """The kernel counts namespaces and inotify instances per user for the whole machine:
    a bot that filled its user's count of namespaces kept its opponent's sandbox from
    starting.  In its own user namespace a bot may create no namespace and hold 2
    inotify instances, and cannot change that; the machine's limits are untouched."""
    code = (
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "for flag in (0x10000000, 0x04000000):  # CLONE_NEWUSER, CLONE_NEWUTS\n"
        "    print(libc.unshare(flag), os.strerror(ctypes.get_errno()))\n"
        "held = 0\n"
        "while held < 100 and libc.inotify_init1(0) >= 0:\n"
        "    held += 1\n"
        "print(held)\n"
        "try:\n"
        "    open('/proc/sys/user/max_inotify_instances', 'w').write('1000')\n"
        "    print('raised')\n"
        "except OSError as exc:\n"
        "    print(exc.strerror)\n"
        "print(open('/proc/sys/user/max_uts_namespaces').read().strip())\n"
    )
    user, _ = sandbox.resolve_bot_user("auto", sandboxed=True)
    plan = SandboxPlan.for_engine([sys.executable], None, own_dir_configured=False)
    argv = [sys.executable, "-c", code]
    wrapped = sandbox.wrap_command(argv, None, plan, user=user, own_namespace=True)
    done = subprocess.run(wrapped, capture_output=True, text=True, timeout=30, check=True)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("-1 ") and lines[1].startswith("-1 "), lines
    assert lines[2:] == ["2", "Permission denied", "0"]
    with open("/proc/sys/user/max_uts_namespaces") as host:
        assert int(host.read()) > 0


def test_a_bot_kept_in_the_home_directory_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``ecarte match ./bot.py random`` run from ``~`` with the bot there: the bot's
    directory is the home directory, which the sandbox would show it whole (the keys in
    ~/.ssh, the shell's history).  Refused, as a grant of it or of what holds it is; a
    directory below it is the bot's own."""
    home = tmp_path / "home" / "op"
    (home / "bots" / "mine").mkdir(parents=True)
    (home / "bot.py").write_text("")
    (home / "bots" / "mine" / "bot.py").write_text("")
    monkeypatch.setenv("HOME", str(home))
    with pytest.raises(sandbox.SandboxConflict, match=f"^{home} is your home directory, and a"):
        SandboxPlan.for_engine([sys.executable, "bot.py"], str(home), own_dir_configured=False)
    with pytest.raises(sandbox.SandboxConflict, match=f"holds your home \\({home}\\)"):
        SandboxPlan.for_engine(
            [sys.executable, str(home / "bots" / "mine" / "bot.py")],
            None,
            own_dir_configured=False,
            allow_paths=[str(tmp_path / "home")],
        )
    plan = SandboxPlan.for_engine(
        [sys.executable, "bot.py"], str(home / "bots" / "mine"), own_dir_configured=True
    )
    assert str(home / "bots" / "mine") in plan.read_paths


def test_an_arena_not_run_as_root_sets_loader_variables_after_the_namespace_step() -> None:
    """Without a change of user, the step that sets up the bot's own namespace still runs
    with that namespace's capabilities: the engine's LD_* variables and those that change
    what a shell runs reach the bot only (set by env, the last program before it), the
    others are bwrap's to set (off every command line)."""
    plan = SandboxPlan.for_engine([sys.executable], None, own_dir_configured=False)
    # Where /bin/sh is bash, BASH_ENV and exported functions would run in that shell.
    shell = {"BASH_ENV": "/bots/mine/rc", "BASH_FUNC_echo%%": "() { :; }", "ENV": "/x"}
    env = {"PATH": "/usr/bin", "LD_PRELOAD": "/bots/mine/hook.so", "TOKEN": "t", **shell}
    options, command = sandbox.wrap_parts(
        [sys.executable, "bot.py"], "/", plan, env=env, own_namespace=True, processes=8
    )
    at = options.index("TOKEN")
    assert options[at - 1 : at + 2] == ["--setenv", "TOKEN", "t"]
    assert not {"LD_PRELOAD", *shell} & set(options)
    assert command[0].endswith("unshare")
    env_at = command.index("LD_PRELOAD=/bots/mine/hook.so")
    assert command[env_at - 1].endswith("env")
    late = [f"{key}={value}" for key, value in shell.items()]
    assert command[env_at + 1 :] == [*late, sys.executable, "bot.py"]
    assert command.index("--nproc=8:8") < env_at
