"""The ``ecarte`` command: tournament, match, check, stats, merge, show, report, play."""

from __future__ import annotations

import argparse
import collections
import contextlib
import difflib
import errno
import io
import math
import os
import re
import secrets
import shlex
import shutil
import signal
import sys
import time
import traceback
import typing
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any, Final, NamedTuple, NoReturn

import msgspec
import trio
import yaml

from arbiter.bot import traffic_dir
from arbiter.check import terminal_safe
from arbiter.config import (
    BUNDLED_ENGINES,
    ConfigError,
    EngineConfig,
    ResolvedConfig,
    RulesConfig,
    TimeControl,
    TournamentConfig,
    check_config,
    load_config,
    parse_config,
    read_resolved,
    rule_options,
)
from arbiter.journal import (
    JournalError,
    JournalReader,
    checked_entries,
    digest,
    encode_record,
    make_private_dir,
    write_private,
    write_records,
)
from arbiter.preflight import PreflightError
from arbiter.record import GameRecord
from arbiter.report import GameResult, build_report, pgn_of, result_of
from arbiter.rules import PRESETS, Seed, make_rules, seed_sha256
from arbiter.sandbox import (
    BOT_USER_AUTO,
    BotUserError,
    SandboxConflict,
    SandboxMode,
    SandboxUnavailable,
    guard_arbiter,
)
from arbiter.schedule import ScheduleError, parse_shard, shard
from arbiter.stats import SprtState
from arbiter.tournament import (
    Progress,
    TournamentError,
    run_tournament,
    schedule_check,
    schedule_of,
)
from arbiter.version import VERSION

__all__ = ["main"]


EXIT_OK = 0
"""Every game was played without a fault."""
EXIT_ARBITER_ERROR = 1
"""Games were aborted by an error of the arbiter (not recorded; ``--resume`` plays them)."""
EXIT_USAGE = 2
"""A bad command line, config or results file, or an engine that cannot start."""
EXIT_FAULTS = 3
"""The run finished, but games were lost by faults (an engine may have been withdrawn)."""


class UsageError(Exception):
    """A command line that cannot be carried out; printed without a traceback."""


def _say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def default_config_text() -> str:
    """The embedded default tournament (a round-robin of the bundled engines)."""
    return resources.files("arbiter").joinpath("default.yaml").read_text(encoding="utf-8")


def _run_seed(out: Path) -> int:
    """A bootstrap seed for a reproducible report, derived from the run's seed commitment."""
    try:
        seed = read_resolved(out / "config.resolved.json").seed
    except ConfigError:
        return 0
    # From the public SHA-256 of the seed, so the report does not depend on the secret.
    return 0 if seed is None else int(seed_sha256(seed)[:16], 16)


def _seed_arg(text: str) -> Seed:
    """``--seed``: an integer written in decimal, or any other text (a string seed)."""
    if not text:
        raise argparse.ArgumentTypeError("empty seed: omit --seed for a random 128-bit seed")
    return int(text) if re.fullmatch(r"-?[1-9][0-9]*|0", text) else text


def _write_outputs(results: list[GameResult], out: Path, seed: int) -> str:
    report = build_report(results, seed=seed)
    write_private(
        out / "standings.json", msgspec.json.format(msgspec.json.encode(report.to_json())) + b"\n"
    )
    return report.text()


@dataclass(frozen=True, slots=True)
class ResumeCommand:
    """The command line that continues an interrupted run, as its subcommand knows it."""

    words: tuple[str, ...]
    """The command up to ``--resume``: ``ecarte tournament CONFIG``, ``ecarte match A B ...``."""
    seed: Seed | None = None
    """The seed the user typed.  A drawn one is read back from config.resolved.json and
    never goes on a command line."""
    shard: tuple[int, int] | None = None
    """The slice K/N of the schedule being run, if any."""

    def line(self, out: Path) -> str:
        """The shell-quoted command that resumes the run in ``out``."""
        parts = [*self.words, "--resume", "--out", str(out)]
        if self.seed is not None:
            parts += ["--seed", str(self.seed)]
        if self.shard:
            parts += ["--shard", f"{self.shard[0]}/{self.shard[1]}"]
        return shlex.join(parts)


# ----------------------------------------------------------------------------- tournament


def cmd_tournament(args: argparse.Namespace) -> int:
    if args.config is None:
        config = parse_config(default_config_text(), "<default tournament>")
        base = Path.cwd()
        source = None
        if args.out is None and args.resume:
            runs = sorted(str(p) for p in Path(config.out).parent.glob("bundled-*"))
            raise UsageError(
                "--resume needs --out DIR naming the run to continue"
                + (f" (earlier runs: {', '.join(runs[-3:])})" if runs else "")
            )
        if args.out is None:
            # Each run of the quick start gets its own directory, so running it again
            # just works (and keeps the earlier results).
            stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
            config = msgspec.structs.replace(config, out=f"{config.out}-{stamp}")
    else:
        config = load_config(args.config)
        base = Path(args.config).resolve().parent
        source = args.config
    overrides: dict[str, Any] = {}
    if args.seed is not None:
        overrides["seed"] = args.seed
    if args.concurrency is not None:
        if args.concurrency < 1:
            raise UsageError("--concurrency must be at least 1")
        overrides["concurrency"] = args.concurrency
    if args.out is not None:
        overrides["out"] = args.out
    if overrides:
        config = msgspec.structs.replace(config, **overrides)
    shard_spec = parse_shard(args.shard) if args.shard else None
    # The config's out: is relative to the config file, --out to the shell's directory.
    out = Path(config.out) if args.out is not None else base / config.out
    words = ("ecarte", "tournament", *([source] if source else []))
    resume_with = ResumeCommand(words, seed=args.seed, shard=shard_spec)
    return _run(config, base, out, args.resume, shard_spec, source, args, resume_with)


