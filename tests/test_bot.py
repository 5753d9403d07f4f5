"""Tests of arbiter.bot against real, misbehaving bot processes (tests/bots/)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest
import trio

import arbiter.bot
from arbiter.bot import Bot, BotCommand, Direction, Limits, open_bot
from arbiter.faults import (
    ArbiterError,
    BotTimeout,
    Disconnected,
    FailedToStart,
    FaultReason,
    InvalidMessage,
    ResourceLimit,
)
from arbiter.sandbox import BotUser

BOTS = Path(__file__).parent / "bots"
SLACK_S = 4.0
"""What a loaded machine may add to a wait on a real process.  Upper bounds on elapsed
time only tell "at once" from a deadline at least twice as far away, so they survive
a busy CI runner; the lower bounds are exact."""


def bot_command(script: str, *args: str) -> BotCommand:
    return BotCommand([sys.executable, str(BOTS / f"{script}.py"), *args])


def live_members(pgid: int) -> list[int]:
    """Non-zombie processes of group ``pgid``, from /proc (PID 1 may not reap zombies)."""
    members = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()
        if int(fields[2]) == pgid and fields[0] not in (b"Z", b"X"):
            members.append(int(entry))
    return members


def is_alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def assert_group_gone(bot: Bot) -> None:
    assert bot.returncode is not None
    assert live_members(bot.pgid) == []


# -- round trips and the line reader -----------------------------------------------------


async def test_echo_round_trip() -> None:
    async with open_bot(bot_command("echo"), name="echo", log_path=None) as bot:
        assert bot.pgid == bot.pid == os.getpgid(bot.pid)
        assert bot.pgid != os.getpgrp()
        for i in range(20):
            reply, elapsed = await bot.request(b"ping %d" % i, timeout=5)
            assert reply == b"ping %d" % i
            assert 0 <= elapsed < 5
    assert bot.returncode == 0  # stdin closed: the echo bot exits by itself
    assert_group_gone(bot)


async def test_send_then_receive_and_transcript() -> None:
    lines: list[tuple[Direction, bytes]] = []
    async with open_bot(
        bot_command("echo"),
        name="echo",
        log_path=None,
        transcript=lambda d, line: lines.append((d, line)),
        quit_line=b"quit",
    ) as bot:
        await bot.send(b"a", deadline=trio.current_time() + 5)
        assert await bot.receive(deadline=trio.current_time() + 5) == b"a"
    assert lines == [
        (Direction.TO_BOT, b"a"),
        (Direction.FROM_BOT, b"a"),
        (Direction.TO_BOT, b"quit"),
    ]
    assert bot.returncode == 0


async def test_crlf_is_stripped() -> None:
    async with open_bot(bot_command("echo", "--crlf"), name="crlf", log_path=None) as bot:
        assert (await bot.request(b"x", timeout=5))[0] == b"x"


async def test_line_in_pieces() -> None:
    async with open_bot(bot_command("chunked"), name="chunked", log_path=None) as bot:
        assert (await bot.request(b"go", timeout=5))[0] == b"hello world"
        assert (await bot.request(b"go", timeout=5))[0] == b"hello world"


@pytest.mark.parametrize(
    ("line", "ok"),
    [
        pytest.param(b"x" * 10, True, id="at-limit"),
        pytest.param(b"x" * 10 + b"\r", True, id="at-limit-crlf"),
        pytest.param(b"x" * 11, False, id="over-limit-whole"),
    ],
)
async def test_line_limit_on_whole_lines(line: bytes, ok: bool) -> None:
    async with open_bot(bot_command("echo"), name="echo", log_path=None, max_line=10) as bot:
        if ok:
            assert (await bot.request(line, timeout=5))[0] == b"x" * 10
        else:
            with pytest.raises(InvalidMessage, match="line longer than 10 bytes"):
                await bot.request(line, timeout=5)


async def test_ten_megabyte_line_is_cut_off() -> None:
    async with open_bot(bot_command("big_line"), name="big", log_path=None, grace=0.1) as bot:
        with pytest.raises(InvalidMessage, match="line longer than 65536 bytes") as info:
            await bot.request(b"go", timeout=5)
        assert info.value.reason is FaultReason.INVALID_MESSAGE
        assert info.value.line == b"x" * 200
        # The reader stopped at the cap plus one read, not at 10 MB.
        assert len(bot._buffer) <= 65536 + 1 + 65536
        # Broken: later calls raise the same fault again.
        with pytest.raises(InvalidMessage, match="line longer"):
            await bot.request(b"again", timeout=5)
    assert_group_gone(bot)


async def test_newline_in_outgoing_line_is_an_arbiter_error() -> None:
    async with open_bot(bot_command("echo"), name="echo", log_path=None) as bot:
        with pytest.raises(ArbiterError):
            await bot.request(b"a\nb", timeout=5)
        assert bot.fault is None
        assert (await bot.request(b"ok", timeout=5))[0] == b"ok"


# -- timeouts ---------------------------------------------------------------------------


async def test_reply_timeout() -> None:
    async with open_bot(bot_command("sleep_forever"), name="mute", log_path=None, grace=0.1) as bot:
        start = trio.current_time()
        with pytest.raises(BotTimeout, match="no reply within") as info:
            await bot.request(b"ping", timeout=0.2)
        assert 0.2 <= trio.current_time() - start < 0.2 + SLACK_S
        assert info.value.reason is FaultReason.TIMEOUT
        with pytest.raises(BotTimeout):
            await bot.request(b"ping", timeout=5)
    assert_group_gone(bot)


async def test_send_timeout_when_bot_does_not_read() -> None:
    async with open_bot(bot_command("sleep_forever"), name="mute", log_path=None, grace=0.1) as bot:
        with pytest.raises(BotTimeout, match="did not read its input"):
            # Far more than a pipe holds: send_all blocks until the deadline.
            await bot.send(b"x" * 4_000_000, deadline=trio.current_time() + 0.2)
        with pytest.raises(BotTimeout):
            await bot.receive(deadline=trio.current_time() + 5)


# -- disconnection and exit ---------------------------------------------------------------


async def test_close_stdout_is_reported_at_once() -> None:
    async with open_bot(bot_command("close_stdout"), name="cs", log_path=None, grace=0.1) as bot:
        start = trio.current_time()
        with pytest.raises(Disconnected, match="closed its stdout while still running"):
            await bot.request(b"go", timeout=2 * SLACK_S)
        assert trio.current_time() - start < SLACK_S
        assert bot.returncode is None
    assert_group_gone(bot)


@pytest.mark.parametrize(
    ("arg", "description"),
    [("3", "exited with code 3"), ("segv", "killed by SIGSEGV")],
)
async def test_crash_after_reply(arg: str, description: str) -> None:
    async with open_bot(bot_command("crash", arg), name="crash", log_path=None) as bot:
        assert (await bot.request(b"hi", timeout=5))[0] == b"bye"
        with pytest.raises(Disconnected, match=description):
            await bot.request(b"again", timeout=5)
        assert bot.exit_description() == description


async def test_leader_exit_while_grandchild_holds_stdout() -> None:
    async with open_bot(bot_command("grandchild", "exit"), name="gc", log_path=None) as bot:
        grandchild = int((await bot.request(b"pid?", timeout=5))[0])
        assert is_alive(grandchild)
        start = trio.current_time()
        # The leader exits without replying; stdout stays open in the grandchild,
        # so only the exit watcher can tell.
        with pytest.raises(Disconnected, match="exited with code 0"):
            await bot.request(b"exit", timeout=2 * SLACK_S)
        assert trio.current_time() - start < SLACK_S
    assert not is_alive(grandchild)
    assert_group_gone(bot)


async def test_unrequested_line() -> None:
    async with open_bot(bot_command("unrequested"), name="chatty", log_path=None) as bot:
        assert (await bot.request(b"one", timeout=5))[0] == b"one"
        with pytest.raises(InvalidMessage, match="unrequested line") as info:
            await bot.request(b"two", timeout=5)
        assert info.value.line == b"extra"


# -- starting -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        pytest.param(BotCommand(["/nonexistent/bot"]), id="missing"),
        pytest.param(BotCommand([str(BOTS / "echo.py")]), id="not-executable"),
        pytest.param(BotCommand([sys.executable], cwd="/nonexistent"), id="bad-cwd"),
    ],
)
async def test_failed_to_start(command: BotCommand, tmp_path: Path) -> None:
    with pytest.raises(FailedToStart) as info:  # a plain exception, not a group
        async with open_bot(command, name="bad", log_path=tmp_path / "bad.log"):
            pytest.fail("started")
    assert info.value.reason is FaultReason.FAILED_TO_START


async def test_env_and_cwd(tmp_path: Path) -> None:
    script = (
        "import os, sys; sys.stdin.readline(); print(os.getcwd(), os.environ['BOT_X'], flush=True)"
    )
    command = BotCommand([sys.executable, "-c", script], cwd=str(tmp_path), env={"BOT_X": "42"})
    async with open_bot(command, name="env", log_path=None) as bot:
        assert (await bot.request(b"", timeout=5))[0] == f"{tmp_path} 42".encode()


@pytest.mark.parametrize("error", [KeyError, KeyboardInterrupt])
async def test_body_exception_is_not_wrapped(error: type[BaseException]) -> None:
    with pytest.raises(error):
        async with open_bot(bot_command("ignore_term"), name="it", log_path=None, grace=0.1) as bot:
            await bot.request(b"ready?", timeout=5)
            raise error("mine")
    assert_group_gone(bot)


# -- stderr ---------------------------------------------------------------------------------


async def test_stderr_flood_is_drained_and_capped_with_visible_markers(tmp_path: Path) -> None:
    log = tmp_path / "flood.log"
    async with open_bot(
        bot_command("stderr_flood"), name="flood", log_path=log, stderr_cap=100_000
    ) as bot:
        assert (await bot.request(b"hi", timeout=10))[0] == b"hi"
        pid = bot.pid
    lines = log.read_bytes().split(b"\n")
    prefix = f"[pid {pid}] ".encode()
    assert all(line.startswith(prefix) for line in lines[:-1]) and lines[-1] == b""
    logged = b"".join(line.removeprefix(prefix) for line in lines[:-3])
    assert set(logged) == {ord("e")}
    # The cap counts what is written, prefixes and newlines included, up to the byte.
    assert sum(len(line) + 1 for line in lines[:-3]) == 100_000
    assert lines[-3] == prefix + (
        b"[stderr cap of 100000 bytes reached: the rest of this process's stderr is dropped]"
    )
    dropped = 100 * 1_048_576 - len(logged)
    assert lines[-2] == prefix + (
        f"[stderr: {dropped} bytes dropped after the cap of 100000 bytes]".encode()
    )


@pytest.mark.parametrize("flood", [b"\\n", b"\\x1b"], ids=["empty-lines", "escapes"])
async def test_the_stderr_cap_counts_what_is_written(flood: bytes, tmp_path: Path) -> None:
    """Each line gets a prefix and each control byte is written as four: a bot's empty
    lines or escape bytes must not multiply its share of the disk."""
    log = tmp_path / "flood.log"
    script = (
        "import sys\n"
        f"sys.stderr.buffer.write({flood.decode()!r}.encode() * 200_000)\n"
        "sys.stderr.flush()\n"
        "sys.stdout.write(sys.stdin.readline()); sys.stdout.flush()\n"
    )
    command = BotCommand([sys.executable, "-c", script])
    async with open_bot(command, name="flood", log_path=log, stderr_cap=10_000) as bot:
        assert (await bot.request(b"hi", timeout=10))[0] == b"hi"
    said = log.read_bytes()
    assert said.count(b"dropped") == 2  # the two markers
    markers = said.split(b"\n")[-3:]
    assert len(said) - sum(len(m) + 1 for m in markers[:2]) <= 10_000
    assert b"\x1b" not in said


async def test_an_engines_log_file_stops_growing_at_its_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A process per game cannot fill the disk one process cap at a time: once the file
    is past LOG_FILE_CAP, later processes add their marker lines only."""
    monkeypatch.setattr(arbiter.bot, "LOG_FILE_CAP", 150_000)
    log = tmp_path / "flood.log"
    for _ in range(3):
        async with open_bot(
            bot_command("stderr_flood"), name="flood", log_path=log, stderr_cap=100_000
        ) as bot:
            assert (await bot.request(b"hi", timeout=10))[0] == b"hi"
            pid = bot.pid
    size = log.stat().st_size
    assert 150_000 < size < 150_000 + 100_000 + 2_000
    prefix = f"[pid {pid}] ".encode()
    # The last process logged nothing but its two markers (the lines of the processes
    # may end in any order: each one's drain closes on its own schedule).
    assert [line for line in log.read_bytes().split(b"\n") if line.startswith(prefix)] == [
        prefix + b"[this engine's log reached its cap of 150000 bytes: the rest of this "
        b"process's stderr is dropped]",
        prefix
        + f"[stderr: {100 * 1_048_576} bytes dropped after the log's cap of 150000 bytes]".encode(),
    ]


