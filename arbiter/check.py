"""``ecarte check``: take one bot through the handshake and every kind of decision.

The bot plays games against the bundled random engine, seats alternating, until it
has been asked every kind of decision (stand or propose, accept or refuse, discard,
mark the king, play a card) or the game budget runs out.  Then, if all went well, it
plays its first two games again with every message carrying what a later compatible
revision may add (PROTOCOL.md §2.5): an unknown field first at the top level and
inside nested objects, and a message of an unknown type before each request.  Every
deviation from PROTOCOL.md is reported in words a bot author can act on; the check
fails if there was any, if a kind of decision never came up, or if the bot does not
exit when told to quit.  Replies that were late but inside the grace margin are
warned about: the margin is for scheduling jitter, not for the bot.
"""

from __future__ import annotations

import dataclasses
import json
import secrets
import time
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final

import trio

from arbiter.bot import Bot, BotCommand, live_pids
from arbiter.config import builtin_argv
from arbiter.faults import ArbiterError, FaultReason
from arbiter.game import GameSpec, TimeSettings, play_game
from arbiter.hints import ADVICE, fix_hint, terminal_safe
from arbiter.record import GameRecord
from arbiter.referee import charged_ms
from arbiter.rules import Rules, Seed, make_rules
from arbiter.sandbox import (
    BOT_USER_AUTO,
    DEFAULT_PROCESSES,
    BotUserSpec,
    SandboxMode,
    SandboxPlan,
    minimal_env,
    plan_warnings,
    process_cap,
    reap_escapees,
    resolve_bot_user,
    sandbox_enabled,
    user_for_engine,
)
from arbiter.session import BotSession

__all__ = [
    "ADVICE",
    "DECISION_KINDS",
    "PROBE_FIELD",
    "CheckReport",
    "GameProblem",
    "LateReplies",
    "QuitResult",
    "UnknownsResult",
    "add_unknowns",
    "check_bot",
    "decision_kind",
    "format_check",
    "terminal_safe",
]

DECISION_KINDS = {
    "propose": "stand or propose (non-dealer)",
    "answer": "accept or refuse (dealer)",
    "discard": "discard",
    "mark": "mark the king of trumps",
    "card": "play a card",
}


_FATAL = (FaultReason.FAILED_TO_START, FaultReason.NO_HANDSHAKE)
"""Faults after which playing more games cannot tell anything new."""


def decision_kind(action: str) -> str:
    """Which kind of decision an action answers."""
    if action in ("stand", "propose"):
        return "propose"
    if action in ("accept", "refuse"):
        return "answer"
    if action.startswith("discard"):
        return "discard"
    if action in ("mark", "no-mark"):
        return "mark"
    return "card"


PROBE_FIELD: Final = "x_check_probe"
"""The name of the unknown field ``ecarte check`` adds to arbiter messages."""
_PROBE_NOTICE: Final = json.dumps(
    {"type": "x_check_notice", "note": "a message type of a later revision: ignore it"},
    separators=(",", ":"),
).encode()
_LENIENCY: Final = (
    "ignore fields you do not know, at any depth, and messages whose type you do not know "
    "(PROTOCOL.md §2.5: the arbiter may add them in a compatible revision)"
)


def add_unknowns(line: bytes) -> list[bytes]:
    """The lines sent instead of the arbiter line ``line`` when leniency is probed.

    The message gets an unknown field as its *first* key (so key order is tested too),
    its nested objects (the view, its rules and events, an event, the rules) one each,
    and a request is preceded by a message of an unknown type.
    """
    message: dict[str, Any] = json.loads(line)
    nested = [message.get(key) for key in ("view", "event", "rules")]
    view = message.get("view")
    if isinstance(view, dict):
        nested.append(view.get("rules"))
        nested.extend(view.get("events") or [])
    for inner in nested:
        if isinstance(inner, dict):
            inner[PROBE_FIELD] = 1
    probed = {PROBE_FIELD: {"revision": "1.x", "values": [1, None, "x"]}, **message}
    out = [json.dumps(probed, separators=(",", ":"), ensure_ascii=False).encode()]
    if message.get("type") == "request":
        out.insert(0, _PROBE_NOTICE)
    return out


