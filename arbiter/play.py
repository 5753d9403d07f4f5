"""``ecarte play``: a person plays one game against an engine in the terminal.

The person is a seat of the ordinary game loop (:func:`arbiter.game.play_game`): a
:class:`HumanSeat` stands where a :class:`~arbiter.session.BotSession` would and takes
the very lines a bot in that seat would get.  Each line is decoded as a bot decodes it
and :class:`Screen` turns the message into text, so the person sees exactly what a bot
would (``new_game``, ``deal``, ``event``, ``hand``, ``request`` with its view and legal
actions, ``deal_end``, ``game_end``) and nothing of the game state itself.  The
person's choice goes back as an ``action`` line, checked by the same referee, and the
game is journaled like any other, so ``ecarte show`` replays it.

The person has no time limit; the engine keeps its time per decision.  ``q``, end of
input (Ctrl+D) or Ctrl+C at a prompt leaves the game: it is recorded as the person's
forfeit (reason ``disconnected``).  Ctrl+C while the engine thinks stops the program
without recording the game.
"""

from __future__ import annotations

import io
import os
import secrets
import select
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

import msgspec
import trio

from arbiter.cards import RANK_CHARS, SUIT_CHARS, SUIT_NAMES
from arbiter.check import terminal_safe
from arbiter.config import (
    ConfigError,
    EngineConfig,
    ResolvedConfig,
    RulesConfig,
    TimeControl,
    TournamentConfig,
    rule_options,
)
from arbiter.faults import ArbiterError, BotFault, Disconnected
from arbiter.game import GameSpec, play_game
from arbiter.journal import Journal, make_private_dir, open_private, write_private
from arbiter.preflight import preflight
from arbiter.record import EngineInfo, GameRecord
from arbiter.rules import Rules, RulesError, Seed, discard_span
from arbiter.sandbox import (
    BOT_USER_AUTO,
    BotUserSpec,
    SandboxMode,
    plan_warnings,
    sandbox_enabled,
)
from arbiter.session import BotSession
from arbiter.show import SCORE_WORDS, Style, style_for
from arbiter.tournament import (
    engine_commands,
    log_path,
    resolve_config,
    schedule_of,
    short_seed_warning,
    time_settings,
)
from protocol.messages import (
    Action,
    Deal,
    DealEnd,
    EventNotice,
    Forfeit,
    GameEnd,
    Hand,
    NewGame,
    Request,
    ToBot,
    decode_to_bot,
    encode,
)
from protocol.view import (
    Accepted,
    CardPlayed,
    Exchanged,
    Marked,
    Observation,
    Proposed,
    Refused,
    Scored,
    Stood,
    TrickWon,
)

__all__ = [
    "HUMAN",
    "ChoiceError",
    "Console",
    "HumanSeat",
    "PlayError",
    "Screen",
    "parse_choice",
    "play_in_terminal",
]

HUMAN = "human"
"""The person's engine name in the record."""

PROMPT = "> "
"""Ends every prompt line."""

_WORDS = ("stand", "propose", "accept", "refuse", "mark", "no-mark", "discard")
_SYMBOL_SUITS = dict(zip("♠♥♦♣", SUIT_CHARS, strict=True))


class PlayError(ValueError):
    """A ``play`` command that cannot start (bad rules, an output directory in use)."""


class ChoiceError(ValueError):
    """What the person typed is not an action open now; the message says why."""


# ----------------------------------------------------------------------------- input


def _card_text(token: str) -> str | None:
    """``token`` as card notation if it names a card (any case, ``10`` or a suit symbol)."""
    t = token.strip().upper()
    if t.startswith("10"):
        t = "T" + t[2:]
    if len(t) == 2 and t[1] in _SYMBOL_SUITS:
        t = t[0] + _SYMBOL_SUITS[t[1]]
    if len(t) == 2 and t[0] in RANK_CHARS and t[1] in SUIT_CHARS:
        return t
    return None


def _suit_name(letter: str) -> str:
    return SUIT_NAMES[SUIT_CHARS.index(letter)]


