"""Play one game between two bot sessions under trio and write its record.

The async code here only moves lines and measures time: the pure
:class:`~arbiter.referee.Referee` decides what each seat is told and whether a
reply is acceptable.  Every way a bot can fail ends in a fault with one reason
(:mod:`arbiter.faults`); the fault policy decides what it costs:

``forfeit_game``       the offender loses the game (the default);
``forfeit_match``      the same here; the tournament also scores its remaining games
                       against that opponent as forfeits;
``random_substitute``  the arbiter plays a random legal action for the offender for
                       the rest of the game, which is marked ``corrupted``.

A :class:`BotSession` is one engine's process kept alive across games; after a
fault it is stopped (the offender is told why first) and started afresh for its
next game.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import msgspec
import trio

from arbiter.bot import Bot, BotCommand, Limits, open_bot
from arbiter.cards import CARDS
from arbiter.faults import ArbiterError, BotFault, FaultReason, InvalidMessage, NoHandshake
from arbiter.record import (
    ActionRecord,
    DealRecord,
    EngineInfo,
    GameRecord,
    Termination,
    TerminationReason,
)
from arbiter.referee import Referee, charged_ms, decision_limit_ms, seeded_decks
from arbiter.rules import Rules, Seed, seed_sha256
from protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    BotHello,
    DealEnd,
    Forfeit,
    Hello,
    Quit,
    ToBot,
    decode_from_bot,
    encode,
)
from protocol.messages import Deal as DealNotice

__all__ = ["BotSession", "GameSpec", "TimeSettings", "play_game", "unplayed_record"]

NOTICE_TIMEOUT = 5.0
"""Seconds a bot has to take in a batch of notices (it should read stdin promptly)."""
QUIT_GRACE = 2.0
"""Seconds a bot has to exit after ``quit`` (PROTOCOL.md §3.9) before it is signalled."""
TERM_GRACE = 1.0
"""Seconds between SIGTERM and SIGKILL to the bot's process group (PROTOCOL.md §3.9.2)."""

_CRASH_REASONS = (FaultReason.DISCONNECTED, FaultReason.NO_HANDSHAKE, FaultReason.RESOURCE_LIMIT)
"""Faults whose record quotes the end of the bot's stderr (usually the error it died of)."""

FaultPolicyName = Literal["forfeit_game", "forfeit_match", "random_substitute"]
_QUIT_LINE = encode(Quit()).rstrip(b"\n")


@dataclass(frozen=True)
class TimeSettings:
    """Time control of a game, in milliseconds."""

    per_move_ms: int = 1000
    """Time per decision when there is no clock."""
    clock_ms: int | None = None
    """Game clock per seat (bank), or None."""
    increment_ms: int = 0
    """Added to a seat's clock after each of its decisions."""
    grace_ms: int = 100
    """Slack beyond the limit before a timeout is declared."""
    handshake_ms: int = 10_000
    """Deadline for start-up and the handshake."""


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

    def stderr_hint(self) -> str:
        """The last line the stopped process wrote to stderr, for a fault's detail."""
        lines = [ln for ln in self.last_stderr.splitlines() if ln.strip()]
        if not lines:
            return ""
        return "; its stderr ends: " + lines[-1][-200:].decode("utf-8", "replace").strip()


@dataclass(frozen=True)
class GameSpec:
    """Everything that fixes a game before it is played."""

    game_id: int
    engines: tuple[str, str]
    rules: Rules
    seed: Seed
    """The secret tournament seed (records carry only its SHA-256)."""
    deal_set: int
    first_dealer: int
    pair_id: str | None = None
    match: str = ""
    time: TimeSettings = field(default_factory=TimeSettings)
    fault_policy: FaultPolicyName = "forfeit_game"
    isolate_deals: bool = True
    """Start a fresh process for a bot that has already played this game's deals."""


@dataclass
class _Deal:
    number: int
    dealer: int
    deck: list[str]
    actions: list[ActionRecord] = field(default_factory=list)


def _line_text(line: bytes | None) -> str | None:
    if line is None:
        return None
    return line[:200].decode("utf-8", "replace")