def _run(
    config: TournamentConfig,
    base: Path,
    out: Path,
    resume: bool,
    shard_spec: tuple[int, int] | None,
    source: str | None,
    args: argparse.Namespace,
    resume_with: ResumeCommand,
    stop_when: Callable[[GameResult], bool] | None = None,
    progress: Progress | None = None,
    summary: Callable[[], str] | None = None,
) -> int:
    if progress is None:
        progress = Progress(total=0, stream=sys.stderr, quiet=args.quiet)
    say = progress.say
    errors: list[str] = []
    _say(f"{config.name}: {len(config.engines)} engines, output in {out}/")
    # Every file of the run is written at the place the output path leads to now: a link
    # on the way, in a directory a bot may write, cannot be repointed under the run.
    out = Path(os.path.realpath(out))
    if args.sandbox:
        config = msgspec.structs.replace(config, sandbox=args.sandbox)
    if args.bot_user:
        config = msgspec.structs.replace(config, bot_user=args.bot_user)
    hidden = [str(Path(source).resolve())] if source else []
    stopped_by: list[int] = []

    async def play() -> list[GameResult] | None:
        return await _until_signal(
            stopped_by,
            run_tournament(
                config,
                base_dir=base,
                out_dir=out,
                resume=resume,
                shard_spec=shard_spec,
                progress=progress,
                on_event=lambda text: say(terminal_safe(text)),  # may quote a bot
                stop_when=stop_when,
                errors=errors,
                hidden_paths=hidden,
            ),
        )

    try:
        results = trio.run(play)
        if results is None:
            raise KeyboardInterrupt
    except BaseException as exc:
        # Ctrl+C arrives as KeyboardInterrupt, usually inside an exception group from
        # the nurseries that were running games; SIGTERM and SIGHUP take the same path.
        if not isinstance(exc, KeyboardInterrupt) and not (
            isinstance(exc, BaseExceptionGroup) and exc.subgroup(KeyboardInterrupt) is not None
        ):
            raise
        by_signal = stopped_by and stopped_by[0] != signal.SIGINT
        what = f"stopped by {signal.Signals(stopped_by[0]).name}" if by_signal else "interrupted"
        _say(
            f"\n{what}: every finished game is in "
            f"{out / 'games.jsonl'}; all bots were stopped.\nresume with: " + resume_with.line(out)
        )
        # The shell's convention: 128 + the signal (130 for Ctrl+C, 143 SIGTERM, 129 SIGHUP).
        return 128 + (stopped_by[0] if stopped_by else signal.SIGINT)
    print(_write_outputs(results, out, _run_seed(out)))
    print(f"records: {out / 'games.jsonl'}   standings: {out / 'standings.json'}")
    _report_after_run(out, len(results))
    if summary is not None:
        print(summary())
    faults = fault_summary(results, out)
    if faults is not None:
        _say(faults)
    if errors:
        _say(
            f"{len(errors)} game(s) were aborted by arbiter errors and not recorded; "
            "please report them. --resume plays them again."
        )
        return EXIT_ARBITER_ERROR
    return EXIT_OK if faults is None else EXIT_FAULTS


def fault_summary(results: list[GameResult], out: Path) -> str | None:
    """The closing words on a run with faults (None without): how many games were lost
    by a fault, by whom and why, and which engines were withdrawn."""
    lost = [r for r in results if r.offender is not None]
    if not lost:
        return None
    by_engine: dict[str, collections.Counter[str]] = {}
    for r in lost:
        assert r.offender is not None and r.reason is not None
        by_engine.setdefault(r.engines[r.offender], collections.Counter())[r.reason] += 1
    parts = []
    for engine in sorted(by_engine):
        reasons = ", ".join(f"{why} {n}" for why, n in by_engine[engine].most_common())
        parts.append(f"{engine} ({reasons})")
    withdrawn = sorted(e for e, reasons in by_engine.items() if reasons["withdrawn"])
    text = (
        f"the run had faults: {len(lost)} of {len(results)} games were lost by a fault: "
        + "; ".join(parts)
    )
    if withdrawn:
        text += f". Withdrawn: {', '.join(withdrawn)} (their remaining games were forfeited)"
    first = lost[0].game_id
    return (
        text + f". Exit status {EXIT_FAULTS}. To see a game: ecarte show {shlex.quote(str(out))} "
        f"{first}"
    )


async def _until_signal(
    stopped_by: list[int], job: Coroutine[Any, Any, list[GameResult]]
) -> list[GameResult] | None:
    """Run ``job``; on Ctrl+C (SIGINT), SIGTERM or SIGHUP cancel it (bots stopped,
    journal closed) and return None.

    Batch schedulers (Slurm, Kubernetes) and ``timeout`` stop a job with SIGTERM, and a
    closed terminal sends SIGHUP: all three end the run the same way.  Ctrl+C is taken
    here too rather than as a KeyboardInterrupt, which trio raises wherever the code
    happens to be, a finaliser included, where Python prints it and carries on.  A
    SIGINT ignored from the start (a background job's) stays ignored.
    """
    watched = [signal.SIGTERM, signal.SIGHUP]
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        watched.append(signal.SIGINT)
    result: list[GameResult] | None = None
    try:
        async with trio.open_nursery() as nursery:

            async def watch() -> None:
                with trio.open_signal_receiver(*watched) as signals:
                    async for signum in signals:
                        stopped_by.append(signum)
                        nursery.cancel_scope.cancel()
                        return

            nursery.start_soon(watch)
            result = await job
            nursery.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        # This nursery's own wrapping: hand the job's error on as the job raised it.
        if len(group.exceptions) == 1:
            raise group.exceptions[0] from None
        raise
    return result


# ----------------------------------------------------------------------------- match


def _engine_name(argv: list[str]) -> str:
    """``python3 bots/mybot.py --fast`` is named ``mybot``; ``./mybot`` is named ``mybot``."""
    words = [w for w in argv if not w.startswith("-")]
    name = Path(words[-1] if words else argv[0]).name
    for ext in (".py", ".js", ".exe"):
        name = name.removesuffix(ext)
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in name) or "bot"