def _why_not_card(card: str, view: Observation) -> str:
    """Why ``card`` cannot be played now, from the seat's view alone."""
    legal = ", ".join(view.legal)
    if view.phase != "trick":
        return f"{card}: this is not the time to play a card (choose: {legal})"
    if card not in view.hand:
        return f"{card} is not in your hand"
    if view.trick:
        led = view.trick[0]
        suit = led[1]
        if any(c[1] == suit for c in view.hand):
            if card[1] != suit:
                return f"{card} cannot be played: {led} was led and you must follow suit"
            return f"{card} cannot be played: you must beat {led} when you can (play {legal})"
        return (
            f"{card} cannot be played: you have no {_suit_name(suit)}, so you must trump "
            f"(play {legal})"
        )
    return f"{card} cannot be played now (play {legal})"


def _discard_choice(words: list[str], view: Observation) -> str:
    legal = view.legal
    sizes = [len(a.split()) - 1 for a in legal]
    low, high = min(sizes), max(sizes)
    if words and words[0].lower() == "discard":
        words = words[1:]
    if words in ([], ["0"]) or [w.lower() for w in words] == ["none"]:
        if "discard" in legal:
            return "discard"
        raise ChoiceError(f"you must discard at least {low} card{'s' if low > 1 else ''}")
    chosen: list[str] = []
    for w in words:
        if w.isdigit():
            n = int(w)
            if not 1 <= n <= len(view.hand):
                raise ChoiceError(
                    f"no card {n} in your hand: cards are numbered 1-{len(view.hand)}"
                )
            card = view.hand[n - 1]
        else:
            named = _card_text(w)
            if named is None:
                raise ChoiceError(
                    f"unknown card {w!r}: type the numbers of the cards (1-{len(view.hand)}) "
                    "or the cards, like 7H 9S"
                )
            if named not in view.hand:
                raise ChoiceError(f"{named} is not in your hand")
            card = named
        if card in chosen:
            raise ChoiceError(f"{card} is listed twice")
        chosen.append(card)
    wanted = set(chosen)
    for action in legal:
        if set(action.split()[1:]) == wanted:
            return action
    raise ChoiceError(f"you must discard {discard_span(low, high, view.stock)}, not {len(chosen)}")


def parse_choice(text: str, view: Observation) -> str:
    """The legal action (notation) that ``text`` names, or :class:`ChoiceError` saying why not.

    ``text`` is a number from the listed actions (in a discard: of the cards in the
    hand), or notation: a card (``KH``, ``kh``, ``10h``), a word (``propose``), cards to
    discard (``7H 9S`` or ``discard 7H 9S``).  Only the view is consulted.
    """
    words = text.split()
    legal = view.legal
    if view.phase == "discard":
        return _discard_choice(words, view)
    if len(words) == 1 and words[0].isdigit():
        n = int(words[0])
        if 1 <= n <= len(legal):
            return legal[n - 1]
        raise ChoiceError(f"no action {n}: choose 1-{len(legal)}")
    token = " ".join(words)
    card = _card_text(token)
    if card is not None:
        if card in legal:
            return card
        raise ChoiceError(_why_not_card(card, view))
    word = token.lower()
    if word in legal:
        return word
    choices = ", ".join(legal)
    if word in _WORDS or word.startswith("discard "):
        raise ChoiceError(f"{word!r} is not possible now (choose: {choices})")
    raise ChoiceError(
        f"unknown action {terminal_safe(token)!r}: type a number 1-{len(legal)} or one of: "
        f"{choices}"
    )


