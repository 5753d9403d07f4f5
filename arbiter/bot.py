"""One bot process under trio: spawn, line reader, deadlines, stderr, stop and kill.

This layer knows nothing of the protocol; it moves lines of bytes.  Everything a
bot can do wrong here ends in a :class:`~arbiter.faults.BotFault`; everything
the caller can do wrong is an :class:`~arbiter.faults.ArbiterError`.

Lifecycle
    :func:`open_bot` starts the process in a new session (so it leads its own
    process group and Ctrl+C reaches only the arbiter) inside a nursery it owns,
    next to a task that drains stderr.  Leaving the ``async with`` block, for
    any reason, runs :meth:`Bot.stop` shielded, so no process of the group
    survives the block.

Reading lines
    trio has no ``readline``.  The reader keeps one buffer and remembers where
    its last scan for ``\\n`` stopped, so a line that arrives in many chunks is
    scanned once.  The length cap is enforced in both cases: when no newline has
    arrived yet (the buffer never grows past the cap plus one read) and when a
    long line arrives whole.  A trailing ``\\r`` is stripped (bots written on
    Windows).

Deadlines
    Each exchange runs in one :class:`trio.CancelScope` whose deadline covers the
    send *and* the reply: ``send_all`` blocks once the bot stops reading and the
    pipe is full.  A cancelled send leaves the stream in an unknown state, so
    after any fault the bot is *broken*: every later call raises a copy of the
    same fault.  The task watching the process cancels that scope when the
    process exits, so a bot that dies while a grandchild holds its stdout open is
    reported at once rather than at the deadline.  EOF on stdout is reported at
    once too, even if the process keeps running.

Unrequested lines
    The protocol is strictly request/reply, so a bot must never write unless
    asked.  Before sending, :meth:`Bot.request` reads whatever is already
    waiting on the pipe (one non-blocking ``read``) and raises
    :class:`~arbiter.faults.InvalidMessage` if anything is there.  The check is
    best effort: a line written after that read but before the bot reads the
    request looks like the reply; the protocol layer must check that a reply
    fits the request.  :meth:`Bot.check_unrequested` runs the same check alone.

Stopping
    :meth:`Bot.stop` escalates and always reaps: quit line, close stdin, wait
    ``grace``; SIGTERM to the *group*, wait ``term_grace``; SIGKILL to the group;
    then one more ``killpg(SIGKILL)`` after the leader has exited, for
    grandchildren that ignore SIGTERM and hold the pipes open, and a short wait
    until no live member of the group is left.  A bot that calls ``setsid()``
    leaves the group and escapes; only cgroups contain that.

Resource limits (heuristic)
    :class:`Limits` are applied in the child with ``setrlimit``: ``RLIMIT_CPU``
    (soft ``n``, hard ``n + 1``: SIGXCPU, then SIGKILL a second later) and
    ``RLIMIT_AS``.  When limits were set and the bot is gone, the exit is
    classified as :class:`~arbiter.faults.ResourceLimit` if

    - a CPU limit was set and the process died of SIGXCPU, or of SIGKILL that
      the arbiter did not send (the hard limit, or the kernel OOM killer); or
    - a memory limit was set, the process did not exit with 0, and the last
      4 KiB of its stderr mention ``MemoryError``, ``std::bad_alloc``, ``out of
      memory`` or ``Cannot allocate memory``; or
    - the sandboxed command carries a process cap (:attr:`BotCommand.processes`, set
      by the sandbox, not here), the process did not exit with 0, and its stderr says
      it could not start a thread or a process (:data:`PROCESS_MARKERS`, or EAGAIN
      next to a word such as ``fork``).

    A bot that survives a failed allocation, or dies of it silently (a C bot that
    dereferences the NULL from ``malloc``), is reported as
    :class:`~arbiter.faults.Disconnected`.
"""

from __future__ import annotations

import ctypes
import errno
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from pathlib import Path
from typing import IO, Final

import trio

from arbiter.faults import (
    ArbiterError,
    BotFault,
    BotTimeout,
    Disconnected,
    FailedToStart,
    InvalidMessage,
    ResourceLimit,
)
from arbiter.sandbox import (
    WRAPPER_ENV,
    BotUser,
    SandboxPlan,
    data_fd,
    proc_stats,
    seccomp_filter,
    wrap_parts,
)
from protocol.messages import MAX_LINE_BYTES

__all__ = [
    "DEFAULT_STDERR_CAP",
    "Bot",
    "BotCommand",
    "Direction",
    "Limits",
    "Transcript",
    "open_bot",
    "traffic_dir",
]

DEFAULT_STDERR_CAP: Final = 1_000_000
"""How many bytes of a bot's stderr are written to its log file."""
LOG_FILE_CAP = 64_000_000
"""Bytes past which an engine's stderr log file takes no more output from any process (an
engine restarted for every game could otherwise fill the disk, one process cap at a time);
each process still gets its marker lines.  Not ``Final``: tests lower it."""

READ_SIZE: Final = 65536
STDERR_TAIL: Final = 4096
EXIT_WAIT: Final = 0.1
"""After EOF, how long to wait for the exit status that explains it."""
STDERR_WAIT: Final = 0.5
GROUP_WAIT: Final = 1.0
MEMORY_MARKERS: Final = (
    b"MemoryError",
    b"std::bad_alloc",
    b"out of memory",
    b"Cannot allocate memory",
    b"OOM",  # V8 (Node.js): "Fatal process OOM"
)
PROCESS_MARKERS: Final = (
    b"can't start new thread",  # Python
    b"native thread",  # the JVM: "unable to create native thread"
    b"failed to create new OS thread",  # Go
    b"pthread_create",
    b"failed to spawn thread",  # Rust
)
"""Words in a bot's last stderr that say it could not start a thread or a process."""
_EAGAIN_TEXT: Final = b"Resource temporarily unavailable"
_FORK_WORDS: Final = (b"fork", b"thread", b"spawn", b"clone", b"Popen")


