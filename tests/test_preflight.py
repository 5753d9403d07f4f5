"""Tests of arbiter.preflight: a run whose engine cannot start stops before it schedules."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from arbiter.bot import BotCommand
from arbiter.cli import main as cli_main
from arbiter.preflight import program_problem

BOTS = Path(__file__).parent / "bots"


def _config(tmp_path: Path, broken: str, *, extra: str = "") -> Path:
    """A tournament of the random engine and ``broken`` (a YAML engine entry's keys)."""
    config = tmp_path / "t.yaml"
    config.write_text(
        "engines:\n"
        "  - {name: good, builtin: random}\n"
        f"  - {{name: broken, {broken}}}\n"
        f"games_per_pairing: 4\nseed: 1\nconcurrency: 2\n{extra}"
    )
    return config


def _run(config: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = cli_main(["tournament", str(config), "--out", str(out), "--quiet"])
    return code, capsys.readouterr().err


def _nothing_written(out: Path) -> bool:
    """No output at all: the directory the refused run made is gone again, so the same
    command works once the engine is fixed."""
    return not out.exists()


def test_a_missing_program_stops_the_run_before_any_game(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bots = tmp_path / "bots"
    bots.mkdir()
    config = _config(tmp_path, "command: ./nope.py, cwd: bots")
    out = tmp_path / "out"
    code, err = _run(config, out, capsys)
    assert code == 2
    line = [ln for ln in err.splitlines() if "cannot start" in ln]
    assert line == [
        f"ecarte tournament: error: engine 'broken' cannot start: {bots / 'nope.py'} (in {bots}): "
        f"no such file: {bots / 'nope.py'}"
    ]
    assert _nothing_written(out)


def test_a_program_without_execute_permission_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = tmp_path / "mybot.py"
    script.write_text("print('hello')\n")
    script.chmod(0o644)
    code, err = _run(_config(tmp_path, f"command: {script}"), tmp_path / "out", capsys)
    assert code == 2
    assert f"{script} is not executable: make it so (chmod +x)" in err
    assert "python3 " in err


def test_a_bot_that_dies_at_start_is_quoted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The usual SDK mistake: run with a Python that lacks the package."""
    script = tmp_path / "sdkbot.py"
    script.write_text("import protocol_that_is_not_installed\n")
    code, err = _run(
        _config(tmp_path, f"command: [{sys.executable}, {script}]"), tmp_path / "out", capsys
    )
    assert code == 2
    assert "engine 'broken' cannot start" in err
    assert f"(in {tmp_path})" in err  # the config file's directory
    assert "disconnected: " in err
    # The traceback's last lines, the exception last.
    assert "its stderr ends: Traceback (most recent call last): | " in err
    assert err.rstrip().endswith(
        "| import protocol_that_is_not_installed | "
        "ModuleNotFoundError: No module named 'protocol_that_is_not_installed'"
    )


def test_a_bot_that_never_says_hello_is_named_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bot = BOTS / "proto_no_hello.py"
    config = _config(
        tmp_path,
        f"command: [{sys.executable}, {bot}]",
        extra="time_control: {handshake_ms: 2000}\n",
    )
    out = tmp_path / "out"
    code, err = _run(config, out, capsys)
    assert code == 2
    assert "engine 'broken' cannot start" in err
    assert "no_handshake: no hello within 2000 ms of starting" in err
    assert "'good'" not in err  # the engine that works is not blamed
    assert _nothing_written(out)


def test_every_broken_engine_gets_its_own_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "t.yaml"
    config.write_text(
        "engines:\n"
        "  - {name: one, command: ./missing-one}\n"
        "  - {name: two, command: no-such-program-anywhere}\n"
        "  - {name: ok, builtin: random}\n"
        "games_per_pairing: 2\nseed: 1\n"
    )
    code, err = _run(config, tmp_path / "out", capsys)
    assert code == 2
    lines = err.splitlines()
    assert any(f"engine 'one' cannot start: {tmp_path / 'missing-one'}" in ln for ln in lines)
    assert any(
        "engine 'two' cannot start: no-such-program-anywhere" in ln
        and "'no-such-program-anywhere' is not on the PATH the bot gets" in ln
        for ln in lines
    )


def test_program_problem_accepts_what_can_run(tmp_path: Path) -> None:
    assert program_problem(BotCommand([sys.executable, "-c", "pass"])) is None
    on_path = BotCommand(["sh", "-c", "true"], base_env={"PATH": "/bin:/usr/bin"})
    assert program_problem(on_path) is None
    directory = tmp_path / "d"
    directory.mkdir()
    assert program_problem(BotCommand(["./d"], cwd=str(tmp_path))) == (
        f"{directory} is a directory, not a program"
    )


@pytest.mark.parametrize("where", ["stderr", "hello"])
def test_what_a_bot_says_before_it_dies_reaches_the_terminal_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str
) -> None:
    """A bot's last stderr line, or a field of its hello, cannot rewrite the terminal.

    The escape sequences would set the window title, move up a line and erase it, and
    a newline would add a line of the bot's own under the arbiter's name.
    """
    evil = "\x1b]0;owned\x07\x1b[1A\x1b[2Kall good\nengine 'good' cannot start: forged"
    script = tmp_path / "evil.py"
    if where == "stderr":
        # The arbiter quotes the end of the stderr: the sequences go on its last line.
        last = evil.replace("\n", " ")
        body = f"import sys\nsys.stderr.write('first\\n' + {last!r})\nsys.exit(3)\n"
    else:
        # An unknown key in the hello reply: the decoder's message quotes it.
        body = (
            "import json, sys\n"
            "sys.stdin.readline()\n"
            f"print(json.dumps({{'type': 'hello', 'protocol': 1, {evil!r}: 1}}), flush=True)\n"
            "sys.stdin.readline()\n"
        )
    script.write_text(body)
    code, err = _run(
        _config(tmp_path, f"command: [{sys.executable}, {script}]"), tmp_path / "out", capsys
    )
    assert code == 2
    assert "\x1b" not in err and "\x07" not in err
    assert "\\x1b]0;owned\\x07" in err
    # The bot's newline is escaped too: one line for the broken engine, none forged.
    starts = [ln for ln in err.splitlines() if "cannot start" in ln]
    assert len(starts) == 1
    assert starts[0].startswith("ecarte tournament: error: engine 'broken' cannot start")