async def test_stderr_lines_name_the_process_and_its_context(tmp_path: Path) -> None:
    """Two processes sharing one log: every line says which process, in which game."""
    log = tmp_path / "shared.log"
    script = (
        "import sys\n"
        "for line in sys.stdin:\n"
        "    sys.stderr.write('got ' + line); sys.stderr.flush()\n"
        "    sys.stderr.write('half a '); sys.stderr.flush()\n"
        "    sys.stderr.write('line\\n'); sys.stderr.flush()\n"
        "    print(line.strip(), flush=True)\n"
    )
    command = BotCommand([sys.executable, "-c", script])
    async with (
        open_bot(command, name="a", log_path=log) as a,
        open_bot(command, name="b", log_path=log) as b,
    ):
        a.log_context = "game 7"
        assert (await a.request(b"one", timeout=10))[0] == b"one"
        b.log_context = "game 8"
        assert (await b.request(b"two", timeout=10))[0] == b"two"
        await trio.sleep(0.2)  # let the drains catch up before the processes stop
    lines = set(log.read_text().splitlines())
    assert lines == {
        f"[game 7 pid {a.pid}] got one",
        f"[game 7 pid {a.pid}] half a line",
        f"[game 8 pid {b.pid}] got two",
        f"[game 8 pid {b.pid}] half a line",
    }