def _says_no_process(tail: bytes) -> bool:
    """Whether ``tail`` (the end of a bot's stderr) says the bot could not start a process
    or thread: a known message, or EAGAIN near the name of a call that starts one (EAGAIN
    alone is also the answer of a non-blocking read)."""
    if any(marker in tail for marker in PROCESS_MARKERS):
        return True
    return _EAGAIN_TEXT in tail and any(word in tail for word in _FORK_WORDS)


class Direction(StrEnum):
    """The direction of a line in a transcript, python-chess style."""

    TO_BOT = ">>"
    """A line the arbiter sent to the bot."""

    FROM_BOT = "<<"
    """A line the bot wrote."""


Transcript = Callable[[Direction, bytes], None]
"""A callback that receives every line in and out, without its newline."""


@dataclass(frozen=True)
class BotCommand:
    """How to start a bot."""

    argv: list[str]
    """The program and its arguments; use an absolute interpreter path, not a shim."""

    cwd: str | None = None
    """The working directory, or ``None`` for the arbiter's."""

    env: dict[str, str] | None = None
    """Variables added on top of the arbiter's environment (or of :attr:`base_env`)."""

    base_env: dict[str, str] | None = None
    """The environment ``env`` is added to; ``None``: the arbiter's whole environment.
    Tournaments pass :func:`arbiter.sandbox.minimal_env` here."""

    sandbox: SandboxPlan | None = None
    """Run the process inside this sandbox (see :mod:`arbiter.sandbox`); ``None``: as is."""

    user: BotUser | None = None
    """Run the process as this user (the arbiter must be root); ``None``: the arbiter's."""

    own_namespace: bool = False
    """Give the sandboxed bot a user namespace of its own, where its share of the
    kernel's per-user counters is bounded; only with a :attr:`sandbox`, where
    :func:`arbiter.sandbox.process_cap` allows it."""

    processes: int | None = None
    """Cap on the processes and threads the sandboxed bot runs at once; only with
    :attr:`own_namespace`."""

    def environment(self) -> dict[str, str] | None:
        """The bot's whole environment; ``None`` when it is the arbiter's own, unchanged."""
        if self.env is None and self.base_env is None:
            return None
        base = os.environ if self.base_env is None else self.base_env
        return {**base, **(self.env or {})}

    def check_program(self) -> None:
        """Raise the error a spawn would give if the program cannot be executed:
        :class:`FileNotFoundError` (no such file, or not on the bot's ``PATH``),
        :class:`IsADirectoryError` or :class:`PermissionError` (not executable)."""
        program = self.argv[0]
        if "/" in program:
            path = str(Path(self.cwd or os.getcwd()) / program)  # drops a leading ./
            if not os.path.exists(path):
                raise FileNotFoundError(errno.ENOENT, "No such file or directory", path)
            if os.path.isdir(path):
                raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
            if not os.access(path, os.X_OK):
                raise PermissionError(errno.EACCES, "Permission denied", path)
            return
        search = (self.environment() or os.environ).get("PATH", os.defpath)
        if shutil.which(program, path=search) is None:
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", program)


@dataclass(frozen=True)
class Limits:
    """Kernel resource limits applied in the bot process (off by default)."""

    memory_mb: int | None = None
    """Address-space limit (``RLIMIT_AS``) in MiB."""

    cpu_seconds: int | None = None
    """CPU-time limit (``RLIMIT_CPU``) in seconds, over the whole life of the process."""

    def __post_init__(self) -> None:
        for field in ("memory_mb", "cpu_seconds"):
            value = getattr(self, field)
            if value is not None and value <= 0:
                raise ValueError(f"Limits.{field} must be positive, got {value}")


def _killpg(pgid: int, sig: signal.Signals) -> bool:
    """Signal a process group; False if it has no member left."""
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def _live_group_members(pgid: int) -> list[int]:
    """PIDs in process group ``pgid`` that are not zombies (Linux ``/proc``)."""
    if not os.path.isdir("/proc"):  # fall back to "is anyone, zombie or not, left?"
        return [pgid] if _killpg(pgid, signal.Signals(0)) else []
    return [
        pid for pid, state, _, group in proc_stats() if group == pgid and state not in (b"Z", b"X")
    ]


def _load_prctl() -> Callable[..., int] | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl: Callable[..., int] = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    return prctl


# Looked up once, in the parent: between fork and exec the child does as little as it can.
_PRCTL: Final = _load_prctl()
_PR_SET_PDEATHSIG: Final = 1

_LIVE: set[int] = set()
"""PIDs of bot processes started and not yet reaped (see :func:`live_pids`)."""


def live_pids() -> set[int]:
    """PIDs of the bot processes this arbiter started that have not been reaped yet."""
    return set(_LIVE)


def _child_setup(limits: Limits | None, parent: int) -> Callable[[], None]:
    """What runs in the child between fork and exec: the death signal, then the limits."""
    prctl = _PRCTL

    def apply() -> None:
        if prctl is not None:
            # Die with the arbiter, even when it is killed with SIGKILL.
            prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
            if os.getppid() != parent:  # the arbiter died before the line above
                os._exit(1)
        if limits is not None:
            if limits.memory_mb is not None:
                size = limits.memory_mb * 1024 * 1024
                resource.setrlimit(resource.RLIMIT_AS, (size, size))
            if limits.cpu_seconds is not None:
                cpu = limits.cpu_seconds
                resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))

    return apply


