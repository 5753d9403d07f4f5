"""Run a tournament: a schedule of games, in parallel, journaled, resumable.

Each of ``concurrency`` workers owns one bot process per engine it has needed and
plays games from a shared queue, so processes are reused across games; a bot that
faulted is restarted for its next game.  Every finished game is appended to
``OUT/games.jsonl`` and fsync'ed before it counts; the run keeps only a compact
:class:`~arbiter.report.GameResult` of it, so memory stays flat however long the
run.  ``resume`` reads the journal back (dropping a truncated last line), skips the
games it holds and plays the rest: since every game is fixed by the schedule
(engines, seats, deals, first dealer) the final journal holds the same games as an
uninterrupted run.  The journal is untrusted on resume: every record is re-refereed
and compared with the schedule (game id, engines, seats, pair, deal set, first
dealer, rules, decks), and a game id found twice is refused.

Fault policy at this level: an engine with ``withdraw_after`` faults in a row is
withdrawn, and its remaining games are recorded as forfeits (reason
``withdrawn``) without being played; under ``forfeit_match`` an engine that
faulted against an opponent forfeits its remaining games against that opponent
(reason ``match_forfeit``).
"""

from __future__ import annotations

import collections
import contextlib
import fcntl
import math
import os
import platform
import secrets
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import msgspec
import trio

from arbiter.bot import BotCommand, live_pids
from arbiter.bot import Limits as BotLimits
from arbiter.config import TournamentConfig, engine_argv
from arbiter.faults import ArbiterError
from arbiter.game import BotSession, GameSpec, TimeSettings, play_game, unplayed_record
from arbiter.journal import (
    Journal,
    JournalError,
    JournalReader,
    checked_entries,
    make_private_dir,
    open_private,
    write_private,
)
from arbiter.record import GameRecord, RecordError, check_decks
from arbiter.report import GameResult, result_of
from arbiter.rules import Rules, Seed, seed_is_short, seed_sha256
from arbiter.sandbox import SandboxPlan, minimal_env, own_dirs, reap_escapees, sandbox_enabled
from arbiter.schedule import ScheduledGame, make_schedule, shard
from arbiter.version import VERSION

__all__ = ["Progress", "TournamentError", "run_tournament", "schedule_check", "schedule_of"]


class TournamentError(RuntimeError):
    """A tournament that cannot start or continue (bad output directory, mismatched resume)."""


def schedule_of(config: TournamentConfig) -> list[ScheduledGame]:
    """The full schedule of a config (its seed must be set)."""
    if config.seed is None:
        raise TournamentError("the schedule needs a seed")
    return make_schedule(
        [e.name for e in config.engines],
        config.format,
        config.games_per_pairing,
        config.seed,
        challenger=config.challenger,
        duplicate=config.duplicate,
    )