def rules_reminder(rules: Rules) -> list[str]:
    """A short reminder of the rules in force and of how to answer."""
    follow = "follow suit and beat the card led if you can; if void, trump if you can"
    if not rules.must_trump:
        follow = "follow suit and beat the card led if you can; if void, play any card"
    dealer_min = "at least 1" if rules.dealer_min_discard else "0 or more"
    return [
        "rules reminder:",
        "  ranks, high to low: K Q J A T 9 8 7 (the ace between the jack and the ten)",
        "  non-dealer: stand (play at once: you become vulnerable) or propose an exchange;",
        "  dealer: accept (both then discard and draw; the dealer takes "
        f"{dealer_min}) or refuse (refusing the first proposal makes you vulnerable)",
        "  the king of trumps may be marked for 1 point (a turned-up king scores the dealer 1)",
        f"  tricks: {follow}",
        "  3 or 4 tricks: 1 point (2 if the loser was vulnerable); all 5 (the vole): "
        f"{2 if rules.vulnerable_vole_points == 2 else '2, or 3 against a vulnerable player'}",
        f"  the first to {rules.target} points wins",
        "answer with the number of an action or its notation (KH, 10h, propose, 7H 9S);",
        "in a discard the numbers are those of your cards; q (or Ctrl+D) leaves the game,",
        "which counts as a loss; you have no time limit",
    ]


# ----------------------------------------------------------------------------- output


