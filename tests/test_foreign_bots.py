"""The bots in other languages (engines/c, engines/js) play real games through the arbiter.

They were written from PROTOCOL.md alone; these tests prove that the document is
enough.  The C bot is compiled with the system C compiler, the JS bot runs under
``node``.  A missing toolchain is a failure, not a skip: CI has both.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from arbiter.bot import BotCommand
from arbiter.check import check_bot
from arbiter.game import GameSpec, TimeSettings, play_game
from arbiter.record import GameRecord, rereferee
from arbiter.rules import make_rules
from arbiter.session import BotSession
from tests.test_sandbox import needs_sandbox

ROOT = Path(__file__).resolve().parents[1]
C_SOURCE = ROOT / "engines" / "c" / "bot.c"
JS_SOURCE = ROOT / "engines" / "js" / "bot.js"
RANDOM_ARGV = [sys.executable, "-m", "engines.random.bot"]
GAMES = 10


def _require(program: str, *alternatives: str) -> str:
    for name in (program, *alternatives):
        path = shutil.which(name)
        if path is not None:
            return path
    names = " or ".join(repr(n) for n in (program, *alternatives))
    pytest.fail(
        f"{names} not found on PATH: it is required to test the foreign bots", pytrace=False
    )


@pytest.fixture(scope="module")
def c_bot(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """Compile engines/c/bot.c into a temporary directory; the argv that runs it."""
    cc = _require("cc", "gcc")
    out = tmp_path_factory.mktemp("c-bot") / "ecarte-c"
    out.parent.chmod(0o755)  # a root arena runs it sandboxed as nobody
    cmd = [cc, "-O2", "-std=c11", "-Wall", "-Wextra", "-o", str(out), str(C_SOURCE)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
    if proc.returncode != 0:
        pytest.fail(f"compiling the C bot failed:\n{' '.join(cmd)}\n{proc.stderr}", pytrace=False)
    if proc.stderr.strip():
        pytest.fail(f"the C bot compiles with warnings:\n{proc.stderr}", pytrace=False)
    return [str(out)]


@pytest.fixture(scope="module")
def js_bot() -> list[str]:
    """The argv that runs engines/js/bot.js."""
    return [_require("node", "nodejs"), str(JS_SOURCE)]


async def _play_match(
    argv: list[str], tmp_path: Path, *, preset: str = "default", games: int = GAMES
) -> list[GameRecord]:
    """Play ``games`` games of the foreign bot against random, seats alternating."""
    rules = make_rules(preset)
    records: list[GameRecord] = []
    async with trio.open_nursery() as nursery:
        foreign = BotSession(
            "foreign",
            BotCommand(argv, cwd=str(ROOT)),
            nursery,
            log_path=tmp_path / "foreign.stderr.log",
        )
        rand = BotSession(
            "random",
            BotCommand(RANDOM_ARGV, cwd=str(ROOT)),
            nursery,
            options={"seed": 3},
            log_path=tmp_path / "random.stderr.log",
        )
        try:
            for i in range(games):
                seat = i % 2
                pair = (foreign, rand) if seat == 0 else (rand, foreign)
                spec = GameSpec(
                    game_id=i + 1,
                    engines=(pair[0].name, pair[1].name),
                    rules=rules,
                    seed=20240611,
                    deal_set=i // 2 + 1,
                    first_dealer=(i // 2) % 2,
                    pair_id=f"p{i // 2 + 1}",
                    match="foreign~random",
                    time=TimeSettings(per_move_ms=2000),
                )
                records.append(await play_game(spec, pair))
        finally:
            with trio.CancelScope(shield=True):
                await foreign.stop()
                await rand.stop()
    return records


def _check(records: list[GameRecord], tmp_path: Path, bot_name: str) -> None:
    log = tmp_path / "foreign.stderr.log"
    stderr = log.read_text(errors="replace") if log.exists() else ""
    assert len(records) == GAMES
    for rec in records:
        term = rec.termination
        assert term.reason == "normal", (
            f"game {rec.game_id} ended with {term.reason} (offender seat {term.offender}): "
            f"{term.detail}; line {term.line!r}\nforeign bot stderr:\n{stderr}"
        )
        assert not rec.corrupted
        assert max(rec.scores) >= rec.rules.target
        foreign_seat = rec.engines.index("foreign")
        assert rec.info[foreign_seat].bot_name == bot_name
        rereferee(rec)  # raises RecordError if the record does not replay


@pytest.mark.parametrize("preset", ["default", "cavendish"])
async def test_c_bot_plays_random(c_bot: list[str], tmp_path: Path, preset: str) -> None:
    records = await _play_match(c_bot, tmp_path, preset=preset)
    _check(records, tmp_path, "c-simple")


@pytest.mark.parametrize("preset", ["default", pytest.param("cavendish", marks=pytest.mark.slow)])
async def test_js_bot_plays_random(js_bot: list[str], tmp_path: Path, preset: str) -> None:
    records = await _play_match(js_bot, tmp_path, preset=preset)
    _check(records, tmp_path, "js-simple")


# Lines the arbiter may send in a compatible revision of version 1 (§1.2, §2.5): unknown
# message types, unknown fields at any depth, escapes a compact encoder may produce.
_TOLERANCE_SESSION = [
    {"type": "hello", "protocol": 1, "options": {"seed": 7, "x": None}, "motd": "h\u00e9llo"},
    {"type": "banner", "text": 'line\nbreak "quoted" \\ \U0001f600', "n": [1, 2.5, -3e2]},
    {"type": "new_game", "game": "g", "seat": 0, "future": {"a": [{"b": [True, False, None]}]}},
    {
        "type": "request",
        "id": 41,
        "time_ms": 1000,
        "clock_ms": None,
        "hint": {"deep": [[[]], {}]},
        "view": {
            "phase": "trick",
            "trump": "S",
            "turnup": "8S",
            "hand": ["9S", "7S", "TH", "8D", "7D"],
            "trick": ["TC"],
            "new_view_field": {"x": "\u0000"},
            "legal": ["7S", "9S"],
        },
    },
    {
        "type": "request",
        "id": 57,
        "time_ms": 1000,
        "clock_ms": 5000,
        "view": {
            "phase": "discard",
            "trump": "H",
            "turnup": "7H",
            "hand": ["KS", "QH", "8D", "7D", "9C"],
            "legal": ["discard KS QH 8D 7D 9C", "discard 8D 7D 9C", "discard 8D", "discard KS"],
        },
    },
    {
        "type": "request",
        "id": 58,
        "time_ms": 1000,
        "clock_ms": None,
        "view": {"phase": "some_future_phase", "legal": ["frobnicate"]},
    },
]


@pytest.mark.parametrize("which", ["c", "js"])
def test_foreign_bots_ignore_unknown_fields_and_messages(
    which: str, request: pytest.FixtureRequest
) -> None:
    argv: list[str] = request.getfixturevalue(f"{which}_bot")
    # ensure_ascii=False: raw UTF-8 on the wire; the surrogate pair stays escaped in the
    # "banner" line below because it is written by hand.
    lines = [json.dumps(m, ensure_ascii=False, separators=(",", ":")) for m in _TOLERANCE_SESSION]
    lines[1] = lines[1].replace("\U0001f600", "\\ud83d\\ude00")
    lines.insert(2, '{"type":"deal_end","deal":1,"tricks":[3,2],"unknown":{"type":"quit"}}')
    stdin = "".join(line + "\n" for line in lines) + '{"type":"quit"}\n'
    proc = subprocess.run(
        argv, input=stdin.encode(), capture_output=True, timeout=10, check=False, cwd=ROOT
    )
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out = [json.loads(line) for line in proc.stdout.decode().splitlines()]
    assert proc.stdout.endswith(b"\n")
    assert [m["type"] for m in out] == ["hello", "action", "action", "action"], out
    assert out[0]["protocol"] == 1
    assert set(out[0]) == {"type", "name", "author", "version", "protocol"}
    assert [(m["id"], m["action"]) for m in out[1:]] == [
        (41, "7S"),  # the lowest card that wins the trick
        (57, "discard 8D 7D 9C"),  # keep the trump and the king
        (58, "frobnicate"),  # an unknown phase: still a legal action
    ]
    for m in out[1:]:
        assert set(m) == {"type", "id", "action"}


@pytest.mark.parametrize("which", ["c", "js"])
def test_foreign_bots_exit_on_eof(which: str, request: pytest.FixtureRequest) -> None:
    argv: list[str] = request.getfixturevalue(f"{which}_bot")
    stdin = b'{"type":"hello","protocol":1,"options":{}}\n'
    proc = subprocess.run(argv, input=stdin, capture_output=True, timeout=5, check=False)
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["type"] == "hello"


@needs_sandbox
@pytest.mark.parametrize("which", ["c", "js"])
async def test_foreign_bots_play_in_the_sandbox(which: str, request: pytest.FixtureRequest) -> None:
    """As a tournament runs them: locked in, as ``nobody`` when the arena is root (Node.js
    reads /etc/ssl/openssl.cnf at start, and exited when the sandbox's /etc was root's)."""
    argv: list[str] = request.getfixturevalue(f"{which}_bot")
    report = await check_bot(argv, games=2, sandbox="on", seed=5)
    assert report.warning is None
    assert report.games >= 2 and report.game_problems == (), report.game_problems