async def test_stderr_below_cap_is_logged_whole(tmp_path: Path) -> None:
    log = tmp_path / "small.log"
    script = "import sys; sys.stderr.write('thinking\\n'); sys.stderr.flush(); sys.stdin.readline()"
    async with open_bot(BotCommand([sys.executable, "-c", script]), name="s", log_path=log) as bot:
        pass
    assert log.read_bytes() == f"[pid {bot.pid}] thinking\n".encode()


async def test_control_characters_in_stderr_are_logged_escaped(tmp_path: Path) -> None:
    """Shown with ``cat``, a log cannot clear the terminal or overwrite a line's prefix."""
    log = tmp_path / "evil.log"
    text = "\x1b[2J\x1b]0;title\x07cleared\rforged\tcol\u009b2J caf\u00e9 \u202eevil\r\nnext\n"
    # A lone 0x9b byte (no UTF-8): the control sequence introducer of 8-bit terminals.
    script = (
        f"import sys; sys.stderr.write({text!r}); sys.stderr.flush(); "
        "sys.stderr.buffer.write(bytes([0x9b]) + b'1m\\n'); sys.stderr.flush(); "
        "sys.stdin.readline()"
    )
    async with open_bot(BotCommand([sys.executable, "-c", script]), name="s", log_path=log) as bot:
        pass
    assert (
        log.read_bytes()
        == (
            f"[pid {bot.pid}] \\x1b[2J\\x1b]0;title\\x07cleared\\x0dforged\tcol\\xc2\\x9b2J "
            f"caf\u00e9 \\xe2\\x80\\xaeevil\n[pid {bot.pid}] next\n[pid {bot.pid}] \\x9b1m\n"
        ).encode()
    )