@dataclass
class Screen:
    """Turns the messages of one seat into text for the person in that seat.

    It keeps only what those messages said (the seat's own hand, the trick, the
    running score): the screen can show nothing a bot in the seat would not know.
    """

    style: Style = field(default_factory=Style)
    seat: int = 0
    opponent: str = "opponent"
    rules: Rules = field(default_factory=Rules)
    hand: list[str] = field(default_factory=list)
    scores: list[int] = field(default_factory=lambda: [0, 0])
    tricks: list[int] = field(default_factory=lambda: [0, 0])
    trick: list[CardPlayed] = field(default_factory=list)
    exchanging: bool = False
    """Our own exchange was announced: the next ``hand`` message shows what we drew."""

    def who(self, seat: int) -> str:
        """Who sits at ``seat``, as a subject."""
        return "you" if seat == self.seat else self.opponent

    def act(self, seat: int, verb: str, third: str | None = None) -> str:
        """Subject and verb, agreed: ``you play`` or ``random plays``."""
        return f"{self.who(seat)} {verb if seat == self.seat else third or verb + 's'}"

    def score_text(self, scores: list[int]) -> str:
        """The score, the person first."""
        me, them = scores[self.seat], scores[1 - self.seat]
        return f"you {me} - {them} {self.opponent}"

    def notice(self, msg: ToBot) -> list[str]:
        """The lines that show ``msg``."""
        s = self.style
        match msg:
            case NewGame():
                self.seat = msg.seat
                self.opponent = terminal_safe(msg.opponent)
                self.rules = msg.rules
                return [
                    s.bold(
                        f"game {terminal_safe(msg.game)}: you (seat {msg.seat}) against "
                        f"{self.opponent} (seat {1 - msg.seat})"
                    ),
                    f"  rules {terminal_safe(msg.rules.preset)}: the first to "
                    f"{msg.rules.target} points wins; {self.act(msg.first_dealer, 'deal')} "
                    "first",
                    f"  {self.opponent} has {msg.time_ms} ms per decision; you have no "
                    "time limit. ? shows the rules, q leaves the game.",
                ]
            case Deal():
                self.hand = list(msg.hand)
                self.scores = list(msg.scores)
                self.tricks = [0, 0]
                self.trick = []
                return [
                    "",
                    s.bold(
                        f"deal {msg.deal}: {self.act(msg.dealer, 'deal')}; score "
                        f"{self.score_text(msg.scores)}"
                    ),
                    f"  turn-up {s.card(msg.turnup)}: trumps {s.suit(msg.turnup[1])}",
                    f"  your hand: {s.cards(self.hand)}",
                ]
            case EventNotice():
                return list(self._event(msg))
            case Hand():
                before, self.hand = self.hand, list(msg.hand)
                if not self.exchanging:
                    return [f"  your hand: {s.cards(self.hand)}"]
                self.exchanging = False
                gone = [c for c in before if c not in self.hand]
                new = [c for c in self.hand if c not in before]
                return [
                    f"  you discard {s.cards(gone)} and draw {s.cards(new)}; "
                    f"your hand: {s.cards(self.hand)}"
                ]
            case DealEnd():
                me, them = self.seat, 1 - self.seat
                more = "" if msg.complete else " (the game ended mid-deal)"
                return [
                    f"  deal {msg.deal} over{more}: tricks you {msg.tricks[me]} - "
                    f"{msg.tricks[them]}, points you {msg.points[me]} - {msg.points[them]}; "
                    f"score {self.score_text(msg.scores)}"
                ]
            case GameEnd():
                if msg.winner is None:
                    head = "the game was aborted by an arbiter error"
                elif msg.winner == self.seat:
                    head = "you win"
                else:
                    head = f"{self.opponent} wins"
                why = " (by forfeit)" if msg.reason == "forfeit" else ""
                return ["", s.bold(f"game over: {head}{why}; score {self.score_text(msg.scores)}")]
            case Forfeit():
                return [
                    "",
                    s.alert(f"you lose the game by forfeit ({msg.reason}): {msg.detail}"),
                ]
            case _:
                return []

    def _event(self, notice: EventNotice) -> Iterator[str]:
        s = self.style
        match notice.event:
            case Stood(seat=seat):
                yield f"  {self.act(seat, 'stand')}"
            case Proposed(seat=seat):
                yield f"  {self.act(seat, 'propose')} an exchange"
            case Accepted(seat=seat):
                yield f"  {self.act(seat, 'accept')}"
            case Refused(seat=seat):
                yield f"  {self.act(seat, 'refuse')}"
            case Exchanged(seat=seat, count=count):
                if seat == self.seat:
                    self.exchanging = True  # the hand message that follows tells the rest
                else:
                    yield f"  {self.act(seat, 'discard')} {count} and draws {count}"
            case Marked(seat=seat, card=card):
                yield f"  {self.act(seat, 'mark')} the king of trumps {s.card(card)}"
            case CardPlayed(seat=seat, card=card):
                verb = "lead" if not self.trick else "play"
                self.trick.append(notice.event)
                if seat == self.seat and card in self.hand:
                    self.hand.remove(card)
                yield f"  {self.act(seat, verb)} {s.card(card)}"
            case TrickWon(seat=seat, trick=n):
                self.trick = []
                self.tricks[seat] += 1
                me, them = self.tricks[self.seat], self.tricks[1 - self.seat]
                won = "win" if seat == self.seat else "wins"
                yield f"  trick {n}: {self.who(seat)} {won} it (tricks you {me} - {them})"
            case Scored(seat=seat, points=points, reason=reason):
                self.scores[seat] += points
                yield (
                    f"  {self.act(seat, 'score')} {points} ({SCORE_WORDS[reason]}): score "
                    f"{self.score_text(self.scores)}"
                )
            case _:
                return

    def request(self, req: Request) -> list[str]:
        """The lines that ask for a decision: the situation and the numbered choices."""
        s = self.style
        v = req.view
        me, them = self.seat, 1 - self.seat
        vulnerable = [self.who(i) for i in (me, them) if v.vulnerable[i]]
        status = (
            f"  [score {self.score_text(v.scores)} | tricks {v.tricks[me]}-{v.tricks[them]} | "
            f"trumps {s.suit(v.trump or 'S')} | stock {v.stock}"
            + (f" | vulnerable: {', '.join(vulnerable)}" if vulnerable else "")
            + "]"
        )
        lines = ["", status, f"  your hand: {s.cards(v.hand)}"]
        if v.phase == "discard":
            sizes = [len(a.split()) - 1 for a in v.legal]
            low, high = min(sizes), max(sizes)
            span = f"{low} to {high}" if low != high else f"{low}"
            lines.append(
                f"  discard {span} cards: type their numbers (e.g. 1 3) or the cards "
                "(e.g. 7H 9S)" + ("; 0 for none" if low == 0 else "")
            )
            lines.append("  " + "   ".join(self._numbered(i, c) for i, c in enumerate(v.hand, 1)))
            return lines
        ask = {
            "propose": "propose an exchange, or stand (play without one)?",
            "answer": "accept the exchange, or refuse it?",
            "mark": "you hold the king of trumps: mark it for 1 point?",
        }.get(v.phase)
        if v.phase == "trick":
            ask = (
                f"your reply to {s.card(v.trick[0])}: play a card"
                if v.trick
                else "your lead: play a card"
            )
        if ask is not None:
            lines.append(f"  {ask}")
        lines.append("  " + "   ".join(self._numbered(i, a) for i, a in enumerate(v.legal, 1)))
        return lines

    def _numbered(self, n: int, action: str) -> str:
        if _card_text(action) == action:
            shown = self.style.card(action)
            return f"{n} {shown}" + (f" ({action})" if self.style.symbols else "")
        return f"{n} {action}"


