"""Play one game between two bot sessions under trio and write its record.

The async code here only moves lines and measures time: the pure
:class:`~arbiter.referee.Referee` decides what each seat is told and whether a
reply is acceptable, and keeps the deal records.  :func:`play_game` is three steps:
start both seats (each a :class:`~arbiter.session.Seat`: a bot session, or the person
of ``ecarte play``), the exchange loop (an :class:`_Outbox` batches notices, a
:class:`_FaultPolicy` decides what a fault costs), and :func:`_game_record`, the one
place a :class:`GameRecord` is built.

Every way a bot can fail ends in a fault with one reason (:mod:`arbiter.faults`);
the fault policy decides what happens next:

``forfeit_game``       the offender loses the game (the default);
``forfeit_match``      the same here; the tournament also scores its remaining games
                       against that opponent as forfeits;
``random_substitute``  the arbiter plays a random legal action for the offender for
                       the rest of the game, which is marked ``corrupted``; the
                       offender still loses (the played-out score stays in the record).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import trio

from arbiter.config import FaultPolicyName
from arbiter.faults import ArbiterError, BotFault
from arbiter.hints import fix_hint
from arbiter.record import DealRecord, EngineInfo, GameRecord, Termination, TerminationReason
from arbiter.referee import Referee, decision_limit_ms, seeded_decks
from arbiter.rules import Rules, Seed, seed_sha256
from arbiter.session import Seat
from protocol.messages import Action, Forfeit, decode_from_bot, encode

__all__ = [
    "FaultPolicyName",
    "GameSpec",
    "TimeSettings",
    "fault_line",
    "play_game",
    "unplayed_record",
]

NOTICE_TIMEOUT = 5.0
"""Seconds a bot has to take in a batch of notices (it should read stdin promptly)."""


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


class _FaultPolicy:
    """What a fault costs in this game: the first one is the game's; the policy decides
    whether the game ends (a forfeit) or the arbiter plays on for the offender."""

    def __init__(self, policy: FaultPolicyName, ref: Referee, rng: random.Random) -> None:
        self.policy = policy
        self.ref = ref
        self.rng = rng
        self.first: tuple[int, BotFault, bytes | None] | None = None
        """``(seat, fault, offending line)`` of the first fault, if any."""
        self.substitute = [False, False]
        """Seats the arbiter plays for (``random_substitute``)."""

    @property
    def corrupted(self) -> bool:
        """Whether the arbiter played any action for a faulted seat."""
        return self.substitute[0] or self.substitute[1]

    def charge(self, seat: int, fault: BotFault, line: bytes | None) -> None:
        """Charge ``fault`` (with the line that caused it, if any) to ``seat``."""
        if self.first is None:
            self.first = (seat, fault, line)
        if self.policy == "random_substitute":
            self.substitute[seat] = True
        else:
            self.ref.forfeit(seat, fault.reason, fault.detail)

    async def settle(
        self,
        spec: GameSpec,
        sessions: tuple[Seat, Seat],
        on_event: Callable[[str], None] | None,
    ) -> Termination:
        """How the game ended; the offender, if any, is told why (unless the arbiter played
        on for it) and stopped."""
        if self.first is None:
            return Termination(reason="normal")
        seat, cause, line = self.first
        if not self.corrupted:
            await sessions[seat].tell(
                Forfeit(game=str(spec.game_id), reason=cause.reason, detail=cause.detail)
            )
        await sessions[seat].stop()
        termination = Termination(
            reason=cause.reason.value,  # plain text, as in a record read back from disk
            offender=seat,
            detail=sessions[seat].explain(cause),  # after stop(): with the end of stderr
            line=_line_text(line),
        )
        if on_event is not None:
            on_event(fault_line(spec.game_id, spec.engines[seat], termination))
        return termination

    def play_for(self, seat: int) -> bool:
        """Play the pending request of ``seat`` if the arbiter stands in for it."""
        if not self.substitute[seat]:
            return False
        pending = self.ref.request()
        assert pending is not None and pending[0] == seat
        req = pending[1]
        choice = self.rng.choice(req.legal)
        self.ref.submit(seat, Action(id=req.id, action=choice), substituted=True)
        return True


class _Outbox:
    """The referee's notices on their way to the bots, batched per seat.

    Each seat's notices go out in one write (one syscall, one checkpoint); the seat
    asked next gets its notices in the same write as its request.  A public notice goes
    to both seats as one object, so it is encoded once.
    """

    def __init__(self, sessions: tuple[Seat, Seat], faults: _FaultPolicy) -> None:
        self.sessions = sessions
        self.faults = faults
        self.held: list[list[bytes]] = [[], []]
        """Notices kept back to go out with the same seat's next request."""

    async def flush(self, ref: Referee) -> None:
        """Send everything the referee has queued; a fault while sending is charged."""
        # Until the referee has nothing more: a fault found while sending queues more
        # notices (the forfeit's game_end for the other bot).
        while batch := ref.notices():
            outgoing: tuple[list[bytes], list[bytes]] = ([], [])
            wire: dict[int, bytes] = {}
            for seat, msg in batch:
                if isinstance(msg, Forfeit):
                    continue  # told just before the bot is stopped
                data = wire.get(id(msg))
                if data is None:
                    data = wire[id(msg)] = encode(msg)[:-1]
                outgoing[seat].append(data)
            upcoming = ref.pending_seat
            for seat in (0, 1):
                lines, self.held[seat] = self.held[seat] + outgoing[seat], []
                bot = self.sessions[seat].bot
                if not lines or self.faults.substitute[seat] or bot is None or bot.fault:
                    continue
                if upcoming == seat:
                    self.held[seat] = lines
                    continue
                try:
                    await bot.send_many(lines, deadline=trio.current_time() + NOTICE_TIMEOUT)
                except BotFault as exc:
                    if not ref.over:
                        self.faults.charge(seat, exc, exc.line)

    def take(self, seat: int) -> list[bytes]:
        """The notices held back for ``seat``'s next request."""
        lines, self.held[seat] = self.held[seat], []
        return lines


