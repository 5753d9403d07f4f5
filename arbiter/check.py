"""``ecarte check``: take one bot through the handshake and every kind of decision.

The bot plays games against the bundled random engine, seats alternating, until it
has been asked every kind of decision (stand or propose, accept or refuse, discard,
mark the king, play a card) or the game budget runs out.  Every deviation from
PROTOCOL.md is reported in words a bot author can act on; the check fails if there
was any, if a kind of decision never came up, or if the bot does not exit when told
to quit.
"""

from __future__ import annotations

import sys
import time
import unicodedata
from dataclasses import dataclass
from enum import Enum

import trio

from arbiter.bot import BotCommand, live_pids
from arbiter.faults import ArbiterError, FaultReason
from arbiter.game import GameSpec, TimeSettings, play_game
from arbiter.record import GameRecord
from arbiter.rules import make_rules
from arbiter.sandbox import (
    SandboxMode,
    SandboxPlan,
    minimal_env,
    reap_escapees,
    sandbox_enabled,
)
from arbiter.session import BotSession
from protocol.messages import PROTOCOL_VERSION

__all__ = [
    "ADVICE",
    "DECISION_KINDS",
    "CheckReport",
    "GameProblem",
    "QuitResult",
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

ADVICE: dict[FaultReason, str] = {
    FaultReason.FAILED_TO_START: "the command could not be started: check the path and permissions",
    FaultReason.NO_HANDSHAKE: "answer the arbiter's hello with "
    '{"type":"hello","name":...,"author":...,"version":...,"protocol":'
    f"{PROTOCOL_VERSION}}} and flush stdout",
    FaultReason.TIMEOUT: "reply within time_ms, and flush stdout after every line",
    FaultReason.DISCONNECTED: "keep running and keep stdout open until told to quit",
    FaultReason.INVALID_MESSAGE: "send exactly one JSON object per line, with only the "
    "documented fields",
    FaultReason.ILLEGAL_ACTION: "answer with one of the strings in the request's view.legal",
    FaultReason.RESOURCE_LIMIT: "stay within the memory and CPU limits",
}
"""What a bot author should do about each fault (every reason has an entry)."""

_FATAL = (FaultReason.FAILED_TO_START, FaultReason.NO_HANDSHAKE)
"""Faults after which playing more games cannot tell anything new."""


_UNSAFE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})


def terminal_safe(text: str) -> str:
    """``text`` with every control or invisible formatting character escaped (``\\x1b``).

    For anything a bot chose (its name, an offending line, its stderr) before it is
    printed: a raw escape sequence could clear or rewrite the user's terminal, and a
    bidirectional override could make the text read differently from what it is.
    """
    if text.isprintable():
        return text
    return "".join(
        ch.encode("unicode_escape").decode("ascii")
        if unicodedata.category(ch) in _UNSAFE_CATEGORIES
        else ch
        for ch in text
    )


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
        return text + f"\n    fix: {ADVICE[FaultReason(self.reason)]}"


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
    if report.warning is not None:
        out.append(report.warning)
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
    if report.quit is QuitResult.EXITED:
        out.append("quit: ok (exited by itself)")
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
    handshake_ms: int = 10_000,
    sandbox: SandboxMode = "auto",
) -> CheckReport:
    """Take the bot through up to ``games`` games against the random engine and report.

    The bot runs in the sandbox ``sandbox`` asks for, as it would in a tournament.
    """
    sandboxed, warning = sandbox_enabled(sandbox)
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False) if sandboxed else None
    command = BotCommand(
        argv, base_env=minimal_env(home="/tmp" if sandboxed else None), sandbox=plan
    )
    problems: list[GameProblem] = []
    seen: set[str] = set()
    handshake: str | None = None
    rules = make_rules()
    records: list[GameRecord] = []
    stopped_early = False
    async with trio.open_nursery() as nursery:
        bot = BotSession("checked", command, nursery, handshake_ms=handshake_ms)
        opponent = BotSession(
            "random", BotCommand([sys.executable, "-m", "engines.random.bot"]), nursery
        )
        for g in range(games):
            seat = g % 2
            engines = ("checked", "random") if seat == 0 else ("random", "checked")
            sessions = (bot, opponent) if seat == 0 else (opponent, bot)
            spec = GameSpec(
                game_id=g,
                engines=engines,
                rules=rules,
                seed=12345,
                deal_set=g,
                first_dealer=(g // 2) % 2,
                time=TimeSettings(per_move_ms=time_per_move),
            )
            try:
                rec = await play_game(spec, sessions)
            except ArbiterError as exc:  # both bots were stopped; nobody is blamed
                problems.append(GameProblem(game=g + 1, reason="", detail=str(exc)))
                stopped_early = True
                break
            records.append(rec)
            if g == 0 and bot.info.bot_name:
                info = bot.info
                handshake = f"{info.bot_name} {info.version} by {info.author}"
            term = rec.termination
            if term.reason != "normal":
                who = rec.engines[term.offender] if term.offender is not None else "?"
                if who == "checked":
                    problems.append(GameProblem(g + 1, term.reason, term.detail, term.line or ""))
                    if term.reason in _FATAL or len(problems) >= 3:
                        stopped_early = True
                        break
            for deal in rec.deals:
                for a in deal.actions:
                    if rec.engines[a.seat] == "checked" and not a.substituted:
                        seen.add(decision_kind(a.action))
            if seen == set(DECISION_KINDS) and g >= 1:
                break
        # The quit semantics: the bot must exit by itself after "quit".
        quit_ok = await _quits_cleanly(bot)
        await opponent.stop()
    # What the bot left behind outside its process group (see arbiter.sandbox).
    reap_escapees(live_pids())
    return CheckReport(
        warning=warning,
        handshake=handshake,
        games=len(records),
        game_problems=tuple(problems),
        stopped_early=stopped_early,
        seen=frozenset(seen),
        quit=(
            QuitResult.NOT_RUNNING
            if quit_ok is None
            else QuitResult.EXITED
            if quit_ok
            else QuitResult.HUNG
        ),
    )


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