def read_answer(prompt: str) -> str:
    """:func:`input`, except that a Ctrl+C at a terminal is never lost.

    A SIGINT that lands after the prompt is written but before the blocking read starts
    interrupts nothing: Python would see it only once a line arrives.  So on a terminal
    the read waits for input in short polls (each one lets a pending Ctrl+C through)
    and reads only a line that is there.  In canonical mode a terminal hands over one
    line per read, so nothing waits unseen in Python's buffer.
    """
    if not sys.stdin.isatty():
        return input(prompt)
    sys.stdout.write(prompt)
    sys.stdout.flush()
    fd = sys.stdin.fileno()
    while not select.select([fd], [], [], 0.2)[0]:
        pass
    return input()


class Console:
    """The person's terminal: lines out, one answer in (blocking, with no time limit)."""

    def __init__(
        self,
        out: TextIO | None = None,
        read: Callable[[str], str] = read_answer,
        style: Style | None = None,
    ) -> None:
        self.out = out if out is not None else sys.stdout
        self.read = read
        """Reads one line after printing a prompt; raises EOFError at the end of input."""
        self.style = style if style is not None else style_for(self.out)

    def write(self, lines: list[str]) -> None:
        """Print lines."""
        if lines:
            self.out.write("\n".join(lines) + "\n")
            self.out.flush()

    def ask(self, prompt: str) -> str:
        """One line typed by the person (EOFError, KeyboardInterrupt pass through)."""
        self.out.flush()
        return self.read(prompt)


# ----------------------------------------------------------------------------- the seat


class _HumanLink:
    """The person's side of the wire: decodes the lines a bot would get, answers requests."""

    def __init__(self, console: Console, screen: Screen) -> None:
        self.console = console
        self.screen = screen
        self._fault: BotFault | None = None
        self.log_context = ""
        """Unused: a person's seat keeps no log (it is there because a bot's link has it)."""

    @property
    def fault(self) -> BotFault | None:
        """Set once the person has left the game."""
        return self._fault

    def show(self, line: bytes) -> ToBot:
        """Decode one line as a bot would, and show it."""
        try:
            msg = decode_to_bot(line)
        except msgspec.MsgspecError as exc:
            raise ArbiterError(f"a line for the person's seat does not decode: {exc}") from None
        self.console.write(self.screen.notice(msg))
        return msg

    async def send_many(self, lines: list[bytes], *, deadline: float) -> None:
        """Show notices; the deadline is ignored (a person reads at leisure)."""
        for line in lines:
            self.show(line)

    async def request(
        self, line: bytes, *, timeout: float, preceding: list[bytes] | None = None
    ) -> tuple[bytes, float]:
        """Show the notices and the request, and ask until the person gives a legal action.

        ``timeout`` is ignored: the person has no time limit.  Leaving the game raises
        :class:`~arbiter.faults.Disconnected`.
        """
        for notice in preceding or []:
            self.show(notice)
        req = self.show(line)
        if not isinstance(req, Request):
            raise ArbiterError(f"expected a request for the person's seat, got {req!r}")
        start = time.monotonic()
        action = self._ask(req)
        reply = encode(Action(id=req.id, action=action))[:-1]
        return reply, time.monotonic() - start

    def _ask(self, req: Request) -> str:
        self.console.write(self.screen.request(req))
        while True:
            try:
                # A blocking read, on purpose: nothing else runs during the person's turn
                # (the engine waits for its next message), and Ctrl+C reaches this call as
                # a KeyboardInterrupt raised by trio's handler in this unprotected task.
                text = self.console.ask(
                    f"your choice (number or notation, ? rules, q quit){PROMPT}"
                )
            except EOFError:
                raise self._leave("end of input (Ctrl+D)") from None
            except KeyboardInterrupt:
                raise self._leave("Ctrl+C") from None
            typed = text.strip()
            if typed.lower() in ("q", "quit"):
                raise self._leave("q")
            if typed in ("?", "help"):
                self.console.write(rules_reminder(req.view.rules) + self.screen.request(req))
                continue
            if not typed:
                continue
            try:
                return parse_choice(typed, req.view)
            except ChoiceError as exc:
                self.console.write([self.console.style.alert(f"  {exc}; try again")])

    def _leave(self, how: str) -> Disconnected:
        self.console.write([""])  # after a ^C or ^D the cursor is still on the prompt line
        self._fault = Disconnected(f"the player left the game ({how})")
        return self._fault