def _engine(spec: str) -> EngineConfig:
    """A bundled engine by name, or a command line named after its program or script."""
    if spec in BUNDLED_ENGINES:
        return EngineConfig(name=spec)
    argv = shlex.split(spec)
    if not argv or not (shutil.which(argv[0]) or Path(argv[0]).is_file()):
        raise UsageError(
            f"{spec!r} is neither a bundled engine ({', '.join(BUNDLED_ENGINES)}) nor a "
            "command that can be found"
        )
    return EngineConfig(name=_engine_name(argv), command=spec)


def _scalar(text: str) -> Any:
    """A value typed on the command line: a number, true/false, null, or else the text."""
    try:
        value = yaml.safe_load(text)
    except yaml.YAMLError:
        return text
    return value if isinstance(value, str | int | float | bool | None) else text


ENGINE_KEYS = ("cmd", "name", "dir", "option.KEY", "env.KEY")
"""What ``--engine`` takes, cutechess style: ``--engine cmd=./bot name=mine option.depth=3``."""


def _engine_spec(terms: list[str]) -> EngineConfig:
    """An engine from ``--engine`` terms (``cmd`` is a bundled name or a command line)."""
    fields: dict[str, str] = {}
    options: dict[str, Any] = {}
    env: dict[str, str] = {}
    for term in terms:
        key, sep, value = term.partition("=")
        if not sep or not key:
            raise UsageError(
                f"--engine {term!r}: expected KEY=VALUE with KEY one of {', '.join(ENGINE_KEYS)}"
            )
        if key.startswith("option.") and key != "option.":
            options[key.removeprefix("option.")] = _scalar(value)
        elif key.startswith("env.") and key != "env.":
            env[key.removeprefix("env.")] = value
        elif key in ("cmd", "name", "dir"):
            if key in fields:
                raise UsageError(f"--engine: {key}= is given twice")
            fields[key] = value
        else:
            raise UsageError(
                f"--engine {term!r}: unknown key {key!r}; known keys: {', '.join(ENGINE_KEYS)}"
            )
    if not fields.get("cmd"):
        raise UsageError(
            "--engine needs cmd=COMMAND (a bundled engine name or a command line), "
            f"got {' '.join(terms)!r}"
        )
    cmd = fields["cmd"]
    cwd = fields.get("dir")
    if cmd in BUNDLED_ENGINES:
        engine = EngineConfig(name=cmd, builtin=cmd)
    else:
        argv = shlex.split(cmd)
        if not argv:
            raise UsageError("--engine cmd= is empty")
        program = Path(cwd or ".") / argv[0] if "/" in argv[0] else None
        if not (program.is_file() if program else shutil.which(argv[0])):
            raise UsageError(
                f"--engine cmd={cmd!r}: {argv[0]!r} is neither a bundled engine "
                f"({', '.join(BUNDLED_ENGINES)}) nor a program that can be found"
                + (f" in {cwd!r}" if cwd and program else "")
            )
        engine = EngineConfig(name=_engine_name(argv), command=cmd)
    if cwd is not None and not Path(cwd).is_dir():
        raise UsageError(f"--engine dir={cwd!r}: no such directory")
    return msgspec.structs.replace(
        engine, name=fields.get("name", engine.name), cwd=cwd, options=options, env=env
    )


def _names_given(terms: list[str]) -> list[str]:
    """The name= of an --engine, if it has one."""
    return [t.removeprefix("name=") for t in terms if t.startswith("name=")]


def _unique_names(engines: list[EngineConfig]) -> list[EngineConfig]:
    """Engines named twice get -2, -3, ... (``match random random``)."""
    seen: dict[str, int] = {}
    out = []
    for e in engines:
        n = seen[e.name] = seen.get(e.name, 0) + 1
        if n > 1:
            builtin = e.builtin or (e.name if e.command is None else None)
            e = msgspec.structs.replace(e, name=f"{e.name}-{n}", builtin=builtin)
        out.append(e)
    return out


def _parse_sprt(tokens: list[str]) -> dict[str, float]:
    values = {"elo0": 0.0, "elo1": 10.0, "alpha": 0.05, "beta": 0.05}
    for tok in tokens:
        key, sep, val = tok.partition("=")
        if not sep or key not in values:
            raise UsageError(f"bad --sprt term {tok!r}: expected elo0=X elo1=Y [alpha=A] [beta=B]")
        try:
            values[key] = float(val)
        except ValueError:
            raise UsageError(f"bad --sprt value {tok!r}: {val!r} is not a number") from None
        if not math.isfinite(values[key]):
            raise UsageError(f"bad --sprt value {tok!r}: not a finite number")
    if values["elo1"] <= values["elo0"]:
        raise UsageError("--sprt needs elo1 > elo0")
    for key in ("alpha", "beta"):
        if not 0.0 < values[key] < 0.5:
            raise UsageError(
                f"--sprt {key}={values[key]:g}: an error rate must lie strictly between 0 "
                "and 0.5 (e.g. 0.05)"
            )
    return values