# -- stopping -----------------------------------------------------------------------------


async def test_stop_kills_bot_that_ignores_sigterm() -> None:
    async with open_bot(bot_command("ignore_term"), name="stubborn", log_path=None) as bot:
        assert (await bot.request(b"ready?", timeout=5))[0] == b"ready"
        start = trio.current_time()
        code = await bot.stop(b"quit", grace=0.1, term_grace=0.1)
        assert 0.2 <= trio.current_time() - start < 0.2 + SLACK_S
        assert code == -signal.SIGKILL
        assert bot.exit_description() == "killed by SIGKILL"
        assert_group_gone(bot)
        with pytest.raises(ArbiterError):
            await bot.request(b"more", timeout=1)


@pytest.mark.parametrize("mode", ["exit", "idle"])
async def test_stop_kills_grandchild(mode: str) -> None:
    async with open_bot(
        bot_command("grandchild", mode), name="gc", log_path=None, grace=0.1
    ) as bot:
        grandchild = int((await bot.request(b"pid?", timeout=5))[0])
        assert os.getpgid(grandchild) == bot.pgid
    assert not is_alive(grandchild)
    assert_group_gone(bot)


async def test_cancellation_reaps_everything() -> None:
    with trio.move_on_after(0.5) as scope:
        async with open_bot(
            bot_command("grandchild", "idle"), name="gc", log_path=None, grace=0.1
        ) as bot:
            grandchild = int((await bot.request(b"pid?", timeout=5))[0])
            await bot.request(b"never answered", timeout=60)
    assert scope.cancelled_caught
    assert not is_alive(grandchild)
    assert_group_gone(bot)


# -- resource limits ------------------------------------------------------------------------


async def test_memory_limit(tmp_path: Path) -> None:
    async with open_bot(
        bot_command("memory_hog"),
        name="hog",
        log_path=tmp_path / "hog.log",
        limits=Limits(memory_mb=128),
    ) as bot:
        with pytest.raises(ResourceLimit, match="memory limit of 128 MB exceeded") as info:
            await bot.request(b"eat", timeout=10)
        assert info.value.reason is FaultReason.RESOURCE_LIMIT
    assert b"MemoryError" in (tmp_path / "hog.log").read_bytes()


