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
from collections.abc import Callable

import trio

from arbiter.bot import BotCommand, live_pids
from arbiter.faults import ArbiterError, FaultReason
from arbiter.game import BotSession, GameSpec, TimeSettings, play_game
from arbiter.record import GameRecord
from arbiter.rules import make_rules
from arbiter.sandbox import (
    SandboxMode,
    SandboxPlan,
    minimal_env,
    reap_escapees,
    sandbox_enabled,
)
from protocol.messages import PROTOCOL_VERSION

__all__ = ["ADVICE", "DECISION_KINDS", "check_bot", "decision_kind", "terminal_safe"]

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


async def check_bot(
    argv: list[str],
    *,
    games: int = 30,
    time_per_move: int = 2000,
    handshake_ms: int = 10_000,
    out: Callable[[str], None] | None = None,
    sandbox: SandboxMode = "auto",
) -> bool:
    """Run the check and print the report (or pass lines to ``out``); True if it complies.

    The bot runs in the sandbox ``sandbox`` asks for, as it would in a tournament.
    """
    write: Callable[[str], None] = print if out is None else out
    sandboxed, warning = sandbox_enabled(sandbox)
    if warning is not None:
        write(warning)
    plan = SandboxPlan.for_engine(argv, None, own_dir_configured=False) if sandboxed else None
    command = BotCommand(
        argv, base_env=minimal_env(home="/tmp" if sandboxed else None), sandbox=plan
    )
    problems: list[str] = []
    seen: set[str] = set()
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
                problems.append(
                    f"game {g + 1}: {terminal_safe(str(exc))}\n    this is an error of the "
                    "arbiter, not of the bot: please report it"
                )
                stopped_early = True
                break
            records.append(rec)
            if g == 0:
                info = bot.info
                if info.bot_name:
                    said = f"{info.bot_name} {info.version} by {info.author}"
                    write(f"handshake: ok ({terminal_safe(said)})")
            term = rec.termination
            if term.reason != "normal":
                who = rec.engines[term.offender] if term.offender is not None else "?"
                if who == "checked":
                    text = f"game {g + 1}: {term.reason}: {terminal_safe(term.detail)}"
                    if term.line:
                        text += f"\n    offending line: {terminal_safe(term.line)}"
                    text += f"\n    fix: {ADVICE[FaultReason(term.reason)]}"
                    problems.append(text)
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
    if not records:
        write("no games were recorded")
    for p in problems:
        write("FAIL " + p)
    shown = len(problems)
    if stopped_early and records:
        write(f"(stopped after game {len(records)}: the bot keeps failing)")
    for kind, label in DECISION_KINDS.items():
        write(f"decision {label}: {'ok' if kind in seen else 'never answered'}")
    missing = [DECISION_KINDS[k] for k in DECISION_KINDS if k not in seen]
    if missing and not problems:
        problems.append(
            f"never answered: {', '.join(missing)} (in {len(records)} games; try --games more)"
        )
    if quit_ok is False:
        problems.append(
            "did not exit within 2 seconds of quit: exit when you read "
            '{"type":"quit"} or reach end of input'
        )
    elif quit_ok is True:
        write("quit: ok (exited by itself)")
    for p in problems[shown:]:
        write("FAIL " + p)
    write(
        "PASS: the bot follows the protocol"
        if not problems
        else f"{len(problems)} problem(s) found"
    )
    return not problems


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