def fault_line(game_id: int, engine: str, end: Termination) -> str:
    """The line printed when a fault happens: game, engine, reason, detail, the offending
    line cut short, and how to fix it."""
    text = f"game {game_id}: {engine} faulted: {end.reason}: {end.detail}"
    if end.line is not None:
        shown = end.line if len(end.line) <= 60 else end.line[:60] + "..."
        text += f"; its line: {shown!r}"
    hint = fix_hint(end.reason, end.detail, end.line)
    return text if hint is None else f"{text}; fix: {hint}"


def _line_text(line: bytes | None) -> str | None:
    if line is None:
        return None
    return line[:200].decode("utf-8", "replace")


async def play_game(
    spec: GameSpec,
    sessions: tuple[Seat, Seat],
    *,
    on_event: Callable[[str], None] | None = None,
) -> GameRecord:
    """Play one game; faults are contained and recorded, never raised.

    ``sessions[i]`` plays seat ``i``.  Returns the finished :class:`GameRecord`.
    A bot that faulted is stopped (after being told why) and will be restarted by
    :meth:`BotSession.ensure_started` for its next game.  An error of the arbiter
    itself aborts the game unrecorded (:class:`~arbiter.faults.ArbiterError`).
    """
    started = datetime.now(UTC).isoformat(timespec="seconds")
    t0 = time.monotonic()
    fault = await _start_seats(spec, sessions)
    if fault is not None:
        seat, exc = fault
        return unplayed_record(
            spec,
            seat,
            exc.reason.value,
            sessions[seat].explain(exc),
            line=exc.line,
            info=[sessions[0].info, sessions[1].info],
            started=started,
            seconds=round(time.monotonic() - t0, 3),
        )
    for session in sessions:  # each line of a bot's stderr log names its game
        if session.bot is not None:
            session.bot.log_context = f"game {spec.game_id}"
    tm = spec.time
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
    rng = random.Random(f"ecarte-substitute/{spec.seed}/{spec.game_id}")
    faults = _FaultPolicy(spec.fault_policy, ref, rng)
    try:
        await _exchange(ref, sessions, faults, tm)
    except Exception as exc:
        # A bug of the arbiter, not of a bot: the game is aborted, no one is blamed,
        # and nothing is recorded (a resumed run plays it again).
        ref.abort()
        for seat, msg in ref.notices():
            await sessions[seat].tell(msg)
        for session in sessions:
            await session.stop()
        raise ArbiterError(f"game {spec.game_id} aborted by an arbiter error: {exc!r}") from exc
    sessions[0].next_request_id, sessions[1].next_request_id = ref.next_request_ids
    for session in sessions:
        session.deal_sets_seen.add(spec.deal_set)

    winner = ref.winner if ref.winner is not None else ref.state.winner
    assert winner is not None  # the game is over: by the rules or by a forfeit
    termination = await faults.settle(spec, sessions, on_event)
    if termination.offender is not None:
        winner = 1 - termination.offender  # under every policy, the offender loses
    return _game_record(
        spec,
        deals=ref.deal_records(),
        scores=list(ref.state.scores),
        winner=winner,
        termination=termination,
        corrupted=faults.corrupted,
        info=[sessions[0].info, sessions[1].info],
        started=started,
        seconds=round(time.monotonic() - t0, 3),
    )