class _ProbedSession(BotSession):
    """A session whose bot, while :attr:`probe` is set, receives :func:`add_unknowns` lines."""

    probe = False

    async def ensure_started(self) -> Bot:
        bot = await super().ensure_started()
        bot.rewrite = add_unknowns if self.probe else None
        return bot


class UnknownsResult(Enum):
    """What the bot did with the fields and message types it cannot know (§2.5)."""

    IGNORED = "ignored"
    """It played its probed games without a fault."""
    FAILED = "failed"
    """It faulted in a probed game: a problem."""
    NOT_CHECKED = "not_checked"
    """Not probed: the plain games already failed, or none was played."""


@dataclass(frozen=True, slots=True)
class LateReplies:
    """Replies accepted only thanks to the grace margin (a warning, not a failure)."""

    count: int
    """How many."""
    slowest_ms: float
    """The slowest of them, in milliseconds."""
    allowed_ms: int
    """The time that reply was allowed, before the grace margin."""
    grace_ms: int
    """The grace margin."""

    def text(self) -> str:
        """The warning as printed."""
        return (
            f"warning: {self.count} repl{'y' if self.count == 1 else 'ies'} came late and "
            f"passed only thanks to the {self.grace_ms} ms grace margin (slowest "
            f"{self.slowest_ms:.0f} ms, {self.allowed_ms} ms allowed): the margin absorbs "
            "scheduling jitter and may be smaller elsewhere; answer within time_ms, or "
            "clock_ms under a clock (PROTOCOL.md §5.2)"
        )


class QuitResult(Enum):
    """What the bot did when told to quit at the end of the check."""

    EXITED = "exited"
    """It exited by itself within 2 seconds."""
    HUNG = "hung"
    """It had to be stopped: a problem."""
    NOT_RUNNING = "not_running"
    """It had already stopped (it failed earlier), so quitting was not checked."""


@dataclass(frozen=True, slots=True)
class GameProblem:
    """One game the checked bot lost by a fault, or that the arbiter could not finish."""

    game: int
    """Game number, from 1."""
    reason: str
    """The fault reason (``timeout``, ``illegal_action``, ...); empty for an arbiter error."""
    detail: str
    """What went wrong, as the bot sent it or as the arbiter saw it (not yet escaped)."""
    line: str = ""
    """The offending line the bot sent, if any (not yet escaped)."""
    probed: bool = False
    """The game's messages carried unknown fields and message types (§2.5)."""

    def text(self) -> str:
        """The problem as printed after ``FAIL``, bot-chosen text escaped, with the fix."""
        if not self.reason:
            return (
                f"game {self.game}: {terminal_safe(self.detail)}\n    this is an error of the "
                "arbiter, not of the bot: please report it"
            )
        text = f"game {self.game}: {self.reason}: {terminal_safe(self.detail)}"
        if self.line:
            text += f"\n    offending line: {terminal_safe(self.line)}"
        if self.probed:
            return (
                text + "\n    this game's messages carried unknown fields (at the top level "
                "and nested) and messages of an unknown type; the same game without them "
                f"passed\n    fix: {_LENIENCY}"
            )
        return text + f"\n    fix: {fix_hint(self.reason, self.detail, self.line or None)}"