class _Child:
    """A started bot process: its PID, exit status and the arbiter's ends of its pipes."""

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        stdin: int,
        stdout: int,
        stderr: int,
        *,
        sandboxed: bool = False,
    ) -> None:
        self.popen = popen
        self.sandboxed = sandboxed
        self.pid = popen.pid
        self.stdin = trio.lowlevel.FdStream(stdin)
        self.stdout = trio.lowlevel.FdStream(stdout)
        self.stderr = trio.lowlevel.FdStream(stderr)

    @property
    def returncode(self) -> int | None:
        """The exit status once reaped (``-N``: killed by signal N)."""
        code = self.popen.returncode
        if self.sandboxed and code is not None and 128 < code < 128 + signal.NSIG:
            # bwrap exits with 128 + N when the bot dies of signal N, as a shell does.
            return 128 - code
        return code


def _closed_in_sandbox(read_fd: int, leader: int) -> bool:
    """Whether only bubblewrap still holds the write end of the pipe ``read_fd`` reads.

    A sandboxed bot's pipes are also open in bubblewrap's two processes (the monitor,
    ``leader``, and the namespace's init), so a bot that closes its stdout and goes on
    running never causes an end of file.  True when every process of the sandbox that
    holds the pipe is one of those two; False when any other does, or when a process's
    descriptors cannot be read (the bot made itself non-dumpable): then it is a timeout.
    """
    try:
        pipe = f"pipe:[{os.fstat(read_fd).st_ino}]"
    except OSError:
        return False
    children: dict[int, list[int]] = {}
    for pid, _, parent, _ in proc_stats():
        children.setdefault(parent, []).append(pid)
    wrappers = {leader, *children.get(leader, ())}  # monitor and init, both bwrap
    queue = [leader]
    while queue:
        pid = queue.pop()
        queue.extend(children.get(pid, ()))
        if pid in wrappers:
            continue
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
            if any(os.readlink(f"/proc/{pid}/fd/{fd}") == pipe for fd in fds):
                return False
        except FileNotFoundError:
            continue  # exited meanwhile
        except OSError:
            return False
    return True


def _spawn(command: BotCommand, limits: Limits | None) -> _Child:
    """Start the process from the calling thread (the event loop's), never a worker thread.

    ``PR_SET_PDEATHSIG`` (and bubblewrap's ``--die-with-parent``) fire when the *thread*
    that forked the child exits.  ``trio.run_process`` forks from a worker thread that
    is retired after ten idle seconds, which would kill healthy bots; the event loop's
    thread lives as long as the run.  Spawning blocks the loop for a millisecond or two.
    """
    env = command.environment()
    argv = list(command.argv)
    cwd = command.cwd
    if command.sandbox is not None:
        # bwrap would report these as its own exit status 1; say them as a spawn would.
        if cwd is not None and not os.path.isdir(cwd):
            raise FileNotFoundError(errno.ENOENT, "No such file or directory", cwd)
        command.check_program()
    fds: list[int] = []
    try:
        if command.sandbox is not None:
            # bwrap (and setpriv) run with more privileges than the bot: they get a
            # fixed environment, the bot's own is handed on in bwrap's arguments, which
            # come through a descriptor (values stay off every command line).
            fds.append(data_fd(seccomp_filter()))
            options, inner = wrap_parts(
                argv,
                cwd,
                command.sandbox,
                memory_mb=limits.memory_mb if limits is not None else None,
                user=command.user,
                seccomp_fd=fds[0],
                env=dict(os.environ) if env is None else env,
                own_namespace=command.own_namespace,
                processes=command.processes,
            )
            # The options through the descriptor; the command stays on the line, where
            # bwrap wants it.
            fds.append(data_fd(b"".join(a.encode() + b"\0" for a in options[1:])))
            argv = [options[0], "--args", str(fds[1]), "--", *inner]
            env = dict(WRAPPER_ENV)
        return _spawn_with(command, limits, argv, cwd, env, fds)
    finally:
        for fd in fds:
            os.close(fd)


def _spawn_with(
    command: BotCommand,
    limits: Limits | None,
    argv: list[str],
    cwd: str | None,
    env: dict[str, str] | None,
    fds: list[int],
) -> _Child:
    # Unsandboxed, the child switches users before exec (and before _child_setup runs,
    # so its death signal, which a change of user would clear, is set afterwards).
    switch = command.user if command.sandbox is None else None
    to_child = os.pipe()
    from_child = os.pipe()
    err_child = os.pipe()
    child_ends = (to_child[0], from_child[1], err_child[1])
    ours = (to_child[1], from_child[0], err_child[0])
    try:
        popen = subprocess.Popen(
            argv,
            stdin=to_child[0],
            stdout=from_child[1],
            stderr=err_child[1],
            cwd=cwd,
            env=env,
            start_new_session=True,
            preexec_fn=_child_setup(limits, os.getpid()),
            user=None if switch is None else switch.uid,
            group=None if switch is None else switch.gid,
            extra_groups=None if switch is None else [],
            pass_fds=tuple(fds),
        )
    except BaseException:
        for fd in ours:
            os.close(fd)
        raise
    finally:
        for fd in child_ends:
            os.close(fd)
    _LIVE.add(popen.pid)
    return _Child(popen, *ours, sandboxed=command.sandbox is not None)


async def _wait_exit(child: _Child) -> None:
    """Wait until the process has exited, and reap it."""
    popen = child.popen
    try:
        pidfd: int | None = os.pidfd_open(popen.pid)
    except (AttributeError, OSError):  # not Linux >= 5.3: poll
        pidfd = None
    try:
        while popen.poll() is None:
            if pidfd is None:
                await trio.sleep(0.01)
            else:
                await trio.lowlevel.wait_readable(pidfd)
    finally:
        if pidfd is not None:
            trio.lowlevel.notify_closing(pidfd)
            os.close(pidfd)
        if popen.returncode is not None:
            _LIVE.discard(popen.pid)