def _positive_int(what: str) -> Callable[[str], int]:
    """An argparse type: a whole number of at least 1, refused with a message naming ``what``."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of {what}") from None
        if value < 1:
            raise argparse.ArgumentTypeError(f"{value} {what}: must be at least 1")
        return value

    return parse


def _seconds(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise UsageError(f"--clock: {what} {text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise UsageError(f"--clock: {what} {text!r} must be a number of seconds >= 0")
    return value


def _clock(text: str) -> tuple[int, int]:
    """``--clock BASE[+INC]`` in seconds (``60+0.5``) as milliseconds (bank, increment)."""
    if "/" in text:
        raise UsageError(
            f"--clock {text}: moves per period (cutechess 40/60) do not exist here; a clock is "
            "BASE[+INC] in seconds, e.g. 60+0.5"
        )
    base_text, _, inc_text = text.partition("+")
    base = _seconds(base_text, "clock base")
    inc = _seconds(inc_text, "clock increment") if inc_text else 0.0
    if round(base * 1000) < 1:
        raise UsageError(f"--clock {text}: the bank must be more than 0 seconds")
    return round(base * 1000), round(inc * 1000)


def cmd_match(args: argparse.Namespace) -> int:
    engines = _match_engines(args)
    if args.sprt is not None and len(engines) != 2:
        raise UsageError(f"--sprt tests one engine against one other, not {len(engines)} engines")
    if args.gauntlet and len(engines) < 3:
        raise UsageError("--gauntlet plays the first engine against the rest: name three or more")
    games = args.games if args.games is not None else 20_000 if args.sprt is not None else 20
    if games % 2:
        raise UsageError(
            f"--games {games}: games are played in duplicate pairs, use an even number"
        )
    config = _match_config(args, engines, games)
    out = Path(config.out)
    progress = Progress(total=0, stream=sys.stderr, quiet=args.quiet)
    stop_when, summary = None, None
    if args.sprt is not None:
        stop_when, summary = _sprt_watch(args.sprt, games, engines, progress)
    # --debug: every line each way, timestamped, in OUT/logs/NAME.traffic.log.
    token = traffic_dir.set(str(out.resolve() / "logs") if args.debug else None)
    try:
        return _run(
            config,
            Path.cwd(),
            out,
            args.resume,
            None,
            None,
            args,
            _match_resume(args, games, config.time_control),
            stop_when,
            progress=progress,
            summary=summary,
        )
    finally:
        traffic_dir.reset(token)


def _match_engines(args: argparse.Namespace) -> list[EngineConfig]:
    """The engines of ``match``: arguments, then ``--engine`` terms, each name unique."""
    engines = [_engine(spec) for spec in args.engines]
    engines += [_engine_spec(terms) for terms in args.engine or []]
    if len(engines) < 2:
        raise UsageError(
            f"a match needs at least two engines, got {len(engines)}: name them as "
            "arguments (bundled names or command lines) or with --engine cmd=..."
        )
    chosen = [n for terms in args.engine or [] for n in _names_given(terms)]
    taken = [e.name for e in engines]
    for name in chosen:
        if taken.count(name) > 1:
            raise UsageError(f"engine name {name!r} is used twice; give one of them name=...")
    return _unique_names(engines)


def _match_config(
    args: argparse.Namespace, engines: list[EngineConfig], games: int
) -> TournamentConfig:
    """The tournament a ``match`` command line describes (checked as a config would be)."""
    if args.clock is not None and args.time_per_move is not None:
        raise UsageError("--clock and --time-per-move exclude each other: choose one")
    if args.clock is not None:
        clock_ms, inc_ms = _clock(args.clock)
        time_control = TimeControl(per_move_ms=None, clock_ms=clock_ms, increment_ms=inc_ms)
    else:
        time_control = TimeControl(per_move_ms=args.time_per_move or 1000)
    options = rule_options(args.rules, args.rule or [])
    first = engines[0].name
    stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    title = f"{first} vs {engines[1].name}" if len(engines) == 2 else f"{first} and others"
    kind = "gauntlet" if args.gauntlet else "round-robin"
    default_out = "-vs-".join(e.name for e in engines) if len(engines) == 2 else f"{first}-{kind}"
    return check_config(
        TournamentConfig(
            name=title if not args.gauntlet else f"{first} gauntlet",
            engines=engines,
            format="gauntlet" if args.gauntlet else "round_robin",
            challenger=first if args.gauntlet else None,
            games_per_pairing=games,
            seed=args.seed,
            rules=RulesConfig(preset=args.rules, options=options),
            time_control=time_control,
            concurrency=args.concurrency,
            out=args.out or f"tournaments/match-{default_out}-{stamp}",
        ),
        "the command line",
    )


def _sprt_watch(
    terms: list[str], games: int, engines: list[EngineConfig], progress: Progress
) -> tuple[Callable[[GameResult], bool], Callable[[], str]]:
    """``--sprt``: the run's stop condition (printing LLR as pairs finish) and its verdict."""
    p = _parse_sprt(terms)
    first, second = engines[0].name, engines[1].name
    _say(
        f"SPRT elo0={p['elo0']:g} elo1={p['elo1']:g} alpha={p['alpha']:g} "
        f"beta={p['beta']:g} on pairs, at most {games} games ({games // 2} pairs)"
    )
    state = SprtState(p["elo0"], p["elo1"], p["alpha"], p["beta"], engine=first)

    def stop_when(result: GameResult) -> bool:
        # Incremental: each finished game once; a pair counts when both games are in.
        if not state.add_outcome(result.outcome):
            return False
        res = state.result()
        c = state.counts
        progress.say(
            f"SPRT: pairs {c.total} (+{c.won} ={c.split} -{c.lost})  LLR {res.llr:.2f} "
            f"[{res.lower:.2f}, {res.upper:.2f}]"
            + (f"  -> accept {res.decision}" if res.decision else "")
        )
        return res.decision is not None

    def summary() -> str:
        return sprt_verdict(state, first, second, max_pairs=games // 2)

    return stop_when, summary


def _match_resume(args: argparse.Namespace, games: int, time_control: TimeControl) -> ResumeCommand:
    """The ``match`` command that continues this one (a drawn seed never goes on it)."""
    words = ["ecarte", "match", *args.engines]
    for terms in args.engine or []:
        words += ["--engine", *terms]
    if args.clock is not None:
        words += ["--clock", args.clock]
    else:
        words += ["--time-per-move", str(time_control.per_move_ms)]
    if args.rules != "default":
        words += ["--rules", args.rules]
    for term in args.rule or []:
        words += ["--rule", term]
    if args.gauntlet:
        words.append("--gauntlet")
    if args.sprt is not None:
        words += ["--sprt", *args.sprt]
    words += ["--games", str(games)]
    return ResumeCommand(tuple(words), seed=args.seed)


def sprt_verdict(state: SprtState, a: str, b: str, *, max_pairs: int) -> str:
    """The closing line of an SPRT: which hypothesis was accepted, or that none was."""
    res = state.result()
    figures = f"LLR {res.llr:.2f}, bounds [{res.lower:.2f}, {res.upper:.2f}]"
    hypotheses = f"H0: Elo <= {state.elo0:g}, H1: Elo >= {state.elo1:g} for {a} against {b}"
    if res.decision == "H1":
        return f"SPRT verdict: H1 accepted after {res.pairs} pairs ({figures}; {hypotheses})"
    if res.decision == "H0":
        return f"SPRT verdict: H0 accepted after {res.pairs} pairs ({figures}; {hypotheses})"
    why = (
        f"the maximum of {max_pairs} pairs (--games {2 * max_pairs}) was reached"
        if res.pairs >= max_pairs
        else "the run ended early"
    )
    return f"SPRT verdict: no decision after {res.pairs} pairs: {why} ({figures}; {hypotheses})"


# ----------------------------------------------------------------------------- stats, merge


def _journal_of(out: Path) -> JournalReader:
    """The journal of a run directory, or a journal file; a file that is plainly no journal
    (a YAML config, say) is refused as such, not as a damaged journal."""
    path = out / "games.jsonl" if out.is_dir() else out
    if not path.exists():
        raise UsageError(f"no journal at {path}")
    try:
        with open(path, "rb") as f:
            start = f.read(64).lstrip()
    except OSError as exc:
        raise UsageError(f"{path}: cannot read it ({exc.strerror})") from None
    if start and not start.startswith(b"{"):
        raise UsageError(
            f"{path} is not a game journal (one JSON game record per line): give a run's "
            "output directory or its games.jsonl"
        )
    return JournalReader(path)


def _schedule_check(
    resolved: ResolvedConfig, *, whole: bool
) -> Callable[[GameRecord], None] | None:
    """The schedule check of ``--resume`` for a run (``whole``: the unsharded schedule).

    None, with a warning, if the config does not give a schedule: records are then
    only re-refereed.
    """
    shard_text = None if whole else resolved.shard
    try:
        rules = resolved.resolved_rules()
        games = schedule_of(resolved)
        if shard_text is not None:
            games = shard(games, *parse_shard(shard_text))
    except (ScheduleError, TournamentError, ValueError):
        _say("warning: config.resolved.json gives no schedule; records are only re-refereed")
        return None
    assert resolved.seed is not None
    sharded = shard_text is not None
    return schedule_check(games, rules, resolved.seed, sharded=sharded)


def _read_config(path: Path) -> ResolvedConfig | None:
    """A run's ``config.resolved.json``; None if there is none."""
    if not path.exists():
        return None
    try:
        return read_resolved(path)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _load_results(out: Path) -> list[GameResult]:
    """The results of a journal, every record checked, read one line at a time.

    Records are re-refereed, and compared with the run's schedule when its
    ``config.resolved.json`` is beside the journal.
    """
    reader = _journal_of(out)
    resolved = _read_config(reader.path.parent / "config.resolved.json")
    check = None if resolved is None else _schedule_check(resolved, whole=False)
    results = [result_of(e.record) for e in checked_entries(reader, check)]
    for w in reader.warnings:
        _say("warning: " + w)
    results.sort(key=lambda r: r.game_id)
    return results


def cmd_stats(args: argparse.Namespace) -> int:
    out = Path(args.out)
    results = _load_results(out)
    if not results:
        raise UsageError(f"{out}: the journal holds no games")
    target = out if out.is_dir() else out.parent
    print(_write_outputs(results, target, seed=_run_seed(target)))
    print(f"standings: {target / 'standings.json'}")
    if args.pgn:
        Path(args.pgn).write_text(pgn_of(results))
        print(f"PGN: {args.pgn}")
    return 0


def _write_html_report(out: Path) -> Path:
    """Write ``OUT/report.html`` from the journal in ``out`` (every record checked)."""
    from arbiter.html_report import write_report  # Jinja2 is loaded only when needed

    reader = _journal_of(out)
    resolved = _read_config(reader.path.parent / "config.resolved.json")
    check = None if resolved is None else _schedule_check(resolved, whole=False)
    records = [e.record for e in checked_entries(reader, check)]
    if not records:
        raise UsageError(f"{out}: the journal holds no games")
    target = reader.path.parent
    title = target.name if resolved is None else resolved.name
    return write_report(target, records, title=title, seed=_run_seed(target))


REPORT_AFTER_RUN_MAX_GAMES = 3000
"""Runs with more games do not write report.html by themselves: the page holds every
game's replay, and writing it replays every record (some 10 ms and 1.8 KB per game)."""


def _report_after_run(out: Path, games: int) -> None:
    """Write ``OUT/report.html`` at the end of a run, or say why not; never fail the run
    (its results and exit status come first)."""
    if not games:
        return
    if games > REPORT_AFTER_RUN_MAX_GAMES:
        print(
            f"report: not written for {games} games (it holds every game's replay; over "
            f"{REPORT_AFTER_RUN_MAX_GAMES} games it is written only on request): "
            f"ecarte report {shlex.quote(str(out))}"
        )
        return
    try:
        print(f"report: {_write_html_report(out)}")
    except (UsageError, ConfigError, JournalError, OSError) as exc:
        _say(f"warning: report.html was not written: {exc}; the results above are complete")


def cmd_report(args: argparse.Namespace) -> int:
    print(f"report: {_write_html_report(Path(args.out))}")
    return 0


def _without_timing(r: GameRecord) -> GameRecord:
    """A record without the fields that differ between two runs of the same game."""
    deals = [
        msgspec.structs.replace(d, actions=[msgspec.structs.replace(a, ms=0.0) for a in d.actions])
        for d in r.deals
    ]
    return msgspec.structs.replace(r, deals=deals, started="", seconds=0.0)


def _missing_games(resolved: ResolvedConfig, have: set[int]) -> set[int]:
    """Game ids of the full schedule of a resolved config that are not in ``have``."""
    try:
        return {g.game_id for g in schedule_of(resolved)} - have
    except (TournamentError, ScheduleError, ValueError):
        return set()


class _Kept(NamedTuple):
    """Where the merge found a game, and fingerprints to recognise it again."""

    shard: int
    offset: int
    line: bytes
    """Digest of the stored line."""
    game: bytes
    """Digest of the record without its timings."""


def cmd_merge(args: argparse.Namespace) -> int:
    # Two passes, one record in memory at a time: check every shard's records and note
    # where each game is, then copy the lines in game-id order.
    configs: list[ResolvedConfig] = []
    for d in args.dirs:
        cfg = _read_config(Path(d) / "config.resolved.json")
        if cfg is not None:
            configs.append(cfg)

    def essence(cfg: ResolvedConfig) -> ResolvedConfig:
        # Without what may differ between the shards of one run.
        return msgspec.structs.replace(cfg, shard=None, out="", concurrency=None, versions={})

    for cfg in configs[1:]:
        if essence(cfg) != essence(configs[0]):
            raise UsageError("the shards were run with different configs; refusing to merge")
    out = Path(args.out)
    if (out / "games.jsonl").exists() and not args.force:
        raise UsageError(f"{out / 'games.jsonl'} exists; pass --force to overwrite it")
    # Shards hold slices of one schedule: each record is checked against the whole.
    check = _schedule_check(configs[0], whole=True) if configs else None
    kept: dict[int, _Kept] = {}
    results: dict[int, GameResult] = {}
    seeds: set[str] = set()
    paths: list[Path] = []
    for d in args.dirs:
        reader = _journal_of(Path(d))
        paths.append(reader.path)
        for entry in checked_entries(reader, check):
            rec = entry.record
            seeds.add(rec.seed_sha256)
            if len(seeds) > 1:
                raise UsageError("the shards were run with different seeds; refusing to merge")
            game = digest(encode_record(_without_timing(rec)))
            old = kept.get(rec.game_id)
            if old is not None:
                if old.game != game:
                    raise UsageError(
                        f"{reader.path}:{entry.line}: game {rec.game_id} appears in two shards "
                        f"with different results (the other is in {paths[old.shard]})"
                    )
                continue
            kept[rec.game_id] = _Kept(len(paths) - 1, entry.offset, digest(entry.data), game)
            results[rec.game_id] = result_of(rec)
        for w in reader.warnings:
            _say("warning: " + w)
    make_private_dir(out)
    with contextlib.ExitStack() as stack:
        files = [stack.enter_context(open(p, "rb")) for p in paths]

        def lines() -> Iterator[bytes]:
            for game_id in sorted(kept):
                k = kept[game_id]
                f = files[k.shard]
                f.seek(k.offset)
                line = f.readline().rstrip(b"\n")
                if digest(line) != k.line:
                    raise JournalError(f"{paths[k.shard]} changed while it was being merged")
                yield line

        write_records(out / "games.jsonl", lines())
    if configs:
        write_private(
            out / "config.resolved.json",
            msgspec.json.format(
                msgspec.json.encode(msgspec.structs.replace(configs[0], shard=None))
            )
            + b"\n",
        )
        missing = _missing_games(configs[0], set(kept))
        if missing:
            _say(
                f"warning: the merged result lacks {len(missing)} game(s) of the schedule "
                f"(first missing game ids: {sorted(missing)[:5]}); is a shard missing or "
                "unfinished?"
            )
    print(f"merged {len(kept)} games from {len(args.dirs)} directories into {out}/")
    print(_write_outputs([results[k] for k in sorted(results)], out, seed=_run_seed(out)))
    _report_after_run(out, len(kept))
    return 0


# ----------------------------------------------------------------------------- check


def cmd_check(args: argparse.Namespace) -> int:
    from arbiter.check import check_bot, format_check

    argv = shlex.split(args.bot)
    if not argv:
        raise UsageError("check needs a command line, e.g. ecarte check 'python3 mybot.py'")
    rules = make_rules(args.rules, **rule_options(args.rules, args.rule or []))
    if args.increment and args.clock is None:
        raise UsageError("--increment needs --clock")
    report = trio.run(
        lambda: check_bot(
            argv,
            games=args.games,
            time_per_move=args.time_per_move,
            clock_ms=args.clock,
            increment_ms=args.increment,
            rules=rules,
            handshake_ms=args.handshake_ms,
            sandbox=args.sandbox or "auto",
            bot_user=args.bot_user or BOT_USER_AUTO,
            seed=args.seed,
        )
    )
    for line in format_check(report):
        print(line)
    return 0 if report.passed else 1


# ----------------------------------------------------------------------------- show


def cmd_show(args: argparse.Namespace) -> int:
    from arbiter.show import ShowError, show_game

    # A bot's name or offending line may hold characters the terminal cannot print.
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    try:
        show_game(Path(args.out), args.game, deal=args.deal, seat=args.seat, stream=sys.stdout)
    except ShowError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _add_show(sub: Any) -> None:
    w = sub.add_parser("show", help="replay a recorded game in the terminal")
    w.add_argument("out", help="output directory (or a games.jsonl)")
    w.add_argument("game", type=int, help="game id")
    w.add_argument("--deal", type=int, metavar="N", help="show only deal N")
    w.add_argument(
        "--seat", type=int, choices=(0, 1), help="show only what this seat knew (0 or 1)"
    )
    w.set_defaults(func=cmd_show)


def _positive_ms(text: str) -> int:
    """A ``check`` time option: a positive number of milliseconds."""
    value = _non_negative_ms(text)
    if value == 0:
        raise argparse.ArgumentTypeError(f"expected a positive number of milliseconds, got {text}")
    return value


def _non_negative_ms(text: str) -> int:
    """A ``check`` time option: a number of milliseconds, 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected milliseconds, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected milliseconds, 0 or more, got {text}")
    return value


# ----------------------------------------------------------------------------- play


def cmd_play(args: argparse.Namespace) -> int:
    from arbiter.play import PlayError, play_in_terminal

    engine = _engine(args.engine)
    stamp = f"{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    out = Path(args.out or f"tournaments/play-{engine.name}-{stamp}")
    try:
        return play_in_terminal(
            engine,
            seat=args.seat,
            preset=args.rules,
            rules=args.rule,
            seed=args.seed,
            out=out,
            per_move_ms=args.time_per_move,
            sandbox=args.sandbox or "auto",
            bot_user=args.bot_user or BOT_USER_AUTO,
        )
    except PlayError as exc:
        raise UsageError(str(exc)) from None


def _add_play(sub: Any) -> None:
    y = sub.add_parser("play", help="play a game yourself against an engine, in the terminal")
    y.add_argument("engine", help="bundled engine name or command line")
    y.add_argument("--seat", type=int, choices=(0, 1), default=0, help="your seat (default 0)")
    _add_rules(y)
    y.add_argument("--seed", type=_seed_arg, help="seed, an int or a string (default: random)")
    y.add_argument(
        "--time-per-move",
        type=_positive_int("milliseconds per move"),
        default=1000,
        metavar="MS",
        help="the engine's time per decision in milliseconds (default %(default)s; you have "
        "no limit)",
    )
    _add_sandbox(y, "the engine")
    y.add_argument("--out", help="output directory (default: tournaments/play-ENGINE-TIMESTAMP)")
    y.set_defaults(func=cmd_play)


# ----------------------------------------------------------------------------- main


def _add_sandbox(parser: argparse.ArgumentParser, who: str = "bots") -> None:
    parser.add_argument(
        "--sandbox",
        choices=typing.get_args(SandboxMode),
        help=f"run {who} in a sandbox: auto (default: where available), on (required), off",
    )
    parser.add_argument(
        "--bot-user",
        metavar="USER",
        help=f"when the arena runs as root, run {who} as USER (a name or a uid; root to keep "
        "root); default auto: nobody, when sandboxed",
    )


def _add_rules(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rules",
        default="default",
        metavar="PRESET",
        help=f"rules preset: {' or '.join(PRESETS)} (default: %(default)s)",
    )
    parser.add_argument(
        "--rule",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a rules option on top of the preset (repeatable), e.g. --rule target=7",
    )


def _add_tournament(sub: Any) -> None:
    """``ecarte tournament``."""
    t = sub.add_parser("tournament", help="run a tournament from a YAML config")
    t.add_argument("config", nargs="?", help="YAML config (default: the bundled round-robin)")
    t.add_argument("--out", help="output directory (overrides the config's out)")
    t.add_argument("--seed", type=_seed_arg, help="an int or a string (overrides the config)")
    t.add_argument(
        "--concurrency",
        type=_positive_int("games at once"),
        help="games at once (default: number of cores)",
    )
    t.add_argument("--resume", action="store_true", help="continue an interrupted run")
    t.add_argument("--shard", help="run slice K/N of the schedule, every N-th deal set (e.g. 2/3)")
    t.add_argument("--quiet", action="store_true", help="no progress output")
    _add_sandbox(t)
    t.set_defaults(func=cmd_tournament)


def _add_match(sub: Any) -> None:
    """``ecarte match``."""
    m = sub.add_parser(
        "match",
        help="a match between bots (two, a round-robin of more, or a --gauntlet)",
        description="Engines are named as arguments (a bundled engine or a command line) "
        "and/or with --engine KEY=VALUE ... (cutechess style).",
    )
    m.add_argument(
        "engines", nargs="*", metavar="ENGINE", help="bundled engine name or command line"
    )
    m.add_argument(
        "--engine",
        action="append",
        nargs="+",
        metavar="KEY=VALUE",
        help="an engine: cmd=COMMAND (or a bundled name) [name=NAME] [dir=DIR] "
        "[option.KEY=VALUE ...] [env.KEY=VALUE ...]; repeat for each engine",
    )
    m.add_argument(
        "--games",
        "--max-games",
        type=_positive_int("games"),
        help="games per pairing, even (default 20); with --sprt the most games to play "
        "(default 20000)",
    )
    m.add_argument("--seed", type=_seed_arg, help="seed, an int or a string (default: random)")
    m.add_argument(
        "--time-per-move",
        type=_positive_int("milliseconds per move"),
        metavar="MS",
        help="time for each decision in milliseconds (default 1000)",
    )
    m.add_argument(
        "--clock",
        metavar="BASE[+INC]",
        help="a game clock per bot, BASE seconds with an increment of INC seconds per "
        "decision, e.g. 60+0.5 (unlike check --clock, which is in milliseconds)",
    )
    _add_rules(m)
    m.add_argument(
        "--gauntlet", action="store_true", help="the first engine plays each of the others"
    )
    m.add_argument(
        "--debug",
        action="store_true",
        help="log every line to and from each bot, timestamped, in OUT/logs/NAME.traffic.log",
    )
    m.add_argument("--out", help="output directory (default: tournaments/match-TIMESTAMP)")
    m.add_argument("--concurrency", type=_positive_int("games at once"))
    m.add_argument("--resume", action="store_true")
    m.add_argument("--quiet", action="store_true")
    _add_sandbox(m)
    m.add_argument(
        "--sprt",
        nargs="+",
        metavar="K=V",
        help="run pairs until the SPRT decides, at most --games games: elo0=0 elo1=10 "
        "[alpha=0.05 beta=0.05]",
    )
    m.set_defaults(func=cmd_match)


def _add_check(sub: Any) -> None:
    """``ecarte check``."""
    c = sub.add_parser("check", help="check a bot's protocol compliance")
    # Not "command": that is where the subcommand's name goes (error messages use it).
    c.add_argument("bot", metavar="command", help="the bot's command line, quoted")
    c.add_argument(
        "--games",
        type=_positive_int("games"),
        default=30,
        help="most games to play against random (default %(default)s)",
    )
    c.add_argument(
        "--time-per-move",
        type=_positive_int("milliseconds per move"),
        default=2000,
        metavar="MS",
        help="time for each decision in milliseconds (default %(default)s)",
    )
    c.add_argument(
        "--handshake-ms",
        type=_positive_int("milliseconds"),
        default=10_000,
        metavar="MS",
        help="time to answer the hello in milliseconds (default %(default)s)",
    )
    c.add_argument(
        "--clock",
        type=_positive_ms,
        metavar="MS",
        help="play under a game clock of MS milliseconds per bot and game (unlike match "
        "--clock, which is in seconds); default: no clock",
    )
    c.add_argument(
        "--increment",
        type=_non_negative_ms,
        default=0,
        metavar="MS",
        help="clock increment per decision in milliseconds (default %(default)s)",
    )
    c.add_argument(
        "--seed", type=_seed_arg, help="seed of the deals, an int or a string (default: random)"
    )
    _add_rules(c)
    _add_sandbox(c)
    c.set_defaults(func=cmd_check)


def _add_results(sub: Any) -> None:
    """``ecarte stats``, ``report`` and ``merge``: what is done with a run's journal."""
    s = sub.add_parser("stats", help="recompute statistics from a journal")
    s.add_argument("out", help="output directory (or a games.jsonl)")
    s.add_argument("--pgn", help="also write the results as PGN headers to this file")
    s.set_defaults(func=cmd_stats)

    r = sub.add_parser("report", help="write OUT/report.html: statistics and game replays")
    r.add_argument("out", help="output directory (or a games.jsonl)")
    r.set_defaults(func=cmd_report)

    g = sub.add_parser("merge", help="combine shard output directories")
    g.add_argument("dirs", nargs="+", help="shard output directories")
    g.add_argument("--out", required=True, help="directory for the merged result")
    g.add_argument("--force", action="store_true", help="overwrite an existing merged journal")
    g.set_defaults(func=cmd_merge)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line naming the (sub)command, the problem
    and where help is, with exit status 2: argparse's own print the usage first."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.subcommands: dict[str, _Parser] = {}
        """The parser of each subcommand (set on the top-level parser)."""

    def error(self, message: str) -> NoReturn:
        """Print the one-line error and exit with status 2."""
        unknown = re.match(r"argument command: invalid choice: '(.*?)'", message)
        if unknown is not None and self.subcommands:
            close = difflib.get_close_matches(unknown.group(1), self.subcommands, n=1)
            message = f"unknown command {unknown.group(1)!r}" + (
                f" (did you mean {close[0]}?)"
                if close
                else f" (commands: {', '.join(self.subcommands)})"
            )
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}; see {self.prog} --help\n")

    def refuse_unrecognized(self, extras: list[str]) -> NoReturn:
        """Refuse the first argument nothing took (an option first), suggesting the
        closest option of this parser (argparse in Python 3.11 suggests nothing)."""
        word = next((e for e in extras if e.startswith("-")), extras[0])
        message = f"unrecognized argument {word}"
        if word.startswith("-"):
            # Abbreviations are accepted by argparse, so only a misspelling gets here.
            options = [o for o in self._option_string_actions if o.startswith("--")]
            close = difflib.get_close_matches(word.partition("=")[0], options, n=1)
            if close:
                message += f" (did you mean {close[0]}?)"
        self.error(message)


