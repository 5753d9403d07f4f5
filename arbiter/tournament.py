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
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import msgspec
import trio

from arbiter.bot import BotCommand, live_pids
from arbiter.bot import Limits as BotLimits
from arbiter.config import (
    ConfigError,
    EngineConfig,
    FaultPolicy,
    ResolvedConfig,
    TournamentConfig,
    engine_argv,
    read_resolved,
)
from arbiter.faults import ArbiterError
from arbiter.game import GameSpec, TimeSettings, play_game, unplayed_record
from arbiter.journal import (
    Journal,
    JournalError,
    JournalReader,
    checked_entries,
    make_private_dir,
    open_private,
    open_private_fd,
    write_private,
)
from arbiter.preflight import preflight
from arbiter.record import GameRecord, RecordError, TerminationReason, check_decks
from arbiter.report import GameResult, result_of
from arbiter.rules import Rules, Seed, seed_is_short, seed_sha256
from arbiter.sandbox import (
    BotUserError,
    SandboxConflict,
    SandboxPlan,
    check_own_dirs,
    check_write_grants,
    linked_cwd,
    linked_grant,
    minimal_env,
    own_dirs,
    plan_warnings,
    process_cap,
    program_files,
    reap_escapees,
    resolve_bot_user,
    sandbox_enabled,
    user_for_engine,
    wrap_parts,
)
from arbiter.schedule import ScheduledGame, make_schedule, shard
from arbiter.session import QUIT_GRACE, BotSession
from arbiter.version import VERSION

__all__ = [
    "FaultBook",
    "Progress",
    "TournamentError",
    "engine_commands",
    "log_path",
    "resolve_config",
    "run_tournament",
    "schedule_check",
    "schedule_of",
    "short_seed_warning",
    "time_settings",
]


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
    check_engines: bool = True,
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
    warning goes to ``on_event``.  Unless ``check_engines`` is false, every engine with a
    game to play is first started once (:func:`~arbiter.preflight.preflight`): one that
    cannot start stops the run with :class:`~arbiter.preflight.PreflightError` before any
    game is scheduled; an output directory this call created is then removed again
    unless a log was written in it (see :func:`_new_output`).
    """
    sandboxed, warning = sandbox_enabled(config.sandbox)
    if warning is not None and on_event is not None:
        on_event(warning)
    # Resolved once: a link on the way, in a directory a bot may write, could otherwise
    # be swapped while the run writes through it.
    out_dir = Path(os.path.realpath(out_dir))
    with _new_output(out_dir), _locked(out_dir):
        prep = _prepare(config, out_dir, resume=resume, shard_spec=shard_spec, on_event=on_event)
        commands = _commands_for_run(
            prep.config,
            base_dir,
            out_dir,
            sandboxed=sandboxed,
            hidden=hidden_paths,
            sharded=shard_spec is not None,
            on_event=on_event,
        )
        # Before the preflight: with --debug, its traffic is logged there too.
        make_private_dir(out_dir / "logs")
        if check_engines and (needed := prep.engines_needed()):
            await preflight(
                {name: commands[name] for name in needed},
                options={e.name: e.options for e in prep.config.engines},
                handshake_ms=prep.config.time_control.handshake_ms,
                limits=_limits(prep.config),
            )
        _begin(prep, out_dir)
        run = _Run(
            prep,
            out_dir=out_dir,
            commands=commands,
            progress=progress,
            on_event=on_event,
            stop_when=stop_when,
            errors=[] if errors is None else errors,
        )
        workers = max(1, concurrency or config.concurrency or _cores())
        starters = min(workers, max(1, len(prep.todo)))
        queue = _drain(collections.deque(prep.todo))
        del prep  # the schedule is now only in the queue, which drops games as it hands them out
        try:
            async with trio.open_nursery() as nursery:
                for _ in range(starters):
                    nursery.start_soon(run.worker, queue)
        except* JournalError as group:
            # The journal cannot be written (a full disk): the run cannot go on, and the
            # user needs one line naming the file, not a group of tracebacks.
            first: BaseException = group
            while isinstance(first, BaseExceptionGroup):
                first = first.exceptions[0]
            raise JournalError(
                f"{first}; the {len(run.results)} games finished before are recorded: make "
                "room and continue the run with --resume"
            ) from None
        finally:
            reap_escapees(live_pids())
            run.journal.close()
            if progress is not None:
                progress.show(final=True)
        if on_event is not None:
            for name, count in sorted(run.ignored_quits.items()):
                if count:
                    on_event(_ignored_quit_warning(name, count))
        return sorted(run.results.values(), key=lambda r: r.game_id)


def _commands_for_run(
    config: TournamentConfig,
    base_dir: Path,
    out_dir: Path,
    *,
    sandboxed: bool,
    hidden: Sequence[str],
    sharded: bool,
    on_event: Callable[[str], None] | None,
) -> dict[str, BotCommand]:
    """:func:`engine_commands` for a run into ``out_dir``, its output checked against
    what the bots may read, and the sandbox's warnings told to ``on_event``."""
    commands = engine_commands(
        config, base_dir, sandboxed=sandboxed, hidden=hidden, out_dir=out_dir, warn=on_event
    )
    _check_visible_output(commands, out_dir, sharded=sharded)
    if on_event is not None:
        for line in plan_warnings({n: c.sandbox for n, c in commands.items()}):
            on_event(line)
    return commands