@dataclass(frozen=True, slots=True)
class CheckReport:
    """Everything ``ecarte check`` found out about one bot; :func:`format_check` prints it."""

    warning: str | None
    """Why the bot ran without the sandbox asked for, if it did."""
    handshake: str | None
    """The bot's "name version by author" from its hello (not yet escaped); None if no
    game was recorded or the bot gave no name."""
    games: int
    """Games recorded."""
    game_problems: tuple[GameProblem, ...]
    """Games the bot lost by a fault, and games the arbiter could not finish."""
    stopped_early: bool
    """The check stopped before its game budget because the bot kept failing."""
    seen: frozenset[str]
    """The kinds of decision (keys of :data:`DECISION_KINDS`) the bot answered itself."""
    quit: QuitResult
    """What the bot did when told to quit."""
    unknowns: UnknownsResult = UnknownsResult.NOT_CHECKED
    """What the bot did with unknown fields and message types."""
    late: LateReplies | None = None
    """Replies that relied on the grace margin, if any."""
    setting: str = ""
    """The rules and time control the games were played under, as printed."""

    @property
    def missing(self) -> tuple[str, ...]:
        """Labels of the kinds of decision the bot never answered."""
        return tuple(label for kind, label in DECISION_KINDS.items() if kind not in self.seen)

    @property
    def problems(self) -> tuple[str, ...]:
        """Every problem, as printed after ``FAIL``; a missing decision kind counts only
        when no game failed (a failing bot is not asked much)."""
        found = [p.text() for p in self.game_problems]
        if self.missing and not found:
            found.append(
                f"never answered: {', '.join(self.missing)} (in {self.games} games; "
                "try --games more)"
            )
        if self.quit is QuitResult.HUNG:
            found.append(
                "did not exit within 2 seconds of quit: exit when you read "
                '{"type":"quit"} or reach end of input'
            )
        return tuple(found)

    @property
    def passed(self) -> bool:
        """True if the bot follows the protocol: no problem at all."""
        return not self.problems


def format_check(report: CheckReport) -> list[str]:
    """The report as the lines ``ecarte check`` prints (a problem may span lines)."""
    out: list[str] = []
    if report.warning is not None:  # it may name a bot's file: escaped
        out.extend(terminal_safe(line) for line in report.warning.splitlines())
    if report.setting:
        out.append(report.setting)
    if report.handshake is not None:
        out.append(f"handshake: ok ({terminal_safe(report.handshake)})")
    if not report.games:
        out.append("no games were recorded")
    problems = report.problems
    out.extend("FAIL " + p for p in problems[: len(report.game_problems)])
    if report.stopped_early and report.games:
        out.append(f"(stopped after game {report.games}: the bot keeps failing)")
    for kind, label in DECISION_KINDS.items():
        out.append(f"decision {label}: {'ok' if kind in report.seen else 'never answered'}")
    if report.unknowns is UnknownsResult.IGNORED:
        out.append("unknown fields and message types: ok (ignored)")
    if report.quit is QuitResult.EXITED:
        out.append("quit: ok (exited by itself)")
    if report.late is not None:
        out.append(report.late.text())
    out.extend("FAIL " + p for p in problems[len(report.game_problems) :])
    out.append(
        f"{len(problems)} problem(s) found" if problems else "PASS: the bot follows the protocol"
    )
    return out