def parse_command_line(parser: argparse.ArgumentParser, argv: list[str] | None) -> Any:
    """``parser.parse_args(argv)``, but an argument nothing took is refused by the
    subcommand it was given to (its name and options), not by the top-level parser."""
    args, extras = parser.parse_known_args(argv)
    if extras:
        top = parser if isinstance(parser, _Parser) else None
        sub = top.subcommands.get(args.command) if top is not None else None
        if sub is not None:
            sub.refuse_unrecognized(extras)
        parser.error(f"unrecognized arguments: {' '.join(extras)}")
    return args


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``ecarte``."""
    p = _Parser(prog="ecarte", description="Écarté engine arena")
    p.add_argument("--version", action="version", version=f"%(prog)s {VERSION}")
    sub = p.add_subparsers(dest="command", required=True)
    for add in (_add_tournament, _add_match, _add_check, _add_results, _add_show, _add_play):
        add(sub)
    p.subcommands = dict(sub.choices)
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``ecarte`` console script."""
    parser = build_parser()
    args = parse_command_line(parser, argv)
    # Other processes of this user cannot read the arbiter's memory or descriptors, and
    # bot descendants that escape with setsid() come back to it to be killed.
    guard_arbiter()
    try:
        code: int = args.func(args)
    except (
        ConfigError,
        UsageError,
        ScheduleError,
        TournamentError,
        JournalError,
        PreflightError,
        SandboxConflict,
        SandboxUnavailable,
        BotUserError,
    ) as exc:
        # Messages quote paths, config values and bots' own words: each line is made
        # terminal-safe (no escape sequence reaches the user's terminal).
        text = "\n".join(terminal_safe(line) for line in str(exc).split("\n"))
        _say(f"ecarte {args.command}: error: {text}")
        return EXIT_USAGE
    except BrokenPipeError:
        # The reader of our output went away (``ecarte stats OUT | head``): stop quietly,
        # and keep the interpreter's final flush from failing again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE
    except Exception as exc:
        refusal = kernel_refusal(exc)
        if refusal is None:
            raise
        _say(
            f"ecarte {args.command}: error: the kernel refused the arbiter a resource it "
            f"needs to watch a bot's pipes ({refusal.strerror}): something this user runs "
            "holds what the user may have (epoll watches, open files), maybe a bot; the "
            "games recorded so far are kept (--resume plays the rest); run untrusted bots "
            "from an arena run as root, with a bot_user of their own (README, Security model)"
        )
        return EXIT_ARBITER_ERROR
    return code


_REFUSALS: Final = frozenset({errno.ENOSPC, errno.EMFILE, errno.ENFILE, errno.ENOMEM})


def kernel_refusal(exc: BaseException) -> OSError | None:
    """The OSError in ``exc`` (or in the exception groups it holds) by which the kernel
    refused trio's I/O manager a resource of the user's (``ENOSPC`` from epoll: the
    user's watches are used up; ``EMFILE``, ``ENFILE``, ``ENOMEM``), or None."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = kernel_refusal(inner)
            if found is not None:
                return found
        return None
    if isinstance(exc, OSError) and exc.errno in _REFUSALS:
        frames = traceback.extract_tb(exc.__traceback__)
        if any(os.path.basename(f.filename).startswith("_io_") for f in frames):
            return exc
    return None


if __name__ == "__main__":
    sys.exit(main())