@pytest.mark.parametrize(
    ("stderr", "charged"),
    [
        (b"  pid = os.fork()\nBlockingIOError: [Errno 11] Resource temporarily unavailable", True),
        (b"RuntimeError: can't start new thread", True),
        (b"java.lang.OutOfMemoryError: unable to create native thread", True),
        (
            b"data = sock.recv(4096)\nBlockingIOError: [Errno 11] Resource temporarily unavailable",
            False,
        ),
        (b"ValueError: bad card", False),
    ],
)
def test_a_process_limit_death_is_told_by_what_the_bot_says(stderr: bytes, charged: bool) -> None:
    """EAGAIN is also a non-blocking read's answer: only near a call that starts a process
    or thread does it say the cap was met."""
    assert arbiter.bot._says_no_process(stderr) is charged


@pytest.mark.parametrize("field", ["memory_mb", "cpu_seconds"])
def test_limits_must_be_positive(field: str) -> None:
    with pytest.raises(ValueError, match=f"Limits.{field} must be positive"):
        Limits(**{field: 0})


async def test_memory_error_without_limit_is_a_disconnect() -> None:
    script = "import sys; sys.stdin.readline(); raise MemoryError"
    async with open_bot(BotCommand([sys.executable, "-c", script]), name="m", log_path=None) as bot:
        with pytest.raises(Disconnected, match="exited with code 1"):
            await bot.request(b"x", timeout=5)


@pytest.mark.slow
async def test_cpu_limit() -> None:
    async with open_bot(
        bot_command("cpu_hog"), name="spin", log_path=None, limits=Limits(cpu_seconds=1)
    ) as bot:
        with pytest.raises(ResourceLimit, match="CPU time limit of 1 s exceeded"):
            await bot.request(b"spin", timeout=10)
        assert bot.returncode in (-signal.SIGXCPU, -signal.SIGKILL)


# -- the user a bot runs as --------------------------------------------------------------

# Run as root, the arena can switch a bot to another user; otherwise only to its own.
SWITCH_TO = (
    BotUser("nobody", 65534, 65534)
    if os.geteuid() == 0
    else BotUser("me", os.getuid(), os.getgid())
)


async def test_an_unsandboxed_bot_runs_as_its_user_with_no_other_group() -> None:
    script = 'read x; echo "$(id -u) $(id -g) [$(id -G)]"; read y'
    command = BotCommand(["/bin/sh", "-c", script], cwd="/", user=SWITCH_TO)
    async with open_bot(command, name="sh", log_path=None) as bot:
        reply, _ = await bot.request(b"who", timeout=5)
    assert reply.decode() == f"{SWITCH_TO.uid} {SWITCH_TO.gid} [{SWITCH_TO.gid}]"


def test_a_bot_switched_to_another_user_still_dies_with_the_arbiter(tmp_path: Path) -> None:
    """The death signal is set after the change of user, which would clear it."""
    pid_file = tmp_path / "pid"
    arbiter_code = (
        "import sys, trio\n"
        "from arbiter.bot import BotCommand, open_bot\n"
        "from arbiter.sandbox import BotUser\n"
        f"user = BotUser('u', {SWITCH_TO.uid}, {SWITCH_TO.gid})\n"
        "command = BotCommand(['/bin/sh', '-c', 'echo $$; exec sleep 60'], cwd='/', user=user)\n"
        "async def main():\n"
        "    async with open_bot(command, name='sh', log_path=None) as bot:\n"
        f"        open({str(pid_file)!r}, 'w').write(str(bot.pid))\n"
        "        await trio.sleep(60)\n"
        "trio.run(main)\n"
    )
    import subprocess
    import time

    arbiter = subprocess.Popen([sys.executable, "-c", arbiter_code], cwd=Path(__file__).parents[1])
    try:
        deadline = time.monotonic() + 20
        while not pid_file.exists() or not pid_file.read_text():
            assert time.monotonic() < deadline and arbiter.poll() is None
            time.sleep(0.02)
        pid = int(pid_file.read_text())
        assert is_alive(pid)
        assert Path(f"/proc/{pid}/status").read_text().count(f"\t{SWITCH_TO.uid}\t") >= 1
    finally:
        arbiter.kill()
        arbiter.wait()
    deadline = time.monotonic() + SLACK_S
    while is_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert not is_alive(pid)