async def check_bot(
    argv: list[str],
    *,
    games: int = 30,
    time_per_move: int = 2000,
    clock_ms: int | None = None,
    increment_ms: int = 0,
    grace_ms: int = 100,
    rules: Rules | None = None,
    handshake_ms: int = 10_000,
    sandbox: SandboxMode = "auto",
    bot_user: BotUserSpec = BOT_USER_AUTO,
    seed: Seed | None = None,
) -> CheckReport:
    """Take the bot through up to ``games`` games against the random engine and report.

    The games are played under ``rules`` (default: the default rules) with
    ``time_per_move`` per decision, or under a game clock of ``clock_ms`` plus
    ``increment_ms`` per decision.  The bot runs in the sandbox ``sandbox`` asks
    for, as it would in a tournament.  The deals come from ``seed``; None draws one (a
    fixed one would let a bot tell a check from a tournament by its first hand), and the
    report's setting line gives it, to repeat the same games.
    """
    if seed is None:
        seed = secrets.randbits(64)  # too many to try against a first hand
    sandboxed, warning = sandbox_enabled(sandbox)
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False) if sandboxed else None
    notes = [w for w in (warning, *plan_warnings({"checked": plan})) if w is not None]
    user, note = resolve_bot_user(bot_user, sandboxed=sandboxed)
    notes += [note] if note is not None else []
    user = user_for_engine("checked", bot_user, user, plan)
    own, processes, note = process_cap(DEFAULT_PROCESSES, user, sandboxed=sandboxed)
    notes += [note] if note is not None else []
    warning = "\n".join(notes) or None
    env = minimal_env(home="/tmp" if sandboxed else None)
    command = BotCommand(
        argv, base_env=env, sandbox=plan, user=user, own_namespace=own, processes=processes
    )
    # The opponent is locked in like the bot: it runs where the bot's files may be.
    random_argv = builtin_argv("random")
    random_plan = (
        SandboxPlan.for_engine(random_argv, None, own_dir_configured=False) if sandboxed else None
    )
    opponent = dataclasses.replace(command, argv=random_argv, sandbox=random_plan)
    time_settings = TimeSettings(
        per_move_ms=time_per_move,
        clock_ms=clock_ms,
        increment_ms=increment_ms,
        grace_ms=grace_ms,
    )
    rules = make_rules() if rules is None else rules
    async with trio.open_nursery() as nursery:
        checker = _Checker(
            _ProbedSession("checked", command, nursery, handshake_ms=handshake_ms),
            BotSession("random", opponent, nursery),
            rules,
            time_settings,
            seed,
        )
        await checker.cover_every_decision(games)
        unknowns = await checker.probe_leniency()
        # The quit semantics: the bot must exit by itself after "quit".
        quit_ok = await _quits_cleanly(checker.bot)
        await checker.opponent.stop()
    # What the bot left behind outside its process group (see arbiter.sandbox).
    reap_escapees(live_pids())
    return CheckReport(
        warning=warning,
        handshake=checker.handshake,
        games=len(checker.records),
        game_problems=tuple(checker.problems),
        stopped_early=checker.stopped_early,
        seen=frozenset(checker.seen),
        quit=(
            QuitResult.NOT_RUNNING
            if quit_ok is None
            else QuitResult.EXITED
            if quit_ok
            else QuitResult.HUNG
        ),
        unknowns=unknowns,
        late=_late_replies(checker.records, time_settings),
        setting=_setting(rules, time_settings, seed),
    )


