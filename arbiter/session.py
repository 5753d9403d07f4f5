"""One engine's bot process kept alive across games, the protocol handshake, and what a
game needs of a seat.

A :class:`BotSession` starts its process on demand (:meth:`BotSession.ensure_started`),
does the ``hello`` exchange of PROTOCOL.md §3.1, and stops it (``quit``, then escalating
signals, PROTOCOL.md §3.9).  After a fault the game runner stops the session, and
its next game starts a fresh process.

:class:`Seat` is what :func:`arbiter.game.play_game` uses of each seat; a
:class:`BotSession` is one, and so is the person at the terminal of ``ecarte play``
(:class:`arbiter.play.HumanSeat`), which takes the same lines a bot would.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

import trio

from arbiter.bot import Bot, BotCommand, Limits, open_bot
from arbiter.faults import BotFault, FaultReason, InvalidMessage, NoHandshake
from arbiter.hints import STDERR_LOG_MARK, terminal_safe
from arbiter.record import EngineInfo
from protocol.messages import (
    PROTOCOL_VERSION,
    BotHello,
    Hello,
    Quit,
    ToBot,
    decode_from_bot,
    encode,
)

__all__ = [
    "CRASH_REASONS",
    "QUIT_GRACE",
    "STDERR_QUOTE_CHARS",
    "STDERR_QUOTE_LINES",
    "TERM_GRACE",
    "BotSession",
    "Seat",
    "SeatLink",
]

QUIT_GRACE = 2.0
"""Seconds a bot has to exit after ``quit`` (PROTOCOL.md §3.9) before it is signalled."""
TERM_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL to the bot's process group (PROTOCOL.md §3.9.2)."""

CRASH_REASONS = frozenset(
    {FaultReason.DISCONNECTED, FaultReason.NO_HANDSHAKE, FaultReason.RESOURCE_LIMIT}
)
"""Faults whose record quotes the end of the bot's stderr (usually the error it died of)."""

STDERR_QUOTE_LINES = 5
"""Most stderr lines a crash's detail quotes."""
STDERR_QUOTE_CHARS = 400
"""About the most characters of stderr a crash's detail quotes (the record stays small)."""

_QUIT_LINE = encode(Quit()).rstrip(b"\n")


class SeatLink(Protocol):
    """The line exchange of a running seat, as the game loop uses it (a :class:`Bot`)."""

    log_context: str
    """What the link's log lines are labelled with (the game at hand)."""

    @property
    def fault(self) -> BotFault | None:
        """The fault that broke the link, or None; nothing more is sent once there is one."""
        ...

    async def request(
        self, line: bytes, *, timeout: float, preceding: list[bytes] | None = None
    ) -> tuple[bytes, float]:
        """Send ``preceding`` notices and the request ``line``; the reply and seconds taken."""
        ...

    async def send_many(self, lines: list[bytes], *, deadline: float) -> None:
        """Send notices (no reply)."""
        ...


class Seat(Protocol):
    """What :func:`arbiter.game.play_game` needs of the player of one seat."""

    @property
    def info(self) -> EngineInfo:
        """Who the player said it is (its handshake)."""
        ...

    @property
    def bot(self) -> SeatLink | None:
        """The running link, if started."""
        ...

    next_request_id: int
    """Id of the seat's next request (ids increase across the games of one process)."""
    deal_sets_seen: set[int]
    """Deal sets played by the running link."""

    async def ensure_started(self) -> SeatLink:
        """Start the link if it is not running; raise a BotFault if it cannot."""
        ...

    async def stop(self) -> None:
        """Stop the link."""
        ...

    async def tell(self, message: ToBot) -> None:
        """Best-effort last notice (a forfeit), even after a fault."""
        ...

    def explain(self, fault: BotFault) -> str:
        """The detail of ``fault`` as it goes into the record."""
        ...