class HumanSeat:
    """A person at the terminal as a :class:`~arbiter.session.Seat` of the game loop."""

    def __init__(self, name: str, console: Console) -> None:
        self.info = EngineInfo(name=name)
        """The person has no handshake: the name alone."""
        self.next_request_id = 1
        self.deal_sets_seen: set[int] = set()
        self.console = console
        self.screen = Screen(style=console.style)
        self.bot: _HumanLink | None = _HumanLink(console, self.screen)
        """The person's side of the wire."""

    async def ensure_started(self) -> _HumanLink:
        """The person is always there."""
        assert self.bot is not None
        return self.bot

    async def stop(self) -> None:
        """Nothing to stop."""

    async def tell(self, message: ToBot) -> None:
        """Show the last notice (the person's forfeit)."""
        self.console.write(self.screen.notice(message))

    def explain(self, fault: BotFault) -> str:
        """The fault's detail as recorded."""
        return fault.detail


# ----------------------------------------------------------------------------- the command


@dataclass(frozen=True)
class _Game:
    config: ResolvedConfig
    spec: GameSpec
    engine: EngineConfig


def _prepare(
    engine: EngineConfig,
    *,
    seat: int,
    preset: str,
    options: dict[str, Any],
    seed: Seed | None,
    out: Path,
    per_move_ms: int = 1000,
    sandbox: SandboxMode = "auto",
    bot_user: BotUserSpec = BOT_USER_AUTO,
) -> _Game:
    """The one-game run of ``play``: a schedule of one game with the person at ``seat``."""
    if engine.name == HUMAN:  # a program called "human"
        engine = msgspec.structs.replace(engine, name=f"{HUMAN}-2")
    person = EngineConfig(name=HUMAN, command=["ecarte", "play"])
    seats = [person, engine] if seat == 0 else [engine, person]
    config = TournamentConfig(
        name=f"{HUMAN} vs {engine.name}",
        engines=seats,
        games_per_pairing=1,
        duplicate=False,
        rules=RulesConfig(preset=preset, options=options),
        seed=seed if seed is not None else secrets.token_hex(16),
        concurrency=1,
        out=str(out),
        time_control=TimeControl(per_move_ms=per_move_ms),
        sandbox=sandbox,
        bot_user=bot_user,
    )
    try:
        rules = config.resolved_rules()
    except RulesError as exc:
        raise PlayError(str(exc)) from None
    resolved = resolve_config(config)
    (game,) = schedule_of(resolved)
    assert resolved.seed is not None
    spec = GameSpec(
        game_id=game.game_id,
        engines=game.engines,
        rules=rules,
        seed=resolved.seed,
        deal_set=game.deal_set,
        first_dealer=game.first_dealer,
        pair_id=game.pair_id,
        match=f"{game.pairing[0]}~{game.pairing[1]}",
        time=time_settings(resolved),
        fault_policy=resolved.faults.policy,
    )
    return _Game(resolved, spec, engine)