class _Checker:
    """The games of one check: the checked bot against the random engine, seats
    alternating, and what was found."""

    def __init__(
        self,
        bot: _ProbedSession,
        opponent: BotSession,
        rules: Rules,
        time: TimeSettings,
        seed: Seed,
    ) -> None:
        self.bot = bot
        self.seed = seed
        self.opponent = opponent
        self.rules = rules
        self.time = time
        self.records: list[GameRecord] = []
        self.problems: list[GameProblem] = []
        self.seen: set[str] = set()
        """Kinds of decision the bot has answered (:data:`DECISION_KINDS`)."""
        self.handshake: str | None = None
        self.stopped_early = False

    async def play(self, g: int, number: int) -> GameRecord | None:
        """Game ``g`` of the schedule as game ``number`` of the check; None if aborted."""
        seat = g % 2
        engines = ("checked", "random") if seat == 0 else ("random", "checked")
        sessions = (self.bot, self.opponent) if seat == 0 else (self.opponent, self.bot)
        spec = GameSpec(
            game_id=number - 1,
            engines=engines,
            rules=self.rules,
            seed=self.seed,
            deal_set=g,
            first_dealer=(g // 2) % 2,
            time=self.time,
        )
        try:
            rec = await play_game(spec, sessions)
        except ArbiterError as exc:  # both bots were stopped; nobody is blamed
            self.problems.append(GameProblem(game=number, reason="", detail=str(exc)))
            self.stopped_early = True
            return None
        self.records.append(rec)
        term = rec.termination
        if term.reason != "normal" and term.offender is not None:
            if rec.engines[term.offender] == "checked":
                self.problems.append(
                    GameProblem(number, term.reason, term.detail, term.line or "", self.bot.probe)
                )
        return rec

    async def cover_every_decision(self, games: int) -> None:
        """Play until the bot has answered every kind of decision (at least two games),
        it keeps failing, or ``games`` are played."""
        for g in range(games):
            before = len(self.problems)
            rec = await self.play(g, g + 1)
            if rec is None:
                return
            if g == 0 and self.bot.info.bot_name:
                info = self.bot.info
                self.handshake = f"{info.bot_name} {info.version} by {info.author}"
            failed = len(self.problems) > before
            if failed and (rec.termination.reason in _FATAL or len(self.problems) >= 3):
                self.stopped_early = True
                return
            for deal in rec.deals:
                for a in deal.actions:
                    if rec.engines[a.seat] == "checked" and not a.substituted:
                        self.seen.add(decision_kind(a.action))
            if self.seen == set(DECISION_KINDS) and g >= 1:
                return

    async def probe_leniency(self) -> UnknownsResult:
        """Leniency (§2.5): the first games again, with what a later revision may add."""
        if not self.records or self.problems:
            return UnknownsResult.NOT_CHECKED
        self.bot.probe = True
        played = len(self.records)
        for g in range(min(2, played)):
            if await self.play(g, played + g + 1) is None or self.problems:
                break
        self.bot.probe = False
        return UnknownsResult.FAILED if self.problems else UnknownsResult.IGNORED


def _late_replies(records: list[GameRecord], tm: TimeSettings) -> LateReplies | None:
    """The checked bot's replies that took longer than allowed (inside the grace margin).

    The allowance is recomputed as the arbiter computes it (PROTOCOL.md §5.2): the
    per-decision time, or under a clock the seat's remaining clock.
    """
    late: list[tuple[float, int]] = []
    for rec in records:
        clock = tm.clock_ms
        for deal in rec.deals:
            for a in deal.actions:
                if rec.engines[a.seat] != "checked" or a.substituted:
                    continue
                allowed = tm.per_move_ms if clock is None else clock
                if a.ms > allowed:
                    late.append((a.ms, allowed))
                if clock is not None:
                    clock = max(0, clock - charged_ms(a.ms / 1000)) + tm.increment_ms
    if not late:
        return None
    slowest, allowed = max(late, key=lambda pair: pair[0] - pair[1])
    return LateReplies(len(late), slowest, allowed, tm.grace_ms)


def _setting(rules: Rules, tm: TimeSettings, seed: Seed) -> str:
    """What the games were played under, e.g. ``rules: default; time: 2000 ms per
    decision; seed: 42``."""
    default = make_rules(rules.preset)
    changed = [
        f"{name}={json.dumps(getattr(rules, name))}"
        for name in rules.__struct_fields__
        if getattr(rules, name) != getattr(default, name)
    ]
    text = f"rules: {rules.preset}" + (f" with {', '.join(changed)}" if changed else "")
    if tm.clock_ms is None:
        text += f"; time: {tm.per_move_ms} ms per decision"
    else:
        text += f"; time: game clock {tm.clock_ms} ms + {tm.increment_ms} ms per decision"
    # repr: a string seed is quoted, so it reads apart from an integer one.
    return text + f"; seed: {seed!r} (--seed repeats these games)"


async def _quits_cleanly(session: BotSession) -> bool | None:
    """Tell the bot to quit and see whether it exits on its own within 2 s."""
    bot = session.bot
    if bot is None or not session.alive:
        return None
    start = time.monotonic()
    await bot.stop(b'{"type":"quit"}', grace=2.0, term_grace=1.0)
    elapsed = time.monotonic() - start
    code = bot.returncode
    await session.stop()
    return code is not None and code >= 0 and elapsed < 2.0