class BotSession:
    """One engine's bot process, started on demand and reused across games."""

    def __init__(
        self,
        name: str,
        command: BotCommand,
        nursery: trio.Nursery,
        *,
        options: dict[str, Any] | None = None,
        log_path: Path | None = None,
        limits: Limits | None = None,
        handshake_ms: int = 10_000,
        grace_s: float = QUIT_GRACE,
        term_grace_s: float = TERM_GRACE,
    ) -> None:
        self.name = name
        """Engine name in the tournament."""
        self.command = command
        self.options = options or {}
        self.log_path = log_path
        self.limits = limits
        self.handshake_ms = handshake_ms
        self.grace_s = grace_s
        """Seconds the process has to exit after ``quit`` (or stdin closed) when stopped."""
        self.term_grace_s = term_grace_s
        """Seconds after SIGTERM before the process group is killed."""
        self.info = EngineInfo(name=name)
        """What the bot said of itself in its last handshake."""
        self.bot: Bot | None = None
        """The running process, if any."""
        self.next_request_id = 1
        """Request ids increase across the games of one process."""
        self.last_stderr = b""
        """The end of the stderr of the last process stopped (to explain a crash)."""
        self.ignored_quits = 0
        """Processes of this session that did not exit within the grace period after
        ``quit`` and were signalled (PROTOCOL §3.9.1)."""
        self.deal_sets_seen: set[int] = set()
        """Deal sets this process has played: it is never shown one twice."""
        self.nursery = nursery
        """Where the process-holding task runs."""
        self._release: trio.Event | None = None
        self._done: trio.Event | None = None

    @property
    def alive(self) -> bool:
        """Whether a healthy process is running."""
        return self.bot is not None and self.bot.fault is None and self.bot.returncode is None

    async def ensure_started(self) -> Bot:
        """Start the process and do the handshake if it is not running; raise a BotFault."""
        if self.alive:
            assert self.bot is not None
            return self.bot
        await self.stop()
        # The process lives in a task of its own (in the caller's nursery) so that
        # sessions can be stopped in any order: nurseries in one task must close LIFO.
        done = trio.Event()
        release = trio.Event()
        self._release, self._done = release, done
        try:
            bot: Bot = await self.nursery.start(self._hold, release, done)
        except BaseExceptionGroup as group:
            # nursery.start may wrap the holder's early failure in a group.
            fault = group.subgroup(BotFault)
            if fault is not None and len(fault.exceptions) == 1:
                raise fault.exceptions[0] from None
            raise
        self.bot = bot
        self.deal_sets_seen = set()
        try:
            await self._handshake(bot)
        except BaseException:
            await self.stop()
            raise
        return bot

    async def _hold(
        self, release: trio.Event, done: trio.Event, *, task_status: Any = trio.TASK_STATUS_IGNORED
    ) -> None:
        started = False
        try:
            async with open_bot(
                self.command,
                name=self.name,
                log_path=self.log_path,
                limits=self.limits,
                quit_line=_QUIT_LINE,
                grace=self.grace_s,
                term_grace=self.term_grace_s,
            ) as bot:
                task_status.started(bot)
                started = True
                await release.wait()
        except BotFault:
            if not started:
                raise  # FailedToStart: reaches ensure_started through nursery.start
            # A fault while stopping: the process is reaped all the same.
        finally:
            done.set()

    async def _handshake(self, bot: Bot) -> None:
        self.next_request_id = 1
        hello = encode(Hello(options=self.options)).rstrip(b"\n")
        try:
            line, _ = await bot.request(hello, timeout=self.handshake_ms / 1000)
        except BotFault as exc:
            if exc.reason == FaultReason.TIMEOUT:
                raise NoHandshake(f"no hello within {self.handshake_ms} ms of starting") from None
            raise
        try:
            msg = decode_from_bot(line)
        except InvalidMessage as exc:
            raise InvalidMessage(f"handshake: {exc.detail}", line=line) from None
        if not isinstance(msg, BotHello):
            raise InvalidMessage('handshake: expected a "hello" message', line=line)
        if msg.protocol != PROTOCOL_VERSION:
            raise InvalidMessage(
                f"handshake: bot speaks protocol {msg.protocol}, the arbiter speaks "
                f"{PROTOCOL_VERSION}",
                line=line,
            )
        self.info = EngineInfo(
            name=self.name, bot_name=msg.name, author=msg.author, version=msg.version
        )

    async def tell(self, message: ToBot) -> None:
        """Best-effort last notice (a forfeit) to the bot, even after a fault."""
        if self.bot is not None:
            await self.bot.send_farewell(encode(message).rstrip(b"\n"))

    async def stop(self) -> None:
        """Stop the process (quit, then escalating signals) and wait until it is reaped."""
        release, done, bot = self._release, self._done, self.bot
        self._release = self._done = None
        self.bot = None
        if release is not None and done is not None:
            release.set()
            with trio.CancelScope(shield=True):
                await done.wait()
        if bot is not None:
            self.last_stderr = bot.stderr_tail
            self.ignored_quits += bot.ignored_quit

    def stderr_hint(self) -> str:
        """The last few non-empty lines the stopped process wrote to stderr, for a fault's
        detail: up to :data:`STDERR_QUOTE_LINES` lines and about :data:`STDERR_QUOTE_CHARS`
        characters, each line escaped (:func:`~arbiter.hints.terminal_safe`), joined by
        `` | ``.  The cause of a crash is not always its last line: a Rust panic ends
        with a note on backtraces, a Java or Go trace starts with the exception."""
        lines = [ln for ln in self.last_stderr.splitlines() if ln.strip()]
        quoted: list[str] = []
        room = STDERR_QUOTE_CHARS
        for raw in reversed(lines[-STDERR_QUOTE_LINES:]):
            text = terminal_safe(raw.decode("utf-8", "replace").strip())
            if len(text) > room:
                if quoted:
                    break  # the later lines fill the quote
                text = "..." + text[-(room - 3) :]  # one long last line: keep its end
            quoted.append(text)
            room -= len(text) + 3
        if not quoted:
            return ""
        return "; its stderr ends: " + " | ".join(reversed(quoted))

    def explain(self, fault: BotFault) -> str:
        """The fault's detail; for a crash, with the end of the stopped process's stderr
        and the path of its stderr log if it has one."""
        if fault.reason not in CRASH_REASONS:
            return fault.detail
        log = "" if self.log_path is None else STDERR_LOG_MARK + str(self.log_path)
        return fault.detail + self.stderr_hint() + log
