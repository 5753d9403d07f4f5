"""Tests of protocol/sdk.py and the bundled random bot (in process and as real processes)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from arbiter.referee import Referee, seeded_decks
from arbiter.rules import make_rules
from engines.random.bot import RandomPlayer
from protocol.faults import FaultReason
from protocol.messages import (
    Action,
    BotHello,
    Forfeit,
    Hello,
    NewGame,
    Quit,
    Request,
    ToBot,
    decode_from_bot,
    encode,
)
from protocol.sdk import decode_leniently, run_bot

ROOT = Path(__file__).resolve().parents[1]


def first_request() -> tuple[list[bytes], Request]:
    """The lines a seat-1 bot receives up to its first request, and that request."""
    ref = Referee(
        rules=make_rules(),
        names=("a", "b"),
        game_id="g1",
        decks=seeded_decks(227, 1),
        first_dealer=0,
        time_ms=1000,
    )
    lines = [encode(m) for seat, m in ref.notices() if seat == 1]
    pending = ref.request()
    assert pending is not None and pending[0] == 1
    return [*lines, encode(pending[1])], pending[1]


def run(lines: list[bytes], **hooks: object) -> list[bytes]:
    """Run ``run_bot`` (first legal action) over ``lines``; return what it wrote."""
    out = io.BytesIO()
    run_bot(
        lambda request: request.legal[0],
        name="first",
        author="tests",
        version="0",
        stdin=io.BytesIO(b"".join(lines)),
        stdout=out,
        **hooks,  # type: ignore[arg-type]
    )
    return out.getvalue().splitlines(keepends=True)


def test_handshake_requests_and_quit() -> None:
    options: list[object] = []
    notices: list[ToBot] = []
    game, request = first_request()
    written = run(
        [encode(Hello(options={"seed": 5})), *game, encode(Quit()), b"this is never read\n"],
        on_hello=options.append,
        on_notice=notices.append,
    )
    assert [decode_from_bot(line) for line in written] == [
        BotHello(name="first", author="tests", version="0", protocol=1),
        Action(id=request.id, action=request.legal[0]),
    ]
    assert options == [{"seed": 5}]
    assert isinstance(notices[0], NewGame) and len(notices) == len(game) - 1


def test_end_of_input_ends_the_bot() -> None:
    assert run([encode(Hello())]) == [
        encode(BotHello(name="first", author="tests", version="0", protocol=1))
    ]


def test_forfeit_ends_the_bot() -> None:
    """README "Writing a bot": exit on forfeit, as on quit; the notice is still seen."""
    notices: list[ToBot] = []
    game, _ = first_request()
    forfeit = Forfeit(game="g1", reason=FaultReason.TIMEOUT, detail="no reply")
    written = run([encode(Hello()), game[0], encode(forfeit), *game[1:]], on_notice=notices.append)
    assert written == [encode(BotHello(name="first", author="tests", version="0", protocol=1))]
    assert notices[-1] == forfeit


def test_unknown_message_types_and_fields_are_ignored() -> None:
    game, request = first_request()
    data = json.loads(game[-1])
    data["hint"] = "from a future arbiter"
    data["view"]["mood"] = "calm"
    data["view"]["rules"]["new_option"] = 1
    data["view"]["events"].insert(1, {"type": "weather", "sky": "grey"})
    data["view"]["events"][0]["extra"] = [1, 2]
    newer = json.dumps(data).encode() + b"\n"
    lenient = decode_leniently(newer)
    assert lenient == request
    written = run([b'{"type":"ping","id":9}\n', b"\n", newer, b'{"type":"quit","why":"x"}\n'])
    assert [decode_from_bot(line) for line in written] == [
        Action(id=request.id, action=request.legal[0])
    ]
    assert decode_leniently(b'{"type":"quit","why":"done"}') == Quit()
    assert decode_leniently(b'{"type":"ping"}') is None
    assert decode_leniently(b"  \n") is None


def test_random_player_is_seeded() -> None:
    _, request = first_request()
    game = NewGame(
        game="g1",
        match="m",
        game_number=1,
        pair=None,
        seat=1,
        opponent="a",
        first_dealer=0,
        rules=make_rules(),
        time_ms=1000,
        clock_ms=None,
    )

    def choices(player: RandomPlayer, options: dict[str, object]) -> list[str]:
        player.hello(options)  # type: ignore[arg-type]
        player.notice(game)
        return [player.choose(request) for _ in range(12)]

    assert choices(RandomPlayer(), {"seed": 4}) == choices(RandomPlayer(4), {})
    assert choices(RandomPlayer(4), {"seed": 9}) == choices(RandomPlayer(4), {})
    assert choices(RandomPlayer(), {"seed": 4}) != choices(RandomPlayer(), {"seed": 5})
    assert set(choices(RandomPlayer(), {})) <= set(request.legal)


@pytest.mark.parametrize(
    "argv",
    [
        pytest.param([str(ROOT / "engines" / "random" / "bot.py"), "--seed", "3"], id="script"),
        pytest.param(["-m", "engines.random.bot"], id="module"),
    ],
)
def test_random_bot_process_speaks_the_protocol(argv: list[str]) -> None:
    ref = Referee(
        rules=make_rules(),
        names=("random", "other"),
        game_id="g1",
        decks=seeded_decks(227, 1),
        first_dealer=0,
        time_ms=1000,
    )
    proc = subprocess.Popen(
        [sys.executable, *argv],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    try:

        def send(line: bytes) -> None:
            assert proc.stdin is not None
            proc.stdin.write(line)
            proc.stdin.flush()

        send(encode(Hello(options={"seed": 1})))
        hello = decode_from_bot(proc.stdout.readline())
        assert isinstance(hello, BotHello) and hello.name == "random" and hello.protocol == 1
        answered = 0
        while answered < 4:
            for seat, message in ref.notices():
                if seat == 0:
                    send(encode(message))
            pending = ref.request()
            assert pending is not None
            seat, request = pending
            if seat == 0:
                send(encode(request))
                reply = decode_from_bot(proc.stdout.readline())
                answered += 1
            else:
                reply = Action(id=request.id, action=request.legal[0])
            assert isinstance(reply, Action) and reply.action in request.legal
            ref.submit(seat, reply)
        send(encode(Quit()))
        assert proc.wait(timeout=2) == 0
        assert proc.stdout.read() == b""
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdin.close()
        proc.stdout.close()
        assert proc.stderr is not None
        proc.stderr.close()


def test_print_in_a_bot_goes_to_stderr() -> None:
    code = (
        "from protocol.sdk import run_bot\n"
        "def choose(request):\n"
        "    print('thinking about', request.id)\n"
        "    return request.legal[0]\n"
        "run_bot(choose, name='chatty', author='tests', version='0')\n"
    )
    game, request = first_request()
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        input=b"".join([encode(Hello()), *game]),
        capture_output=True,
        timeout=5,
        check=False,
    )
    assert done.returncode == 0
    replies = [decode_from_bot(line) for line in done.stdout.splitlines()]
    assert replies[1:] == [Action(id=request.id, action=request.legal[0])]
    assert b"thinking about 1" in done.stderr


def test_random_bot_process_exits_at_end_of_input() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "engines" / "random" / "bot.py")],
        input=encode(Hello()),
        capture_output=True,
        timeout=5,
        check=False,
    )
    assert done.returncode == 0
    assert isinstance(decode_from_bot(done.stdout), BotHello)