def _ignored_quit_warning(name: str, count: int) -> str:
    return (
        f"warning: engine {name!r}: {count} of its processes did not exit within "
        f"{QUIT_GRACE:g} s of quit and were killed (PROTOCOL §3.9.1); each cost the run "
        "that wait"
    )


def _choose_seed(
    config: TournamentConfig,
    old: ResolvedConfig | None,
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
        recorded = old.seed if old is not None else None
        seed = recorded if recorded is not None else secrets.token_hex(16)
    warning = short_seed_warning(seed)
    if on_event is not None and warning is not None:
        on_event(warning)
    return seed


def short_seed_warning(seed: Seed) -> str | None:
    """The warning for a seed of fewer than 128 bits (None for a long one)."""
    if not seed_is_short(seed):
        return None
    return (
        f"warning: seed {seed!r} is short: any bot that learns or guesses it can "
        "rebuild every deck; leave seed unset (a random 128-bit seed) for untrusted bots"
    )


def engine_commands(
    config: TournamentConfig,
    base_dir: Path,
    *,
    sandboxed: bool,
    hidden: Sequence[str],
    out_dir: Path | None = None,
    warn: Callable[[str], None] | None = None,
) -> dict[str, BotCommand]:
    """How to start each engine of ``config``: command, environment, sandbox and user.

    Each sandboxed engine sees its own directories and grants; ``hidden``, ``out_dir``,
    the other engines' own directories and earlier runs' outputs are masked from it.
    An ``out_dir`` (or an earlier run's output) that cannot be masked, being or
    containing the engine's own directory, is a :class:`TournamentError`.  Engines run
    as ``config.bot_user`` (see :func:`~arbiter.sandbox.resolve_bot_user`); one whose
    directories that user cannot reach is a :class:`TournamentError` naming the
    directory, and ``warn`` is told when ``auto`` has to keep root.
    """
    try:
        user, note = resolve_bot_user(config.bot_user, sandboxed=sandboxed)
    except BotUserError as exc:
        raise TournamentError(str(exc)) from None
    if note is not None and warn is not None:
        warn(note)
    if sandboxed:
        _refuse_linked_cwds(config, base_dir)
    launch = {e.name: engine_argv(e, base_dir) for e in config.engines}
    owns = {
        e.name: own_dirs(*launch[e.name], own_dir_configured=e.cwd is not None)
        for e in config.engines
    }
    writes = {e.name: [str(base_dir / p) for p in e.write_paths] for e in config.engines}
    if sandboxed:
        _refuse_linked_grants(config, base_dir, [d for dirs in owns.values() for d in dirs])
        shown = {
            e.name: [*owns[e.name], *(str(base_dir / p) for p in e.allow_paths), *writes[e.name]]
            for e in config.engines
        }
        try:
            check_own_dirs(owns, {n: program_files(*launch[n]) for n in launch})
            check_write_grants(shown, writes)
        except SandboxConflict as exc:
            raise TournamentError(str(exc)) from None
    if warn is not None and config.isolate_deals:
        for e in config.engines:
            if e.write_paths:
                warn(_notes_warning(e))
    commands = {}
    cap_warnings: set[str] = set()
    for e in config.engines:
        argv, cwd = launch[e.name]
        plan = None
        if sandboxed:
            # Other engines' directories, and the grants where they keep notes.
            others = [d for n in owns if n != e.name for d in (*owns[n], *writes[n])]
            try:
                plan = SandboxPlan.for_engine(
                    argv,
                    cwd,
                    own_dir_configured=e.cwd is not None,
                    allow_paths=[str(base_dir / p) for p in e.allow_paths],
                    write_paths=[str(base_dir / p) for p in e.write_paths],
                    hidden=[*hidden, *others],
                    secret=[] if out_dir is None else [str(out_dir)],
                    network=e.network,
                )
            except SandboxConflict as exc:
                raise TournamentError(f"engine {e.name!r}: {exc}") from None
        base_env = None if e.inherit_env else minimal_env(home="/tmp" if sandboxed else None)
        try:
            runs_as = user_for_engine(e.name, config.bot_user, user, plan)
        except BotUserError as exc:
            raise TournamentError(str(exc)) from None
        own_namespace, processes, cap_warning = process_cap(
            config.limits.processes, runs_as, sandboxed=plan is not None
        )
        if cap_warning is not None and warn is not None and cap_warning not in cap_warnings:
            cap_warnings.add(cap_warning)
            warn(cap_warning)
        command = BotCommand(
            argv,
            cwd,
            dict(e.env),
            base_env=base_env,
            sandbox=plan,
            user=runs_as,
            own_namespace=own_namespace,
            processes=processes,
        )
        _dry_run(e.name, command)
        commands[e.name] = command
    return commands


def _dry_run(name: str, command: BotCommand) -> None:
    """Build a sandboxed command's arguments once: what would stop every start of the
    engine (a program path bwrap's chain cannot run) is said now, as one error."""
    if command.sandbox is None:
        return
    try:
        wrap_parts(
            command.argv,
            command.cwd,
            command.sandbox,
            user=command.user,
            env=command.environment(),
            own_namespace=command.own_namespace,
            processes=command.processes,
        )
    except SandboxConflict as exc:
        raise TournamentError(f"engine {name!r}: {exc}") from None


def _refuse_linked_cwds(config: TournamentConfig, base_dir: Path) -> None:
    """Refuse an engine whose configured ``cwd`` is reached through a symbolic link below
    the config's directory (a link there may be the bot's)."""
    for e in config.engines:
        target = linked_cwd(e.cwd, str(base_dir)) if e.cwd else None
        if target is not None:
            raise TournamentError(
                f"engine {e.name!r}: its cwd {e.cwd} leads through a symbolic link to "
                f"{target}; a link below the config's directory may be the bot's, which would "
                "choose what it is shown: give the directory's real path"
            )


def _refuse_linked_grants(config: TournamentConfig, base_dir: Path, owns: list[str]) -> None:
    """Refuse a grant that reaches its directory through a symbolic link kept below the
    config's directory or in an engine's own (a bot's link there would choose what the
    bot is granted: ``data -> /proc``)."""
    roots = [os.path.realpath(base_dir), *owns]
    for e in config.engines:
        for key, paths in (("allow_paths", e.allow_paths), ("write_paths", e.write_paths)):
            for path in paths:
                found = linked_grant(str(base_dir / path), roots)
                if found is not None:
                    link, target = found
                    raise TournamentError(
                        f"engine {e.name!r}: {key} entry {path} leads through the symbolic "
                        f"link {link} to {target}; a link in an engine's directory or below "
                        "the config's may be a bot's, which would choose what it is granted: "
                        "give the real path"
                    )


def _notes_warning(engine: EngineConfig) -> str:
    """The warning that an engine with ``write_paths`` can remember deals across processes."""
    return (
        f"warning: engine {engine.name!r} may write {', '.join(engine.write_paths)} "
        "(write_paths): it can keep notes from one process to the next, the "
        "cards of a duplicate pair's first game included, which isolate_deals "
        "cannot stop; grant write_paths only to bots you trust"
    )


def _check_visible_output(
    commands: Mapping[str, BotCommand], out_dir: Path, *, sharded: bool
) -> None:
    """Refuse, for a shard, an output directory that a sandboxed engine may read.

    This run's bots do not see the output directory (it is masked; one inside a
    directory they may write is refused by their :class:`SandboxPlan`), but shards
    share their seed and run side by side: the bots of one, started before the other's
    output existed, would read every deal in it.
    """
    for name, command in commands.items():
        if command.sandbox is None:
            continue
        holder = command.sandbox.dir_holding(str(out_dir)) if sharded else None
        if holder is not None:
            raise TournamentError(
                f"the output directory {out_dir} of this shard lies inside {holder}, which "
                f"engine {name!r} may read: the bots of the other shards, which share the "
                "seed and run beside it, could read every deal from it; choose an --out "
                "outside it"
            )


@contextlib.contextmanager
def _new_output(out_dir: Path) -> Iterator[None]:
    """Create ``out_dir`` if needed; if this call created it and the run stops before it
    wrote anything (a refused config, an engine that cannot start), remove it again, so
    the same command can be given again once the problem is fixed.  A directory that
    holds anything but the lock and an empty ``logs/`` is left as it is."""
    created = not out_dir.exists()
    make_private_dir(out_dir)
    try:
        yield
    except BaseException:
        if created:
            _remove_if_unused(out_dir)
        raise


def _remove_if_unused(out_dir: Path) -> None:
    try:
        entries = set(os.listdir(out_dir))
        logs = out_dir / "logs"
        if not entries <= {".lock", "logs"} or ("logs" in entries and os.listdir(logs)):
            return
        if "logs" in entries:
            logs.rmdir()
        if ".lock" in entries:
            (out_dir / ".lock").unlink()
        out_dir.rmdir()
    except OSError:
        pass  # something appeared meanwhile, or it is not ours to remove: leave it


@contextlib.contextmanager
def _locked(out_dir: Path) -> Iterator[None]:
    fd = open_private_fd(out_dir / ".lock", os.O_RDWR)
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


def resolve_config(
    config: TournamentConfig, shard_spec: tuple[int, int] | None = None
) -> ResolvedConfig:
    """The config as it will be run (its seed set), with the rules and versions it resolved
    to: what ``config.resolved.json`` holds."""
    return ResolvedConfig(
        **msgspec.structs.asdict(config),
        rules_resolved=config.resolved_rules(),
        shard=None if shard_spec is None else f"{shard_spec[0]}/{shard_spec[1]}",
        versions={
            "arbiter": VERSION,
            "python": platform.python_version(),
            "trio": trio.__version__,
            "msgspec": msgspec.__version__,
        },
    )


@dataclass
class _Prepared:
    """A run ready to play: its config with the seed fixed, and what is left to do."""

    config: ResolvedConfig
    rules: Rules
    todo: list[ScheduledGame]
    """Games still to play, in schedule order."""
    found: list[GameResult]
    """Games the journal already holds (on resume), in game-id order."""
    good_bytes: int
    """Length of the journal's intact part (a torn last line is cut off)."""
    book: FaultBook
    """The faults of the games found, withdrawals included."""

    def engines_needed(self) -> list[str]:
        """Engines that play a game still to do (withdrawn ones play none), config order."""
        needed = {name for game in self.todo for name in game.engines}
        return [
            e.name
            for e in self.config.engines
            if e.name in needed and e.name not in self.book.withdrawn
        ]


def _prepare(
    config: TournamentConfig,
    out_dir: Path,
    *,
    resume: bool,
    shard_spec: tuple[int, int] | None,
    on_event: Callable[[str], None] | None,
) -> _Prepared:
    """Fix the seed, check a resume against the interrupted run and read its journal back;
    nothing is written yet (see :func:`_begin`)."""
    journal_path = out_dir / "games.jsonl"
    resolved_path = out_dir / "config.resolved.json"
    old: ResolvedConfig | None = None
    if resume and resolved_path.exists():
        try:
            old = read_resolved(resolved_path)
        except ConfigError as exc:
            raise TournamentError(str(exc)) from None
    run_seed = _choose_seed(config, old, shard_spec, on_event)
    resolved = resolve_config(msgspec.structs.replace(config, seed=run_seed), shard_spec)
    reader = JournalReader(journal_path)
    if not resume:
        held = sum(1 for _ in reader)
        if held:
            raise TournamentError(
                f"{out_dir} already holds {held} finished games; continue them with "
                "--resume, or choose another output directory with --out"
            )
    if old is not None:
        changed = old.differences(resolved)
        if changed:
            raise TournamentError(
                f"cannot resume in {out_dir}: the config differs from the interrupted run in "
                f"{', '.join(changed)}"
            )
    rules = resolved.resolved_rules()
    games = schedule_of(resolved)
    if shard_spec is not None:
        games = shard(games, *shard_spec)
    found: dict[int, GameResult] = {}
    if resume:
        check = schedule_check(games, rules, run_seed, sharded=shard_spec is not None)
        for entry in checked_entries(reader, check):
            found[entry.record.game_id] = result_of(entry.record)
    for warning in reader.warnings:
        if on_event is not None:
            on_event(f"warning: {warning}; its game will be played again")
    book = FaultBook((e.name for e in config.engines), config.faults)
    for r in found.values():  # in journal order, which is the order the games finished in
        book.note(r)
    done = sorted(found.values(), key=lambda r: r.game_id)
    return _Prepared(
        config=resolved,
        rules=rules,
        todo=[g for g in games if g.game_id not in found],
        found=done,
        good_bytes=reader.good_bytes,
        book=book,
    )


def _begin(prep: _Prepared, out_dir: Path) -> None:
    """Create the stderr logs and write ``config.resolved.json``: the run is under way."""
    for e in prep.config.engines:
        # Bot stderr logs are opened for appending later on: create them owner-only now.
        open_private(log_path(out_dir, e.name), os.O_WRONLY).close()
    write_private(
        out_dir / "config.resolved.json",
        msgspec.json.format(msgspec.json.encode(prep.config)) + b"\n",
    )


def time_settings(config: TournamentConfig) -> TimeSettings:
    """The time control of every game of ``config``."""
    tc = config.time_control
    return TimeSettings(
        per_move_ms=tc.per_move_ms or 1000,
        clock_ms=tc.clock_ms,
        increment_ms=tc.increment_ms,
        grace_ms=tc.grace_ms,
        handshake_ms=tc.handshake_ms,
    )


def _limits(config: TournamentConfig) -> BotLimits | None:
    """The resource limits of every bot process, if any is set."""
    if not (config.limits.memory_mb or config.limits.cpu_seconds):
        return None
    return BotLimits(memory_mb=config.limits.memory_mb, cpu_seconds=config.limits.cpu_seconds)


class FaultBook:
    """The run's faults in completion order: faults in a row per engine, withdrawals and
    (under ``forfeit_match``) match forfeits, and the games they forfeit unplayed."""

    def __init__(self, engines: Iterable[str], policy: FaultPolicy) -> None:
        self.policy = policy
        self.streak: dict[str, int] = dict.fromkeys(engines, 0)
        """Faults in a row of each engine (a game it did not fault resets it)."""
        self.withdrawn: set[str] = set()
        self.match_forfeits: set[tuple[str, str]] = set()
        """``(offender, opponent)``: the offender forfeits its games against the opponent."""

    def note(self, rec: GameResult) -> str | None:
        """Count a finished game; the announcement if it withdraws an engine."""
        for seat, name in enumerate(rec.engines):
            if name not in self.streak:
                continue
            if rec.offender == seat and rec.reason not in ("withdrawn", "match_forfeit"):
                self.streak[name] += 1
            elif rec.offender != seat:
                self.streak[name] = 0
        if rec.offender is None:
            return None
        off = rec.engines[rec.offender]
        if self.policy.policy == "forfeit_match":
            self.match_forfeits.add((off, rec.engines[1 - rec.offender]))
        if self.streak.get(off, 0) >= self.policy.withdraw_after and off not in self.withdrawn:
            self.withdrawn.add(off)
            return f"{off} withdrawn after {self.streak[off]} faults in a row"
        return None

    def forfeit(self, engines: tuple[str, str]) -> tuple[int, TerminationReason, str] | None:
        """``(offender seat, reason, detail)`` if a game of ``engines`` must not be played."""
        for seat, name in enumerate(engines):
            if name in self.withdrawn:
                return seat, "withdrawn", f"{name} was withdrawn after repeated faults"
        for seat, name in enumerate(engines):
            if (name, engines[1 - seat]) in self.match_forfeits:
                return seat, "match_forfeit", f"{name} forfeited the match after a fault"
        return None


class _SessionPool:
    """One worker's bot processes: a session per engine of the game at hand.

    Processes are reused from game to game; the ones the next game does not need are
    stopped, or idle ones would pile up (one per engine per worker).
    """

    def __init__(
        self, make: Callable[[str], BotSession], ignored_quits: collections.Counter[str]
    ) -> None:
        self._make = make
        self._sessions: dict[str, BotSession] = {}
        self._ignored_quits = ignored_quits

    async def _stop(self, session: BotSession) -> None:
        await session.stop()
        self._ignored_quits[session.name] += session.ignored_quits

    async def pair(self, engines: tuple[str, str]) -> tuple[BotSession, BotSession]:
        """The sessions of seats 0 and 1 (started by the game itself)."""
        for name in [n for n in self._sessions if n not in engines]:
            await self._stop(self._sessions.pop(name))
        for name in engines:
            if name not in self._sessions:
                self._sessions[name] = self._make(name)
        return self._sessions[engines[0]], self._sessions[engines[1]]

    async def close(self) -> None:
        """Stop every process, even when cancelled."""
        with trio.CancelScope(shield=True):
            for session in self._sessions.values():
                await self._stop(session)
        self._sessions.clear()


class _Run:
    """The games of a prepared run being played by the workers, and what they finished."""

    def __init__(
        self,
        prep: _Prepared,
        *,
        out_dir: Path,
        commands: dict[str, BotCommand],
        progress: Progress | None,
        on_event: Callable[[str], None] | None,
        stop_when: Callable[[GameResult], bool] | None,
        errors: list[str],
    ) -> None:
        config = prep.config
        self.config = config
        self.rules = prep.rules
        self.out_dir = out_dir
        self.commands = commands
        self.progress = progress
        self.on_event = on_event
        self.stop_when = stop_when
        self.errors = errors
        """Messages of games aborted by an arbiter error (not recorded)."""
        self.results: dict[int, GameResult] = {}
        """Every finished game, found on resume or played now."""
        self.ignored_quits: collections.Counter[str] = collections.Counter()
        """Per engine, processes that had to be signalled after ``quit``."""
        self.book = prep.book
        self.stopping = False
        """Set when ``stop_when`` says so: no new game is started."""
        self.time = time_settings(config)
        self.limits = _limits(config)
        self.journal = Journal(out_dir / "games.jsonl", truncate_to=prep.good_bytes)
        self._journal_lock = trio.Lock()
        if progress is not None:
            progress.total = len(prep.todo) + len(prep.found)
            progress.engines = len(config.engines)
        for r in prep.found:  # already in the fault book
            self._count(r, replayed=True)

    def _count(self, rec: GameResult, *, replayed: bool = False) -> None:
        """Take a finished game (``replayed``: found on resume) into the results and the
        progress."""
        self.results[rec.game_id] = rec
        if self.progress is not None:
            self.progress.record(rec, replayed=replayed)
        if self.stop_when is not None and self.stop_when(rec):
            self.stopping = True

    async def finish(self, record: GameRecord) -> None:
        """Journal a finished game (fsync'ed before it counts) and count it."""
        # The fsync runs in a thread: the event loop keeps timing the other games' bots.
        async with self._journal_lock:
            await trio.to_thread.run_sync(self.journal.append, record)
        rec = result_of(record)
        announcement = self.book.note(rec)
        if announcement is not None and self.on_event is not None:
            self.on_event(announcement)
        self._count(rec)

    def spec_of(self, game: ScheduledGame) -> GameSpec:
        """Everything that fixes ``game`` before it is played."""
        assert self.config.seed is not None
        return GameSpec(
            game_id=game.game_id,
            engines=game.engines,
            rules=self.rules,
            seed=self.config.seed,
            deal_set=game.deal_set,
            first_dealer=game.first_dealer,
            pair_id=game.pair_id,
            match=f"{game.pairing[0]}~{game.pairing[1]}",
            time=self.time,
            fault_policy=self.config.faults.policy,
            isolate_deals=self.config.isolate_deals,
        )

    def session(self, name: str, nursery: trio.Nursery) -> BotSession:
        """A new (not yet started) session of engine ``name``."""
        engine = next(e for e in self.config.engines if e.name == name)
        return BotSession(
            name,
            self.commands[name],
            nursery,
            options=engine.options,
            log_path=log_path(self.out_dir, name),
            limits=self.limits,
            handshake_ms=self.config.time_control.handshake_ms,
        )

    async def worker(self, queue: Iterator[list[ScheduledGame]]) -> None:
        """Take groups of games from ``queue`` and play (or forfeit) each group's games in
        turn until none is left."""
        async with trio.open_nursery() as nursery:
            pool = _SessionPool(lambda name: self.session(name, nursery), self.ignored_quits)
            games = (game for group in queue for game in group)
            try:
                while not self.stopping:
                    game = next(games, None)
                    if game is None:
                        break
                    forfeit = self.book.forfeit(game.engines)
                    if forfeit is not None:
                        await self.finish(unplayed_record(self.spec_of(game), *forfeit))
                        continue
                    seats = await pool.pair(game.engines)
                    try:
                        rec = await play_game(self.spec_of(game), seats, on_event=self.on_event)
                    except ArbiterError as exc:
                        # Our bug, not a bot's: report it, record nothing (a resume plays
                        # the game again) and carry on with the other games.
                        self.errors.append(str(exc))
                        if self.on_event is not None:
                            self.on_event(f"error: {exc} (not recorded; --resume plays it again)")
                        continue
                    finally:
                        # Processes that left a bot's group with setsid() and outlived it.
                        reap_escapees(live_pids())
                    await self.finish(rec)
            finally:
                await pool.close()


def _drain(pending: collections.deque[ScheduledGame]) -> Iterator[list[ScheduledGame]]:
    """Hand out the games in order, a deal set's games at a time, dropping each group as
    it is taken.

    The schedule lists the games of one deal set together (both games of a duplicate
    pair, and the same deals in every pairing).  One worker plays them in turn, so no
    process that has seen those deals is alive while another plays them: bots running at
    the same time share a kernel, and could pass the cards through it (file locks,
    inotify) to their copy across the table, which the sandbox cannot stop.
    """
    while pending:
        group = [pending.popleft()]
        while pending and pending[0].deal_set == group[0].deal_set:
            group.append(pending.popleft())
        yield group


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


def _cores() -> int:
    """Cores this process may run on (CPU affinity, e.g. under a batch scheduler)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def log_path(out_dir: Path, engine: str) -> Path:
    """The stderr log of an engine's processes in a run's output directory."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in engine)
    return out_dir / "logs" / f"{safe}.stderr.log"