class _ExitWatch:
    """Shared between the task that runs the process and the bot that talks to it."""

    def __init__(self) -> None:
        self.exited = trio.Event()
        self.io_scope: trio.CancelScope | None = None

    async def run(
        self,
        command: BotCommand,
        limits: Limits | None,
        *,
        task_status: trio.TaskStatus[_Child] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        child = _spawn(command, limits)
        try:
            task_status.started(child)
            try:
                await _wait_exit(child)
            except BaseException:
                # Cancelled (the nursery is closing): the group, not only the leader.
                with trio.CancelScope(shield=True):
                    _killpg(child.pid, signal.SIGTERM)
                    with trio.move_on_after(1.0):
                        await _wait_exit(child)
                    _killpg(child.pid, signal.SIGKILL)
                    await _wait_exit(child)
                raise
        finally:
            self.exited.set()
            if self.io_scope is not None:
                self.io_scope.cancel()


class Bot:
    """A running bot process and its line streams; create it with :func:`open_bot`."""

    def __init__(
        self,
        *,
        name: str,
        proc: _Child,
        watch: _ExitWatch,
        limits: Limits | None,
        max_line: int,
        transcript: Transcript | None,
        processes: int | None = None,
    ) -> None:
        if proc.stdin is None or not isinstance(proc.stdout, trio.lowlevel.FdStream):
            raise ArbiterError("bot process started without pipes")
        self.name = name
        """The name used in messages about this bot."""
        self._proc = proc
        self._stdin = proc.stdin
        self._stdout = proc.stdout
        self._stdout_fd = proc.stdout.fileno()
        self._watch = watch
        self._limits = limits
        self._processes = processes
        self._max_line = max_line
        self._transcript = transcript
        self._buffer = bytearray()
        self._scan_from = 0
        self._eof = False
        self._busy = False
        self._fault: BotFault | None = None
        self._send_cancelled = False
        self._stdin_broken = False
        self._stopping = False
        self._stopped = False
        self._stderr_tail = bytearray()
        self._stderr_done = trio.Event()
        self.log_context = ""
        """What the bot is doing (``game 12``): the prefix of its stderr lines in the log."""
        self.ignored_quit = False
        """Set by :meth:`stop` when the bot was told to quit and had not exited within the
        grace period (it was then signalled)."""
        self.rewrite: Callable[[bytes], list[bytes]] | None = None
        """Turns each line of :meth:`request` and :meth:`send_many` into the lines sent
        (``ecarte check`` adds fields and messages a bot must ignore); None: unchanged."""

    def __repr__(self) -> str:
        return f"<Bot {self.name!r} pid={self.pid} {self.exit_description()}>"

    # -- process state ---------------------------------------------------------

    @property
    def pid(self) -> int:
        """The PID of the process the arbiter started."""
        return self._proc.pid

    @property
    def pgid(self) -> int:
        """The process group of the bot and its children (equal to :attr:`pid`)."""
        return self._proc.pid

    @property
    def returncode(self) -> int | None:
        """The exit status, ``-N`` for death by signal N, or ``None`` while running."""
        return self._proc.returncode

    @property
    def fault(self) -> BotFault | None:
        """The fault that broke this bot, or ``None``."""
        return self._fault

    @property
    def stderr_tail(self) -> bytes:
        """The last few KiB the bot wrote to stderr (all of it is in the log file)."""
        return bytes(self._stderr_tail[-STDERR_TAIL:])

    def exit_description(self) -> str:
        """How the process ended, e.g. ``"exited with code 3"``, ``"killed by SIGSEGV"``."""
        code = self.returncode
        if code is None:
            return "running"
        if code >= 0:
            return f"exited with code {code}"
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"

    # -- exchanges -------------------------------------------------------------

    async def request(
        self, line: bytes, *, timeout: float, preceding: list[bytes] | None = None
    ) -> tuple[bytes, float]:
        """Send ``line`` and return the reply line and the seconds the exchange took.

        ``timeout`` covers writing the request and reading the whole reply.
        ``preceding`` lines (notices) go out in the same write, just before ``line``.
        Raises :class:`~arbiter.faults.InvalidMessage` first if the bot had already
        written something unrequested.
        """
        self.check_unrequested()
        checked = False
        if self.rewrite is not None:
            rewritten = [out for one in [*(preceding or []), line] for out in self.rewrite(one)]
            preceding, line = rewritten[:-1], rewritten[-1]
        if preceding:
            if any(b"\n" in p for p in preceding):
                raise ArbiterError(f"a line for bot {self.name!r} contains a newline")
            if b"\n" in line:
                raise ArbiterError(f"line for bot {self.name!r} contains a newline: {line[:80]!r}")
            line = b"\n".join([*preceding, line])
            checked = True
        start = trio.current_time()
        reply = await self._exchange(line, start + timeout, reply=True, checked=checked)
        return reply, trio.current_time() - start

    async def send(self, line: bytes, *, deadline: float) -> None:
        """Send one line (the newline is added) before the trio-clock ``deadline``."""
        await self._exchange(line, deadline, reply=False)

    async def receive(self, *, deadline: float) -> bytes:
        """Return the next line from the bot, without newline, before ``deadline``.

        Use it for a line the bot sends first (a greeting) or after :meth:`send`;
        it does not check for unrequested lines.
        """
        return await self._exchange(None, deadline, reply=True)

    async def send_many(self, lines: list[bytes], *, deadline: float) -> None:
        """Send several lines in one write (notices), before the trio-clock ``deadline``."""
        if self.rewrite is not None:
            lines = [out for one in lines for out in self.rewrite(one)]
        if any(b"\n" in line for line in lines):
            raise ArbiterError(f"a line for bot {self.name!r} contains a newline")
        # One joined payload: each line still ends in "\n" once written.
        await self._exchange(b"\n".join(lines), deadline, reply=False, checked=True)

    async def send_farewell(self, line: bytes, *, timeout: float = 0.5) -> bool:
        """Best effort: write a last line (a forfeit notice) even to a faulted bot.

        Skipped, and False returned, when the bot's stdin cannot take it: the process
        has exited, a send failed or was cancelled midway, or the bot is stopping.
        Never raises a :class:`~arbiter.faults.BotFault`.
        """
        if (
            self._stopping
            or self._send_cancelled
            or self._stdin_broken
            or self._busy
            or self.returncode is not None
        ):
            return False
        with trio.move_on_after(timeout) as scope:
            try:
                await self._stdin.send_all(line + b"\n")
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return False
        if scope.cancelled_caught:
            self._send_cancelled = True
            return False
        if self._transcript is not None:
            self._transcript(Direction.TO_BOT, line)
        return True

    def check_unrequested(self) -> None:
        """Raise :class:`~arbiter.faults.InvalidMessage` if the bot wrote anything
        that has not been read yet (a line nobody asked for)."""
        self._check_usable()
        if not self._buffer:
            self._read_pending()
        if self._buffer:
            end = self._buffer.find(b"\n")
            line = bytes(self._buffer[: end if end >= 0 else 200])
            raise self._break(InvalidMessage("unrequested line", line=line))

    def _check_usable(self) -> None:
        if self._stopping:
            raise ArbiterError(f"bot {self.name!r} was used after stop()")
        if self._busy:
            raise ArbiterError(f"bot {self.name!r} was used by two tasks at once")
        if self._send_cancelled:
            raise ArbiterError(
                f"a send to bot {self.name!r} was cancelled midway; its stdin is unusable"
            )
        if self._fault is not None:
            raise self._fault.copy()

    def _break(self, fault: BotFault) -> BotFault:
        self._fault = fault
        return fault

    async def _exchange(
        self, line: bytes | None, deadline: float, *, reply: bool, checked: bool = False
    ) -> bytes:
        """Send ``line`` (if given), then read one line (if ``reply``), by ``deadline``."""
        if line is not None and not checked and b"\n" in line:
            raise ArbiterError(f"line for bot {self.name!r} contains a newline: {line[:80]!r}")
        self._check_usable()
        self._busy = True
        sending = line is not None
        start = trio.current_time()
        try:
            with trio.CancelScope(deadline=deadline) as scope:
                self._watch.io_scope = scope
                if self._watch.exited.is_set():
                    scope.cancel()  # handled below, as if the exit happened now
                if line is not None:
                    await self._send_line(line)
                    sending = False
                return await self._read_line() if reply else b""
            # Only reached when the scope was cancelled: deadline or process exit.
            if self._watch.exited.is_set():
                if reply and not sending:
                    # The bot may have written its reply just before exiting.
                    self._read_pending()
                    end = self._buffer.find(b"\n", self._scan_from)
                    if end >= 0:
                        return self._take_line(end)
                raise await self._gone_fault("stdin" if sending else "stdout")
            elapsed = trio.current_time() - start
            if sending:
                raise BotTimeout(f"did not read its input within {elapsed:.3f} s")
            partial = bytes(self._buffer) or None
            if self._proc.sandboxed and _closed_in_sandbox(self._stdout_fd, self._proc.pid):
                # No end of file came only because bubblewrap's processes hold the pipe.
                raise Disconnected("closed its stdout while still running", line=partial)
            raise BotTimeout(f"no reply within {elapsed:.3f} s", line=partial)
        except BotFault as fault:
            if sending:
                self._stdin_broken = True
            self._break(fault)
            raise
        except BaseException:
            # Cancelled from outside (or Ctrl+C): not the bot's fault, but a
            # half-written line cannot be taken back.
            if sending:
                self._send_cancelled = True
            raise
        finally:
            self._watch.io_scope = None
            self._busy = False

    async def _send_line(self, line: bytes) -> None:
        try:
            await self._stdin.send_all(line + b"\n")
        except trio.BrokenResourceError:
            raise await self._gone_fault("stdin") from None
        if self._transcript is not None:
            for part in line.split(b"\n"):
                self._transcript(Direction.TO_BOT, part)

    async def _read_line(self) -> bytes:
        buffer = self._buffer
        while True:
            end = buffer.find(b"\n", self._scan_from)
            if end >= 0:
                return self._take_line(end)
            if len(buffer) > self._max_line + 1:  # + 1: a "\r" may be waiting for its "\n"
                raise self._too_long()
            self._scan_from = len(buffer)
            if self._eof:
                raise await self._gone_fault("stdout")
            chunk = await self._receive_chunk()
            if chunk:
                buffer += chunk
            else:
                self._eof = True

    async def _receive_chunk(self) -> bytes:
        """``receive_some`` without its leading checkpoint (``send_all`` had one); b"" at EOF."""
        fd = self._stdout_fd
        while True:
            try:
                return os.read(fd, READ_SIZE)
            except BlockingIOError:
                await trio.lowlevel.wait_readable(fd)
            except OSError:
                return b""

    def _take_line(self, end: int) -> bytes:
        """Remove the line ending at ``self._buffer[end] == b"\\n"`` and return it."""
        buffer = self._buffer
        stop = end - 1 if end and buffer[end - 1] == 0x0D else end
        if stop > self._max_line:
            raise self._too_long()
        line = bytes(buffer[:stop])
        del buffer[: end + 1]  # cheap: bytearray moves its start instead of copying
        self._scan_from = 0
        if self._transcript is not None:
            self._transcript(Direction.FROM_BOT, line)
        return line

    def _too_long(self) -> InvalidMessage:
        return InvalidMessage(
            f"line longer than {self._max_line} bytes", line=bytes(self._buffer[:200])
        )

    def _read_pending(self) -> None:
        """Move what the bot has already written into the buffer, without blocking."""
        # The fd is non-blocking (trio's FdStream); reading it directly is safe as
        # long as no receive_some is running, which _busy guarantees.
        while not self._eof and len(self._buffer) <= self._max_line + 1:
            try:
                chunk = os.read(self._stdout_fd, READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                chunk = b""
            if not chunk:
                self._eof = True
                return
            self._buffer += chunk

    async def _gone_fault(self, stream: str) -> BotFault:
        """The fault for a closed pipe or an exited process, classified by exit status."""
        partial = bytes(self._buffer[:200]) or None
        memory_limited = self._limits is not None and self._limits.memory_mb is not None
        # Shielded and short: a deadline passing now must not turn this into a timeout.
        with trio.CancelScope(deadline=trio.current_time() + EXIT_WAIT, shield=True):
            await self._watch.exited.wait()
            if memory_limited or self._processes is not None:
                # the classification reads the end of stderr
                await self._stderr_done.wait()
        if not self._watch.exited.is_set():
            return Disconnected(f"closed its {stream} while still running", line=partial)
        limit_fault = self._resource_fault()
        if limit_fault is not None:
            return limit_fault
        return Disconnected(self.exit_description(), line=partial)

    def _resource_fault(self) -> ResourceLimit | None:
        limits, code = self._limits, self.returncode
        if code is None:
            return None
        tail = bytes(self._stderr_tail)
        if self._processes is not None and code != 0 and _says_no_process(tail):
            return ResourceLimit(
                f"process limit of {self._processes} processes and threads reached "
                f"({self.exit_description()})"
            )
        if limits is None:
            return None
        if limits.cpu_seconds is not None and (
            code == -signal.SIGXCPU or (code == -signal.SIGKILL and not self._stopping)
        ):
            return ResourceLimit(
                f"CPU time limit of {limits.cpu_seconds} s exceeded ({self.exit_description()})"
            )
        if (
            limits.memory_mb is not None
            and code != 0
            and any(marker in tail for marker in MEMORY_MARKERS)
        ):
            return ResourceLimit(
                f"memory limit of {limits.memory_mb} MB exceeded ({self.exit_description()})"
            )
        return None

    # -- shutdown --------------------------------------------------------------

    async def stop(
        self, quit_line: bytes | None = None, *, grace: float = 1.0, term_grace: float = 1.0
    ) -> int:
        """Stop the bot and every process in its group; return the leader's exit status.

        Escalates: send ``quit_line`` (if given and the bot is healthy), close
        stdin and wait ``grace`` seconds; SIGTERM the group and wait
        ``term_grace``; SIGKILL the group.  Then SIGKILL the group once more,
        whether or not the leader had exited, and wait (at most a second) until
        no live member is left.  Runs shielded from cancellation; idempotent.
        """
        with trio.CancelScope(shield=True):
            if not self._stopping:
                self._stopping = True
                await self._stop(quit_line, grace, term_grace)
                self._stopped = True
            await self._watch.exited.wait()
        code = self.returncode
        assert code is not None
        return code

    async def _stop(self, quit_line: bytes | None, grace: float, term_grace: float) -> None:
        exited = self._watch.exited
        healthy = not (self._busy or self._send_cancelled or exited.is_set())
        healthy = healthy and self._fault is None
        if quit_line is not None and healthy:
            with trio.move_on_after(grace):
                try:
                    await self._stdin.send_all(quit_line + b"\n")
                    if self._transcript is not None:
                        self._transcript(Direction.TO_BOT, quit_line)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    pass
        await self._stdin.aclose()
        with trio.move_on_after(grace):
            await exited.wait()
        if not exited.is_set():
            self.ignored_quit = quit_line is not None and healthy
            _killpg(self.pgid, signal.SIGTERM)
            with trio.move_on_after(term_grace):
                await exited.wait()
        if not exited.is_set():
            _killpg(self.pgid, signal.SIGKILL)
            await exited.wait()
        # Grandchildren that ignored SIGTERM (or were never signalled because the
        # leader exited on its own) may still hold the pipes open.  The group id
        # cannot be reused while any member is alive.
        if _killpg(self.pgid, signal.SIGKILL):
            with trio.move_on_after(GROUP_WAIT):
                while _live_group_members(self.pgid):
                    await trio.sleep(0.01)
                    _killpg(self.pgid, signal.SIGKILL)
        with trio.move_on_after(STDERR_WAIT):
            await self._stderr_done.wait()
        await self._stdout.aclose()

    async def _drain_stderr(
        self, stream: trio.abc.ReceiveStream, log: IO[bytes] | None, cap: int
    ) -> None:
        """Read stderr to EOF, always: an undrained pipe deadlocks a chatty bot.

        The first ``cap`` bytes go to ``log`` line by line, each line prefixed with
        :attr:`log_context` and the PID; what follows is dropped and counted, and marker
        lines say so when the cap is reached and, at the end, how much was dropped.
        """
        tail = self._stderr_tail
        writer = None if log is None else _LogWriter(self, log, cap)
        try:
            while True:
                try:
                    chunk = await stream.receive_some(READ_SIZE)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                if not chunk:
                    break
                tail += chunk
                if len(tail) > 2 * STDERR_TAIL:
                    del tail[:-STDERR_TAIL]
                if writer is not None:
                    writer.feed(chunk)
        finally:
            if writer is not None:
                writer.close()
            self._stderr_done.set()
            with trio.CancelScope(shield=True):
                await stream.aclose()


async def _close_at_exit(log: IO[bytes]) -> None:
    """Close ``log`` when the bot's nursery ends (it is cancelled once the bot is reaped)."""
    try:
        await trio.sleep_forever()
    finally:
        log.close()


class _LogWriter:
    """Writes one process's stderr to its (possibly shared) log, a whole line at a time.

    Several processes of one engine may append to the same file at once: each write
    holds complete lines only (``O_APPEND``, unbuffered), so their lines interleave but
    never mix, and the prefix tells them apart.
    """

    def __init__(self, bot: Bot, log: IO[bytes], cap: int) -> None:
        self.bot = bot
        self.log: IO[bytes] | None = log
        try:
            room = LOG_FILE_CAP - os.fstat(log.fileno()).st_size
        except OSError:
            room = cap
        # Other processes of the engine may be writing too: the file can end up to a
        # process cap per concurrent process over LOG_FILE_CAP, never more.
        self.file_full = room < cap
        self.cap = max(0, min(cap, room))
        self.written = 0
        """Bytes this process has put in the log, prefixes and escapes included: the cap
        counts these (a bot's 1 MB of empty lines or of control bytes would otherwise be
        written as 20 MB or 4 MB)."""
        self.dropped = 0
        """Bytes of the bot's stderr dropped after the cap."""
        self.partial = bytearray()
        """The start of a line whose newline has not arrived yet."""

    def prefix(self) -> bytes:
        context = self.bot.log_context
        return f"[{context + ' ' if context else ''}pid {self.bot.pid}] ".encode()

    def render(self, lines: bytes) -> bytes:
        """Complete lines of the bot's (each ends with a newline) as the log holds them:
        terminal-safe, each with the prefix."""
        prefix = self.prefix()
        return prefix + _log_safe(lines)[:-1].replace(b"\n", b"\n" + prefix) + b"\n"

    def write(self, data: bytes) -> None:
        """Append ``data`` (whole lines) to the file in one write."""
        if self.log is None or not data:
            return
        try:
            self.log.write(data)
        except OSError:
            self.close_file()  # disk full or similar: keep draining, stop logging

    def log_lines(self, lines: bytes, *, cut: bool = False) -> None:
        """Log complete lines of the bot's, as many as fit under the cap; drop the rest.
        ``cut``: the last newline is not the bot's (a long line logged in pieces)."""
        body = self.render(lines)
        room = self.cap - self.written
        left = 0
        if len(body) > room:  # line by line, up to the cap
            kept = bytearray()
            taken = 0
            for line in lines[:-1].split(b"\n"):
                rendered = self.render(line + b"\n")
                if len(kept) + len(rendered) > room:
                    start, size = self.fit(line, room - len(kept))
                    kept += start
                    taken += size
                    break
                kept += rendered
                taken += len(line) + 1
            body = bytes(kept)
            left = len(lines) - cut - taken
        self.write(body)
        self.written += len(body)
        if left:
            self.drop(left)

    def fit(self, line: bytes, room: int) -> tuple[bytes, int]:
        """As much of the start of ``line`` (no newline) as fits in ``room`` bytes of
        log, rendered, and how many of the line's bytes that is (nothing if not even
        the prefix fits)."""
        size = room - len(self.prefix()) - 1
        while size > 0:
            rendered = self.render(line[:size] + b"\n")
            if len(rendered) <= room:
                return rendered, size
            size -= len(rendered) - room  # each byte cut shortens the rendering by 1 to 4
        return b"", 0

    def drop(self, count: int) -> None:
        """Count ``count`` bytes (and the unfinished line) as dropped; said once, when
        the first byte is dropped."""
        first_drop = not self.dropped
        self.dropped += count + len(self.partial)
        self.partial.clear()
        if first_drop:
            why = (
                f"this engine's log reached its cap of {LOG_FILE_CAP} bytes"
                if self.file_full
                else f"stderr cap of {self.cap} bytes reached"
            )
            self.write(
                self.prefix() + f"[{why}: the rest of this process's stderr is dropped]\n".encode()
            )

    def feed(self, chunk: bytes | bytearray) -> None:
        if self.dropped:
            self.dropped += len(chunk)
            return
        self.partial += chunk
        end = self.partial.rfind(b"\n") + 1
        if end:
            lines = bytes(self.partial[:end])
            del self.partial[:end]
            self.log_lines(lines)
        elif len(self.partial) >= READ_SIZE:
            self.flush_partial()  # a very long line is logged in pieces

    def flush_partial(self) -> None:
        if self.partial and not self.dropped:
            lines = bytes(self.partial) + b"\n"
            self.partial.clear()
            self.log_lines(lines, cut=True)

    def close(self) -> None:
        self.flush_partial()
        if self.dropped:
            cap = f"the log's cap of {LOG_FILE_CAP}" if self.file_full else f"the cap of {self.cap}"
            marker = f"[stderr: {self.dropped} bytes dropped after {cap} bytes]"
            self.write(self.prefix() + marker.encode() + b"\n")
        self.close_file()

    def close_file(self) -> None:
        if self.log is not None:
            self.log.close()
            self.log = None


_LOG_UNSAFE = re.compile(
    rb"[\x00-\x08\x0b-\x1f\x7f]"  # C0 controls (tab and newline aside) and DEL
    rb"|\xc2[\x80-\x9f]"  # C1 controls, in UTF-8
    rb"|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]"  # bidirectional controls
    rb"|(?P<ok>[\xc2-\xdf][\x80-\xbf]|[\xe0-\xef][\x80-\xbf]{2}|[\xf0-\xf4][\x80-\xbf]{3})"
    rb"|[\x80-\xff]"  # a byte outside UTF-8: a lone 0x9b is a CSI to an 8-bit terminal
)


def _log_safe(data: bytes) -> bytes:
    """``data`` with the control characters a terminal obeys written out as ``\\xNN``.

    A bot's stderr and stdout reach the logs as the bot wrote them but for these: an
    escape sequence or a carriage return in a log shown with ``cat`` could rewrite the
    reader's terminal or a line's ``[game pid]`` prefix.  Tabs and newlines are kept
    (C1 controls are caught in their UTF-8 form, and as lone bytes, which are no UTF-8;
    so are the bidirectional controls, which make text read otherwise than it is), and
    so is a line ending in CRLF.
    """
    data = data.replace(b"\r\n", b"\n")

    def escape(m: re.Match[bytes]) -> bytes:
        if m.group("ok"):  # any other UTF-8 character is kept as it is
            return m.group()
        return b"".join(b"\\x%02x" % c for c in m.group())

    return _LOG_UNSAFE.sub(escape, data)


def _open_log(path: str | os.PathLike[str]) -> IO[bytes]:
    """Open a stderr log for appending, owner-only (a bot's stderr may quote its cards)."""
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)  # a file that was there already is made owner-only too
    # Unbuffered: every write holds whole lines and reaches the file in one append.
    return os.fdopen(fd, "ab", buffering=0)


traffic_dir: ContextVar[str | None] = ContextVar("traffic_dir", default=None)
"""Set to a directory, :func:`open_bot` appends every line each way, with a UTC
timestamp and the process id, to ``DIR/NAME.traffic.log`` (``ecarte match --debug``)."""


def _traffic_logger(
    directory: str, name: str, pid: int, then: Transcript | None
) -> tuple[Transcript, IO[bytes]]:
    """A transcript that writes ``TIME PID >> line`` to the bot's traffic log, then ``then``."""
    log = _open_log(os.path.join(directory, name.replace("/", "_") + ".traffic.log"))

    def write(direction: Direction, line: bytes) -> None:
        stamp = datetime.now(UTC).isoformat(timespec="microseconds")
        # One write per line: processes of the same engine share the file (O_APPEND).
        log.write(f"{stamp} {pid} {direction.value} ".encode() + _log_safe(line) + b"\n")
        log.flush()
        if then is not None:
            then(direction, line)

    return write, log


@asynccontextmanager
async def open_bot(
    command: BotCommand,
    *,
    name: str,
    log_path: str | os.PathLike[str] | None,
    max_line: int = MAX_LINE_BYTES,
    stderr_cap: int = DEFAULT_STDERR_CAP,
    limits: Limits | None = None,
    transcript: Transcript | None = None,
    quit_line: bytes | None = None,
    grace: float = 1.0,
    term_grace: float | None = None,
) -> AsyncIterator[Bot]:
    """Start a bot process; on leaving the block, :meth:`Bot.stop` it and reap everything.

    stderr is always drained: the first ``stderr_cap`` bytes are appended to
    ``log_path`` (``None``: discarded), each line prefixed with the PID and
    :attr:`Bot.log_context`, then marker lines saying how much was dropped.  ``quit_line``,
    ``grace`` and ``term_grace`` are what the exit of the block passes to
    :meth:`Bot.stop` (``term_grace=None``: the same as ``grace``).

    Raises :class:`~arbiter.faults.FailedToStart` (a plain exception, not a group)
    if the process cannot be spawned.  Exceptions from the body propagate
    unchanged, not wrapped in an exception group.
    """
    log = None if log_path is None else _open_log(log_path)
    body_error: BaseException | None = None
    try:
        async with trio.open_nursery() as nursery:
            watch = _ExitWatch()
            try:
                proc: _Child = await nursery.start(watch.run, command, limits)
            except (OSError, subprocess.SubprocessError) as exc:
                if log is not None:
                    log.close()
                body_error = FailedToStart(f"{type(exc).__name__}: {exc}")
                raise body_error from exc
            except BaseException:
                if log is not None:
                    log.close()
                raise
            debug_dir = traffic_dir.get()
            if debug_dir is not None:
                transcript, traffic = _traffic_logger(debug_dir, name, proc.pid, transcript)
                nursery.start_soon(_close_at_exit, traffic)
            bot = Bot(
                name=name,
                proc=proc,
                watch=watch,
                limits=limits,
                max_line=max_line,
                transcript=transcript,
                processes=command.processes if command.sandbox is not None else None,
            )
            assert proc.stderr is not None
            nursery.start_soon(bot._drain_stderr, proc.stderr, log, stderr_cap)
            try:
                yield bot
            except BaseException as exc:
                body_error = exc
                raise
            finally:
                await bot.stop(
                    quit_line, grace=grace, term_grace=grace if term_grace is None else term_grace
                )
                # Ends a stderr drain stuck on a pipe held by a process that escaped
                # the group with setsid(); the leader is reaped by now.
                nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # The nursery wraps the body's exception in a group; hand it back as it was,
        # so callers can write ``except BotTimeout``.  Raising the very exception
        # that was thrown in makes contextlib re-raise it with its own traceback.
        if (
            body_error is not None
            and len(group.exceptions) == 1
            and group.exceptions[0] is body_error
        ):
            context = body_error.__context__
            try:
                raise body_error
            finally:
                body_error.__context__ = context
        raise