async def _play(game: _Game, out: Path, console: Console, say: Callable[[str], None]) -> GameRecord:
    config, engine = game.config, game.engine
    sandboxed, warning = sandbox_enabled(config.sandbox)
    for line in (warning, short_seed_warning(config.seed) if config.seed is not None else None):
        if line is not None:
            say(line)
    only = msgspec.structs.replace(config, engines=[engine])
    commands = engine_commands(
        only, Path.cwd(), sandboxed=sandboxed, hidden=[], out_dir=out, warn=say
    )
    for line in plan_warnings({n: c.sandbox for n, c in commands.items()}):
        say(line)
    command = commands[engine.name]
    handshake = config.time_control.handshake_ms
    await preflight(
        {engine.name: command}, options={engine.name: engine.options}, handshake_ms=handshake
    )
    make_private_dir(out / "logs")
    log = log_path(out, engine.name)
    open_private(log, os.O_WRONLY).close()
    write_private(
        out / "config.resolved.json", msgspec.json.format(msgspec.json.encode(config)) + b"\n"
    )
    human = HumanSeat(HUMAN, console)
    async with trio.open_nursery() as nursery:
        session = BotSession(
            engine.name,
            command,
            nursery,
            options=engine.options,
            log_path=log,
            handshake_ms=handshake,
        )
        seats = (human, session) if game.spec.engines[0] == HUMAN else (session, human)
        try:
            # The person's own forfeit is on the screen already, without a bot's fix hint.
            return await play_game(
                game.spec, seats, on_event=lambda t: None if f": {HUMAN} faulted:" in t else say(t)
            )
        finally:
            with trio.CancelScope(shield=True):
                await session.stop()


_E = TypeVar("_E", bound=BaseException)


def _found(exc: BaseException, kind: type[_E]) -> _E | None:
    """``exc`` itself if it is a ``kind``, or the first ``kind`` inside an exception group."""
    if isinstance(exc, kind):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            if (found := _found(inner, kind)) is not None:
                return found
    return None


def play_in_terminal(
    engine: EngineConfig,
    *,
    seat: int = 0,
    preset: str = "default",
    rules: list[str] | None = None,
    seed: Seed | None = None,
    out: Path,
    per_move_ms: int = 1000,
    sandbox: SandboxMode = "auto",
    bot_user: BotUserSpec = BOT_USER_AUTO,
    console: Console | None = None,
    say: Callable[[str], None] | None = None,
) -> int:
    """Play one game against ``engine`` at the terminal, journal it in ``out``; exit status.

    Raises :class:`PlayError` for bad rules or an output directory that already holds a
    game; :class:`~arbiter.preflight.PreflightError` if the engine cannot start.
    """
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(errors="backslashreplace")
    console = console or Console()
    tell = say or (lambda text: print(text, file=sys.stderr, flush=True))
    out = Path(os.path.realpath(out))  # as a tournament's: no link on the way is swapped
    journal_path = out / "games.jsonl"
    if journal_path.exists() and journal_path.stat().st_size:
        raise PlayError(f"{journal_path} already holds a game; choose another --out")
    try:
        options = rule_options(preset, rules or [])
    except ConfigError as exc:
        raise PlayError(str(exc)) from None
    game = _prepare(
        engine,
        seat=seat,
        preset=preset,
        options=options,
        seed=seed,
        out=out,
        per_move_ms=per_move_ms,
        sandbox=sandbox,
        bot_user=bot_user,
    )
    try:
        record = trio.run(_play, game, out, console, lambda text: tell(terminal_safe(text)))
    except BaseException as exc:
        # Trio's nurseries hand these on wrapped in exception groups.
        if _found(exc, KeyboardInterrupt) is not None:
            tell("\ninterrupted while the engine was thinking: the game is not recorded")
            return 130
        error = _found(exc, ArbiterError)
        if error is None:
            raise
        tell(f"error: {error} (not recorded)")
        return 1
    journal = Journal(journal_path)
    try:
        journal.append(record)
    finally:
        journal.close()
    winner = "you win" if record.engines[record.winner] == HUMAN else f"{engine.name} wins"
    me = record.engines.index(HUMAN)
    end = record.termination
    # The detail may quote the bot (an unknown message type it sent): escaped.
    how = "" if end.reason == "normal" else f" ({end.reason}: {terminal_safe(end.detail)})"
    console.write(
        [
            "",
            f"result: {winner} {record.scores[me]}-{record.scores[1 - me]}{how}",
            f"recorded in {journal_path}; replay it with: ecarte show {out} {record.game_id}",
        ]
    )
    return 0