async def play_game(
    spec: GameSpec,
    sessions: tuple[BotSession, BotSession],
    *,
    on_event: Callable[[str], None] | None = None,
) -> GameRecord:
    """Play one game; faults are contained and recorded, never raised.

    ``sessions[i]`` plays seat ``i``.  Returns the finished :class:`GameRecord`.
    A bot that faulted is stopped (after being told why) and will be restarted by
    :meth:`BotSession.ensure_started` for its next game.
    """
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    tm = spec.time
    # Start both bots; a bot that cannot start or handshake forfeits the game unplayed.
    for seat in (0, 1):
        if spec.isolate_deals and spec.deal_set in sessions[seat].deal_sets_seen:
            # The same deals again (the other game of a duplicate pair, or another
            # pairing): a fresh process, so that no bot can remember the cards.
            await sessions[seat].stop()
        try:
            await sessions[seat].ensure_started()
        except BotFault as fault:
            hint = sessions[seat].stderr_hint() if fault.reason.value in _CRASH_REASONS else ""
            return unplayed_record(
                spec,
                seat,
                fault.reason.value,
                fault.detail + hint,
                line=fault.line,
                info=[sessions[0].info, sessions[1].info],
                started=started,
                seconds=round(time.monotonic() - t0, 3),
            )

    for session in sessions:  # each line of a bot's stderr log names its game
        if session.bot is not None:
            session.bot.log_context = f"game {spec.game_id}"

    ref = Referee(
        rules=spec.rules,
        names=(
            sessions[0].info.bot_name or spec.engines[0],
            sessions[1].info.bot_name or spec.engines[1],
        ),
        game_id=str(spec.game_id),
        decks=seeded_decks(spec.seed, spec.deal_set),
        first_dealer=spec.first_dealer,
        time_ms=tm.per_move_ms if tm.clock_ms is None else tm.clock_ms,
        clock_ms=tm.clock_ms,
        match=spec.match,
        game_number=spec.deal_set,
        pair=spec.deal_set if spec.pair_id is not None else None,
        # Request ids keep increasing across the games of a bot process.
        first_request_ids=(sessions[0].next_request_id, sessions[1].next_request_id),
    )
    deals: list[_Deal] = []
    finished: list[DealRecord] = []
    corrupted = False
    substitute = [False, False]
    rng = random.Random(f"ecarte-substitute/{spec.seed}/{spec.game_id}")
    fault_info: tuple[int, BotFault, bytes | None] | None = None

    def charge(seat: int, exc: BotFault, line: bytes | None) -> None:
        nonlocal fault_info, corrupted
        if fault_info is None:
            fault_info = (seat, exc, line)
        if spec.fault_policy == "random_substitute":
            substitute[seat] = True
            corrupted = True
        else:
            ref.forfeit(seat, exc.reason, exc.detail)

    # Notices kept back to go out with the same seat's next request.
    held: list[list[bytes]] = [[], []]
    try:
        while True:
            # Until the outbox is empty: a fault found while sending queues more notices
            # (the forfeit's game_end for the other bot).
            while batch := ref.notices():
                outgoing: tuple[list[bytes], list[bytes]] = ([], [])
                wire: dict[int, bytes] = {}
                for seat, msg in batch:
                    if seat == 0 and isinstance(msg, DealNotice):
                        deck = ref.decks[msg.deal - 1]
                        deals.append(_Deal(msg.deal, msg.dealer, [str(CARDS[c]) for c in deck]))
                    elif seat == 0 and isinstance(msg, DealEnd):
                        d = deals[-1]
                        finished.append(
                            DealRecord(
                                number=d.number,
                                dealer=d.dealer,
                                deck=d.deck,
                                actions=d.actions,
                                tricks=msg.tricks,
                                points=msg.points,
                            )
                        )
                    if not isinstance(msg, Forfeit):  # told just before the bot is stopped
                        # Public notices go to both seats as one object: encode it once.
                        data = wire.get(id(msg))
                        if data is None:
                            data = wire[id(msg)] = encode(msg)[:-1]
                        outgoing[seat].append(data)
                # Each seat's notices go out in one write: one syscall, one checkpoint.
                # The seat asked next gets its notices in the same write as its request.
                upcoming = ref.pending_seat
                for seat in (0, 1):
                    lines, held[seat] = held[seat] + outgoing[seat], []
                    bot = sessions[seat].bot
                    if not lines or substitute[seat] or bot is None or bot.fault:
                        continue
                    if upcoming == seat:
                        held[seat] = lines
                        continue
                    try:
                        await bot.send_many(lines, deadline=trio.current_time() + NOTICE_TIMEOUT)
                    except BotFault as exc:
                        if not ref.over:
                            charge(seat, exc, exc.line)
            pending = ref.request()
            if pending is None:
                break
            seat, req = pending
            if substitute[seat]:
                choice = rng.choice(req.legal)
                ref.submit(seat, Action(id=req.id, action=choice))
                deals[-1].actions.append(ActionRecord(seat, ref.log[-1][1], 0.0, True))
                continue
            session = sessions[seat]
            bot = session.bot
            assert bot is not None
            limit_ms = decision_limit_ms(req) + tm.grace_ms
            line: bytes | None = None
            try:
                preceding, held[seat] = held[seat], []
                line, elapsed = await bot.request(
                    encode(req)[:-1], timeout=limit_ms / 1000, preceding=preceding
                )
                ref.submit(seat, decode_from_bot(line), elapsed_ms=charged_ms(elapsed))
            except BotFault as exc:
                # The decoder's and the referee's faults hold no line: it is here.
                charge(seat, exc, line if exc.line is None else exc.line)
                continue
            if ref.clocks is not None and tm.increment_ms:
                ref.clocks[seat] += tm.increment_ms
            deals[-1].actions.append(ActionRecord(seat, ref.log[-1][1], round(elapsed * 1000, 3)))

    except Exception as exc:
        # A bug of the arbiter, not of a bot: the game is aborted, no one is blamed,
        # and nothing is recorded (a resumed run plays it again).
        ref.abort()
        for seat, msg in ref.notices():
            bot = sessions[seat].bot
            if bot is not None:
                await bot.send_farewell(encode(msg).rstrip(b"\n"))
        for session in sessions:
            await session.stop()
        raise ArbiterError(f"game {spec.game_id} aborted by an arbiter error: {exc!r}") from exc
    sessions[0].next_request_id, sessions[1].next_request_id = ref.next_request_ids
    for session in sessions:
        session.deal_sets_seen.add(spec.deal_set)
    # A game cut short by a forfeit: record the unfinished deal as it stood.
    if deals and len(finished) < len(deals):
        d = deals[-1]
        st = ref.state
        finished.append(
            DealRecord(
                number=d.number,
                dealer=d.dealer,
                deck=d.deck,
                actions=d.actions,
                tricks=list(st.tricks),
                points=list(st.deal_points),
            )
        )

    termination = Termination(reason="normal")
    if fault_info is not None:
        seat, cause, bad_line = fault_info
        reason, detail = cause.reason, cause.detail
        termination = Termination(
            reason=reason.value,  # plain text, as in a record read back from disk
            offender=seat,
            detail=detail,
            line=_line_text(bad_line),
        )
        if not corrupted:
            await sessions[seat].tell(Forfeit(game=str(spec.game_id), reason=reason, detail=detail))
        await sessions[seat].stop()
        if reason in _CRASH_REASONS:
            termination = msgspec.structs.replace(
                termination, detail=detail + sessions[seat].stderr_hint()
            )
        if on_event is not None:
            on_event(f"game {spec.game_id}: {spec.engines[seat]} faulted: {reason}: {detail}")
    winner = ref.winner if ref.winner is not None else ref.state.winner
    return GameRecord(
        game_id=spec.game_id,
        engines=list(spec.engines),
        pair_id=spec.pair_id,
        deal_set=spec.deal_set,
        seed_sha256=seed_sha256(spec.seed),
        first_dealer=spec.first_dealer,
        rules=spec.rules,
        deals=finished,
        scores=list(ref.state.scores),
        winner=winner,
        termination=termination,
        corrupted=corrupted,
        info=[sessions[0].info, sessions[1].info],
        started=started,
        seconds=round(time.monotonic() - t0, 3),
    )


def unplayed_record(
    spec: GameSpec,
    offender: int,
    reason: TerminationReason,
    detail: str,
    *,
    line: bytes | None = None,
    info: list[EngineInfo] | None = None,
    started: str = "",
    seconds: float = 0.0,
) -> GameRecord:
    """The record of a game lost by ``offender`` before it began (no deal was played)."""
    return GameRecord(
        game_id=spec.game_id,
        engines=list(spec.engines),
        pair_id=spec.pair_id,
        deal_set=spec.deal_set,
        seed_sha256=seed_sha256(spec.seed),
        first_dealer=spec.first_dealer,
        rules=spec.rules,
        deals=[],
        scores=[0, 0],
        winner=1 - offender,
        termination=Termination(
            reason=reason, offender=offender, detail=detail, line=_line_text(line)
        ),
        info=info or [],
        started=started,
        seconds=seconds,
    )