@dataclass
class Progress:
    """Live figures of a run, printed as a bar on a terminal or as plain lines.

    Games found in the journal on ``--resume`` are counted with ``replayed=True``: they
    are in the bar and the score, not in the rate or the ETA, which are about this run.
    """

    total: int
    stream: TextIO = sys.stderr
    done: int = 0
    faults: int = 0
    started: float = field(default_factory=time.monotonic)
    points: dict[str, float] = field(default_factory=dict)
    games_of: dict[str, int] = field(default_factory=dict)
    _last_line: float = 0.0
    _last_text: str = ""
    _drawn: bool = False
    engines: int = 0
    """Engines in the run (a two-engine run shows its running score)."""
    quiet: bool = False
    replayed: int = 0
    """Games of an earlier run found on resume (left out of the rate)."""

    def record(self, rec: GameResult, *, replayed: bool = False) -> None:
        """Count one finished game and show the progress (``replayed``: found on resume)."""
        self.done += 1
        if replayed:
            self.replayed += 1
        if rec.reason != "normal":
            self.faults += 1
        for seat, name in enumerate(rec.engines):
            self.games_of[name] = self.games_of.get(name, 0) + 1
            self.points[name] = self.points.get(name, 0.0) + (1.0 if rec.winner == seat else 0.0)
        self.show()

    def line(self) -> str:
        """One status line."""
        elapsed = time.monotonic() - self.started
        played = self.done - self.replayed
        rate = played / elapsed if elapsed > 0 else 0.0
        left = self.total - self.done
        eta = left / rate if rate > 0 else math.inf
        leader = ""
        if self.engines == 2 and len(self.points) == 2:
            # A match: show the running score.
            (a, pa), (b, pb) = self.points.items()
            leader = f"  score {a} {pa:g} - {pb:g} {b}"
        elif self.points:
            name = max(self.points, key=lambda n: (self.points[n] / self.games_of[n], n))
            leader = f"  leader {name} {100 * self.points[name] / self.games_of[name]:.0f}%"
        eta_text = "?" if math.isinf(eta) else f"{eta:.0f}s"
        resumed = f" ({self.replayed} resumed)" if self.replayed else ""
        return (
            f"{self.done}/{self.total} games{resumed}  {rate:.1f} games/s  ETA {eta_text}  "
            f"faults {self.faults}{leader}"
        )

    def say(self, text: str) -> None:
        """Print a line of its own (even when quiet) without mixing it into the bar."""
        if self.stream.isatty() and self._drawn:
            # Wipe the bar, print the line, draw the bar again below it.
            self.stream.write("\r\x1b[K" + text + "\n")
            self.stream.flush()
            self.show()
            return
        self.stream.write(text + "\n")
        self.stream.flush()

    def show(self, final: bool = False) -> None:
        """Print the status: a redrawn bar on a terminal, a line every few seconds otherwise."""
        if self.quiet:
            return
        if self.stream.isatty():
            width = 24
            filled = int(width * self.done / max(1, self.total))
            bar = "#" * filled + "-" * (width - filled)
            self.stream.write(f"\r[{bar}] {self.line()}\x1b[K")
            self._drawn = not final
            if final:
                self.stream.write("\n")
            self.stream.flush()
            return
        now = time.monotonic()
        text = self.line()
        if (final or now - self._last_line >= 5.0 or self.done == self.total) and (
            text.split("  ")[0] != self._last_text.split("  ")[0]
        ):
            self._last_line = now
            self._last_text = text
            self.stream.write(text + "\n")
            self.stream.flush()


def _resolved(config: TournamentConfig, shard_spec: tuple[int, int] | None) -> dict[str, Any]:
    data: dict[str, Any] = msgspec.to_builtins(config)
    data["rules_resolved"] = msgspec.to_builtins(config.resolved_rules())
    data["shard"] = None if shard_spec is None else f"{shard_spec[0]}/{shard_spec[1]}"
    data["versions"] = {
        "arbiter": VERSION,
        "python": platform.python_version(),
        "trio": trio.__version__,
        "msgspec": msgspec.__version__,
    }
    return data