async def _start_seats(spec: GameSpec, sessions: tuple[Seat, Seat]) -> tuple[int, BotFault] | None:
    """Start both seats' processes; the first that cannot start or handshake, if any."""
    for seat in (0, 1):
        if spec.isolate_deals and spec.deal_set in sessions[seat].deal_sets_seen:
            # The same deals again (the other game of a duplicate pair, or another
            # pairing): a fresh process, so that no bot can remember the cards.
            await sessions[seat].stop()
        try:
            await sessions[seat].ensure_started()
        except BotFault as fault:
            return seat, fault
    return None


async def _exchange(
    ref: Referee,
    sessions: tuple[Seat, Seat],
    faults: _FaultPolicy,
    tm: TimeSettings,
) -> None:
    """Send notices and requests and submit replies until the game is over."""
    outbox = _Outbox(sessions, faults)
    while True:
        await outbox.flush(ref)
        pending = ref.request()
        if pending is None:
            return
        seat, req = pending
        if faults.play_for(seat):
            continue
        bot = sessions[seat].bot
        assert bot is not None
        limit_ms = decision_limit_ms(req) + tm.grace_ms
        line: bytes | None = None
        try:
            line, elapsed = await bot.request(
                encode(req)[:-1], timeout=limit_ms / 1000, preceding=outbox.take(seat)
            )
            ref.submit(seat, decode_from_bot(line), elapsed_ms=elapsed * 1000)
        except BotFault as exc:
            # The decoder's and the referee's faults hold no line: it is here.
            faults.charge(seat, exc, line if exc.line is None else exc.line)
            continue
        if ref.clocks is not None and tm.increment_ms:
            ref.clocks[seat] += tm.increment_ms


def _game_record(
    spec: GameSpec,
    *,
    deals: list[DealRecord],
    scores: list[int],
    winner: int,
    termination: Termination,
    info: Sequence[EngineInfo],
    started: str,
    seconds: float,
    corrupted: bool = False,
) -> GameRecord:
    """The record of a game of ``spec`` (the one place a :class:`GameRecord` is built)."""
    return GameRecord(
        game_id=spec.game_id,
        engines=list(spec.engines),
        pair_id=spec.pair_id,
        deal_set=spec.deal_set,
        seed_sha256=seed_sha256(spec.seed),
        first_dealer=spec.first_dealer,
        rules=spec.rules,
        deals=deals,
        scores=scores,
        winner=winner,
        termination=termination,
        corrupted=corrupted,
        info=list(info),
        started=started,
        seconds=seconds,
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
    return _game_record(
        spec,
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