def _same_run(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """Keys whose change would make a resumed run differ from the original."""
    keys = (
        "isolate_deals",
        "engines",
        "format",
        "challenger",
        "games_per_pairing",
        "duplicate",
        "rules_resolved",
        "seed",
        "shard",
        "time_control",
        "faults",
    )
    return [k for k in keys if a.get(k) != b.get(k)]


async def run_tournament(
    config: TournamentConfig,
    *,
    base_dir: Path,
    out_dir: Path,
    resume: bool = False,
    shard_spec: tuple[int, int] | None = None,
    concurrency: int | None = None,
    progress: Progress | None = None,
    on_event: Callable[[str], None] | None = None,
    stop_when: Callable[[GameResult], bool] | None = None,
    errors: list[str] | None = None,
    hidden_paths: Sequence[str] = (),
) -> list[GameResult]:
    """Play (or finish) the tournament; return the result of every game, in game-id order.

    ``stop_when`` is called with each finished game (first the ones found on resume);
    returning True stops starting new games (used by SPRT matches).  Games aborted by
    an arbiter error are not recorded; their messages are appended to ``errors``.
    Only one run at a time may write to ``out_dir`` (a lock file guards it).  On
    resume a journal record that does not check out is a
    :class:`~arbiter.journal.JournalError` naming its line.  Bots run in the sandbox the
    config's ``sandbox`` asks for (the output directory and ``hidden_paths``, e.g. the
    config file, are hidden from them); with ``auto`` where the sandbox cannot run, one
    warning goes to ``on_event``.
    """
    sandboxed, warning = sandbox_enabled(config.sandbox)
    if warning is not None and on_event is not None:
        on_event(warning)
    make_private_dir(out_dir)
    with _locked(out_dir):
        return await _run_locked(
            config,
            base_dir=base_dir,
            out_dir=out_dir,
            resume=resume,
            shard_spec=shard_spec,
            concurrency=concurrency,
            progress=progress,
            on_event=on_event,
            stop_when=stop_when,
            errors=errors,
            sandboxed=sandboxed,
            hidden_paths=hidden_paths,
        )


def _choose_seed(
    config: TournamentConfig,
    old: dict[str, Any] | None,
    shard_spec: tuple[int, int] | None,
    on_event: Callable[[str], None] | None,
) -> Seed:
    """The run's seed: the configured one (a short one warns), else the interrupted run's,
    else a new 128-bit secret nobody can guess (``deck_for`` is keyed by it).

    A drawn seed is kept in ``config.resolved.json`` only, never on a command line.
    """
    seed = config.seed
    if seed is None:
        if shard_spec is not None:
            raise TournamentError(
                "--shard needs a fixed seed shared by all shards: set seed: in the config "
                "or pass --seed"
            )
        recorded = old.get("seed") if old is not None else None
        seed = recorded if isinstance(recorded, int | str) else secrets.token_hex(16)
    if on_event is not None and seed_is_short(seed):
        on_event(
            f"warning: seed {seed!r} is short: any bot that learns or guesses it can "
            "rebuild every deck; leave seed unset (a random 128-bit seed) for untrusted bots"
        )
    return seed


def engine_commands(
    config: TournamentConfig, base_dir: Path, *, sandboxed: bool, hidden: Sequence[str]
) -> dict[str, BotCommand]:
    """How to start each engine of ``config``: command, environment and sandbox.

    Each sandboxed engine sees its own directories and grants; ``hidden`` and the other
    engines' own directories are masked from it.
    """
    launch = {e.name: engine_argv(e, base_dir) for e in config.engines}
    owns = {
        e.name: own_dirs(*launch[e.name], own_dir_configured=e.cwd is not None)
        for e in config.engines
    }
    commands = {}
    for e in config.engines:
        argv, cwd = launch[e.name]
        plan = None
        if sandboxed:
            others = [d for n, dirs in owns.items() if n != e.name for d in dirs]
            plan = SandboxPlan.for_engine(
                argv,
                cwd,
                own_dir_configured=e.cwd is not None,
                allow_paths=[str(base_dir / p) for p in e.allow_paths],
                write_paths=[str(base_dir / p) for p in e.write_paths],
                hidden=[*hidden, *others],
                network=e.network,
            )
        base_env = None if e.inherit_env else minimal_env(home="/tmp" if sandboxed else None)
        commands[e.name] = BotCommand(argv, cwd, dict(e.env), base_env=base_env, sandbox=plan)
    return commands


@contextlib.contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    fd = os.open(out_dir / ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    os.fchmod(fd, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise TournamentError(
                f"another ecarte run is writing to {out_dir}; wait for it or use another --out"
            ) from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


async def _run_locked(
    config: TournamentConfig,
    *,
    base_dir: Path,
    out_dir: Path,
    resume: bool = False,
    shard_spec: tuple[int, int] | None = None,
    concurrency: int | None = None,
    progress: Progress | None = None,
    on_event: Callable[[str], None] | None = None,
    stop_when: Callable[[GameResult], bool] | None = None,
    errors: list[str] | None = None,
    sandboxed: bool = False,
    hidden_paths: Sequence[str] = (),
) -> list[GameResult]:
    """:func:`run_tournament` once the output directory is locked."""
    if errors is None:
        errors = []
    journal_path = out_dir / "games.jsonl"
    resolved_path = out_dir / "config.resolved.json"
    old: dict[str, Any] | None = None
    if resume and resolved_path.exists():
        try:
            old = msgspec.json.decode(resolved_path.read_bytes())
        except msgspec.DecodeError as exc:
            raise TournamentError(f"{resolved_path}: unreadable ({exc})") from None
    run_seed = _choose_seed(config, old, shard_spec, on_event)
    config = msgspec.structs.replace(config, seed=run_seed)
    resolved = _resolved(config, shard_spec)
    reader = JournalReader(journal_path)
    if not resume:
        held = sum(1 for _ in reader)
        if held:
            raise TournamentError(
                f"{out_dir} already holds {held} finished games; continue them with "
                "--resume, or choose another output directory with --out"
            )
    if old is not None:
        changed = _same_run(old, resolved)
        if changed:
            raise TournamentError(
                f"cannot resume in {out_dir}: the config differs from the interrupted run in "
                f"{', '.join(changed)}"
            )
    rules = config.resolved_rules()
    games = schedule_of(config)
    if shard_spec is not None:
        games = shard(games, *shard_spec)
    results: dict[int, GameResult] = {}
    if resume:
        check = schedule_check(games, rules, run_seed, sharded=shard_spec is not None)
        for entry in checked_entries(reader, check):
            results[entry.record.game_id] = result_of(entry.record)
        del check
    for warning in reader.warnings:
        if on_event is not None:
            on_event(f"warning: {warning}; its game will be played again")
    make_private_dir(out_dir / "logs")
    for e in config.engines:
        # Bot stderr logs are opened for appending later on: create them owner-only now.
        open_private(out_dir / "logs" / f"{_safe(e.name)}.stderr.log", os.O_WRONLY).close()
    write_private(resolved_path, msgspec.json.format(msgspec.json.encode(resolved)) + b"\n")

    todo = [g for g in games if g.game_id not in results]
    del games
    found = sorted(results.values(), key=lambda r: r.game_id)
    if progress is not None:
        progress.total = len(todo) + len(results)
        progress.engines = len(config.engines)
        for r in found:
            progress.record(r, replayed=True)

    tc = config.time_control
    time_settings = TimeSettings(
        per_move_ms=tc.per_move_ms or 1000,
        clock_ms=tc.clock_ms,
        increment_ms=tc.increment_ms,
        grace_ms=tc.grace_ms,
        handshake_ms=tc.handshake_ms,
    )
    limits = None
    if config.limits.memory_mb or config.limits.cpu_seconds:
        limits = BotLimits(memory_mb=config.limits.memory_mb, cpu_seconds=config.limits.cpu_seconds)
    engines = {e.name: e for e in config.engines}
    commands = engine_commands(
        config, base_dir, sandboxed=sandboxed, hidden=[str(out_dir), *hidden_paths]
    )
    # Faults in a row, withdrawals and match forfeits, in completion order.
    streak: dict[str, int] = dict.fromkeys(engines, 0)
    for r in found:
        _update_streak(streak, r)
    withdrawn = {n for n, k in streak.items() if k >= config.faults.withdraw_after}
    match_forfeits: set[tuple[str, str]] = set()
    if config.faults.policy == "forfeit_match":
        for r in found:
            if r.offender is not None:
                off = r.engines[r.offender]
                match_forfeits.add((off, r.engines[1 - r.offender]))

    journal = Journal(journal_path, truncate_to=reader.good_bytes)
    workers = max(1, concurrency or config.concurrency or _cores())
    starters = min(workers, max(1, len(todo)))
    queue = _drain(collections.deque(todo))
    del todo
    stopping = False
    if stop_when is not None:
        for r in found:
            stopping = stop_when(r) or stopping
    del found

    journal_lock = trio.Lock()

    async def finish(record: GameRecord) -> None:
        nonlocal stopping
        # The fsync runs in a thread: the event loop keeps timing the other games' bots.
        async with journal_lock:
            await trio.to_thread.run_sync(journal.append, record)
        rec = results[record.game_id] = result_of(record)
        _update_streak(streak, rec)
        if rec.offender is not None:
            off = rec.engines[rec.offender]
            if config.faults.policy == "forfeit_match":
                match_forfeits.add((off, rec.engines[1 - rec.offender]))
            if streak[off] >= config.faults.withdraw_after and off not in withdrawn:
                withdrawn.add(off)
                if on_event is not None:
                    on_event(f"{off} withdrawn after {streak[off]} faults in a row")
        if progress is not None:
            progress.record(rec)
        if stop_when is not None and stop_when(rec):
            stopping = True

    def spec_of(game: ScheduledGame) -> GameSpec:
        return GameSpec(
            game_id=game.game_id,
            engines=game.engines,
            rules=rules,
            seed=run_seed,
            deal_set=game.deal_set,
            first_dealer=game.first_dealer,
            pair_id=game.pair_id,
            match=f"{game.pairing[0]}~{game.pairing[1]}",
            time=time_settings,
            fault_policy=config.faults.policy,
            isolate_deals=config.isolate_deals,
        )

    def skip_reason(game: ScheduledGame) -> GameRecord | None:
        """A forfeit record for a game that must not be played, else None."""
        for seat, name in enumerate(game.engines):
            if name in withdrawn:
                detail = f"{name} was withdrawn after repeated faults"
                return unplayed_record(spec_of(game), seat, "withdrawn", detail)
        for seat, name in enumerate(game.engines):
            if (name, game.engines[1 - seat]) in match_forfeits:
                detail = f"{name} forfeited the match after a fault"
                return unplayed_record(spec_of(game), seat, "match_forfeit", detail)
        return None

    async def worker() -> None:
        async with trio.open_nursery() as nursery:
            sessions: dict[str, BotSession] = {}
            try:
                while not stopping:
                    game = next(queue, None)
                    if game is None:
                        break
                    skipped = skip_reason(game)
                    if skipped is not None:
                        await finish(skipped)
                        continue
                    # Keep only the processes this game needs: idle ones would pile up
                    # (one per engine per worker).
                    for name in [n for n in sessions if n not in game.engines]:
                        await sessions.pop(name).stop()
                    pair = []
                    for name in game.engines:
                        if name not in sessions:
                            e = engines[name]
                            log = out_dir / "logs" / f"{_safe(name)}.stderr.log"
                            sessions[name] = BotSession(
                                name,
                                commands[name],
                                nursery,
                                options=e.options,
                                log_path=log,
                                limits=limits,
                                handshake_ms=tc.handshake_ms,
                            )
                        pair.append(sessions[name])
                    spec = spec_of(game)
                    try:
                        rec = await play_game(spec, (pair[0], pair[1]), on_event=on_event)
                    except ArbiterError as exc:
                        reap_escapees(live_pids())
                        # Our bug, not a bot's: report it, record nothing (a resume plays
                        # the game again) and carry on with the other games.
                        errors.append(str(exc))
                        if on_event is not None:
                            on_event(f"error: {exc} (not recorded; --resume plays it again)")
                        continue
                    # Processes that left a bot's group with setsid() and outlived it.
                    reap_escapees(live_pids())
                    await finish(rec)
            finally:
                with trio.CancelScope(shield=True):
                    for s in sessions.values():
                        await s.stop()

    try:
        async with trio.open_nursery() as nursery:
            for _ in range(starters):
                nursery.start_soon(worker)
    except* JournalError as group:
        # The journal cannot be written (a full disk): the run cannot go on, and the
        # user needs one line naming the file, not a group of tracebacks.
        first: BaseException = group
        while isinstance(first, BaseExceptionGroup):
            first = first.exceptions[0]
        raise JournalError(
            f"{first}; the {len(results)} games finished before are recorded: make room "
            "and continue the run with --resume"
        ) from None
    finally:
        reap_escapees(live_pids())
        journal.close()
        if progress is not None:
            progress.show(final=True)
    return sorted(results.values(), key=lambda r: r.game_id)


def _drain(pending: collections.deque[ScheduledGame]) -> Iterator[ScheduledGame]:
    """Hand out the games in order, dropping each one as it is taken."""
    while pending:
        yield pending.popleft()


def schedule_check(
    games: Iterable[ScheduledGame], rules: Rules, seed: Seed, *, sharded: bool = False
) -> Callable[[GameRecord], None]:
    """A check that a journaled record is the game the schedule says it is.

    The returned function raises :class:`~arbiter.record.RecordError` for a game id
    not in ``games`` (``sharded``: say "this shard"), and for engines, seats, pair,
    deal set, first dealer, rules, seed commitment or decks (dealt from ``seed``) that
    differ.  It does not re-referee (see :func:`~arbiter.journal.checked_entries`).
    """
    scheduled = {g.game_id: g for g in games}
    commitment = seed_sha256(seed)

    def check(rec: GameRecord) -> None:
        if rec.seed_sha256 != commitment:
            raise RecordError("played with another seed (seed_sha256 differs)")
        game = scheduled.get(rec.game_id)
        if game is None:
            where = "this shard of the schedule" if sharded else "the schedule"
            raise RecordError(f"game id {rec.game_id} is not in {where}")
        wrong = [
            name
            for name, ok in (
                ("engines", rec.engines == list(game.engines)),
                ("pair_id", rec.pair_id == game.pair_id),
                ("deal_set", rec.deal_set == game.deal_set),
                ("first_dealer", rec.first_dealer == game.first_dealer),
                ("rules", rec.rules == rules),
            )
            if not ok
        ]
        if wrong:
            raise RecordError(f"{', '.join(wrong)} differ from the schedule")
        check_decks(rec, seed)

    return check


def _update_streak(streak: dict[str, int], rec: GameResult) -> None:
    for seat, name in enumerate(rec.engines):
        if name not in streak:
            continue
        if rec.offender == seat and rec.reason not in ("withdrawn", "match_forfeit"):
            streak[name] += 1
        elif rec.offender != seat:
            streak[name] = 0


def _cores() -> int:
    """Cores this process may run on (CPU affinity, e.g. under a batch scheduler)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
