"""``ecarte show``: one recorded game replayed in the terminal, deal by deal.

The record is replayed through the rules (:mod:`arbiter.rules`) and everything shown
comes from the seats' views (:func:`arbiter.view.observe`): the full replay merges
both seats' views, and ``--seat`` shows one seat's view alone, so it holds exactly
what that seat knew at each moment (its own hand, discards and draws; the opponent's
only as counts).  Card actions are read from the public events, never from the
record's action text, which would give the opponent's discards away.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, TextIO

from arbiter.cards import SUIT_CHARS, Card
from arbiter.check import terminal_safe
from arbiter.hints import fix_hint
from arbiter.journal import JournalReader
from arbiter.record import GameRecord, RecordError, rereferee
from arbiter.rules import Phase, new_game
from arbiter.view import observe
from protocol.view import (
    Accepted,
    CardPlayed,
    DealStarted,
    Exchanged,
    GameEvent,
    Marked,
    Observation,
    Proposed,
    Refused,
    Scored,
    Stood,
    TrickWon,
)

__all__ = [
    "SCORE_WORDS",
    "ShowError",
    "Style",
    "find_game",
    "render_game",
    "show_game",
    "style_for",
]

_SYMBOLS = dict(zip(SUIT_CHARS, "♠♥♦♣", strict=True))
_RED = frozenset("HD")
SCORE_WORDS: Final = {
    "king_turned_up": "king turned up",
    "king_marked": "king marked",
    "point": "the point",
    "point_vulnerable": "the point, opponent vulnerable",
    "vole": "the vole",
    "vole_vulnerable": "the vole, opponent vulnerable",
}
"""How each score reason of the wire (``Scored.reason``) reads in a replay."""


class ShowError(ValueError):
    """A game that cannot be shown: unknown id, bad deal number, or a record that does
    not replay.  Not raised for a damaged journal line (that is a
    :class:`~arbiter.journal.JournalError`)."""


@dataclass(frozen=True, slots=True)
class Style:
    """How cards and headings are printed."""

    symbols: bool = True
    """Suit symbols (♠♥♦♣); False: the plain notation (``KH``)."""
    colour: bool = False
    """ANSI colours (red suits, bold headings)."""

    def card(self, text: str) -> str:
        """One card in notation, as printed."""
        rank, suit = text[0], text[1]
        shown = rank + (_SYMBOLS[suit] if self.symbols else suit)
        if self.colour and suit in _RED:
            return f"\x1b[31m{shown}\x1b[0m"
        return shown

    def cards(self, texts: list[str]) -> str:
        """Several cards, space-separated ("-" for none)."""
        return " ".join(self.card(t) for t in texts) or "-"

    def suit(self, letter: str) -> str:
        """A suit letter, as printed."""
        return _SYMBOLS[letter] if self.symbols else letter

    def bold(self, text: str) -> str:
        """A heading."""
        return f"\x1b[1m{text}\x1b[0m" if self.colour else text

    def alert(self, text: str) -> str:
        """A fault."""
        return f"\x1b[1;33m{text}\x1b[0m" if self.colour else text


def style_for(stream: TextIO, environ: dict[str, str] | None = None) -> Style:
    """The style for ``stream``: symbols if its encoding has them, colour only on a TTY.

    Colour is also off when ``NO_COLOR`` is set (to anything non-empty, as no-color.org
    asks) or ``TERM`` is ``dumb``.
    """
    env = os.environ if environ is None else environ
    try:
        "♠♥♦♣".encode(stream.encoding or "ascii")
        symbols = True
    except (UnicodeEncodeError, LookupError):
        symbols = False
    try:
        tty = stream.isatty()
    except ValueError:  # closed
        tty = False
    colour = tty and not env.get("NO_COLOR") and env.get("TERM") != "dumb"
    return Style(symbols=symbols, colour=colour)


def find_game(out: Path, game_id: int) -> GameRecord:
    """The record of ``game_id`` in a run directory or a ``games.jsonl``, re-refereed.

    Raises :class:`ShowError` if there is no journal, no such game, or the record does
    not replay; :class:`~arbiter.journal.JournalError` for damage before it.
    """
    path = out / "games.jsonl" if out.is_dir() else out
    if not path.exists():
        raise ShowError(f"no journal at {path}")
    ids: list[int] = []
    for entry in JournalReader(path):
        rec = entry.record
        if rec.game_id == game_id:
            try:
                rereferee(rec)
            except RecordError as exc:
                raise ShowError(
                    f"{path}:{entry.line}: game {game_id} does not replay: {exc}"
                ) from None
            return rec
        ids.append(rec.game_id)
    held = f"game ids {min(ids)}-{max(ids)}" if ids else "no games"
    raise ShowError(f"no game {game_id} in {path} ({len(ids)} records, {held})")


@dataclass(slots=True)
class _Renderer:
    record: GameRecord
    style: Style
    seat: int | None

    def name(self, seat: int) -> str:
        return terminal_safe(self.record.engines[seat])

    def sees(self, seat: int) -> bool:
        """Whether the viewer may know ``seat``'s private cards."""
        return self.seat is None or self.seat == seat

    def header(self) -> Iterator[str]:
        rec = self.record
        s = self.style
        yield s.bold(f"game {rec.game_id}: {self.name(0)} (seat 0) vs {self.name(1)} (seat 1)")
        for seat, info in enumerate(rec.info[:2]):
            if info.bot_name or info.version:
                bot = terminal_safe(f"{info.bot_name} {info.version}".strip())
                yield f"  seat {seat} introduced itself as {bot}"
        pair = f", pair {terminal_safe(rec.pair_id)}" if rec.pair_id else ""
        yield (
            f"  deal set {rec.deal_set}{pair}, target {rec.rules.target} "
            f"(rules: {terminal_safe(rec.rules.preset)}), {len(rec.deals)} deal(s)"
        )
        if self.seat is not None:
            yield (
                f"  as seen by seat {self.seat} ({self.name(self.seat)}): "
                "the opponent's cards are hidden"
            )

    def deal_lines(self, views: list[Observation], number: int, scores: list[int]) -> Iterator[str]:
        """The deal's heading (``scores``: before the deal) and the hands dealt."""
        s = self.style
        v = views[0]
        assert v.turnup is not None and v.trump is not None
        yield ""
        yield s.bold(f"deal {number}: {self.name(v.dealer)} deals; score {scores[0]}-{scores[1]}")
        yield f"  turn-up {s.card(v.turnup)}: trumps {s.suit(v.trump)}"
        for seat in (1 - v.dealer, v.dealer):
            hand = (
                s.cards(views[seat].hand)
                if self.sees(seat)
                else f"{len(views[seat].hand)} cards, hidden"
            )
            you = " (you)" if seat == self.seat else ""
            yield f"  {self.name(seat)}{you}: {hand}"

    def event_lines(
        self,
        event: GameEvent,
        before: list[Observation],
        after: list[Observation],
        trick: list[CardPlayed],
    ) -> Iterator[str]:
        s = self.style
        match event:
            case DealStarted():
                return
            case Stood(seat=seat):
                yield f"  {self.name(seat)} stands{self._vulnerable(seat, before, after)}"
            case Proposed(seat=seat):
                yield f"  {self.name(seat)} proposes"
            case Accepted(seat=seat):
                yield f"  {self.name(seat)} accepts"
            case Refused(seat=seat):
                yield f"  {self.name(seat)} refuses{self._vulnerable(seat, before, after)}"
            case Exchanged(seat=seat, count=count):
                line = f"  {self.name(seat)} discards {count}"
                if self.sees(seat):
                    gone = after[seat].discards[-1] if after[seat].discards else []
                    new = [c for c in after[seat].hand if c not in before[seat].hand]
                    # Cards drawn and played in the same step cannot happen: a draw
                    # ends the action, so every drawn card is still in the hand.
                    line += f" ({s.cards(gone)}), draws {s.cards(new)}"
                else:
                    line += f", draws {count}"
                yield line + f"; stock {after[0].stock}"
            case Marked(seat=seat, card=card):
                # The dealer decides after the opening lead, before his reply.
                led = (
                    f" after {self.name(trick[0].seat)} led {s.card(trick[0].card)}"
                    if trick
                    else ""
                )
                yield f"  {self.name(seat)} marks the king {s.card(card)}{led}"
            case CardPlayed():
                trick.append(event)
            case TrickWon(seat=seat, trick=n):
                lead, reply = trick[0], trick[1]
                trick.clear()
                t = after[0].tricks
                yield (
                    f"  trick {n}: {self.name(lead.seat)} leads {s.card(lead.card)}, "
                    f"{self.name(reply.seat)} plays {s.card(reply.card)}; "
                    f"won by {self.name(seat)} (tricks {t[0]}-{t[1]})"
                )
            case Scored(seat=seat, points=points, reason=reason):
                sc = after[0].scores
                yield (
                    f"  {self.name(seat)} scores {points} ({SCORE_WORDS[reason]}): "
                    f"score {sc[0]}-{sc[1]}"
                )

    @staticmethod
    def _vulnerable(seat: int, before: list[Observation], after: list[Observation]) -> str:
        return (
            " (vulnerable)" if after[0].vulnerable[seat] and not before[0].vulnerable[seat] else ""
        )

    def footer(self) -> Iterator[str]:
        rec = self.record
        end = rec.termination
        yield ""
        yield self.style.bold(
            f"result: {self.name(rec.winner)} wins {rec.scores[0]}-{rec.scores[1]}"
        )
        if end.reason == "normal":
            return
        who = f"{self.name(end.offender)} (seat {end.offender})" if end.offender is not None else ""
        yield self.style.alert(f"fault: {terminal_safe(end.reason)} {who}".rstrip())
        if self.seat is not None and end.offender is not None and end.offender != self.seat:
            # The detail and the line are the offender's own: an illegal action's detail
            # lists its legal cards, i.e. its hand, which this seat never saw.
            yield "  (its detail and line are the offender's own: not shown in this seat's view)"
        else:
            if end.detail:
                yield f"  {terminal_safe(end.detail)}"
            if end.line is not None:
                yield f"  line: {terminal_safe(end.line)}"
            hint = fix_hint(end.reason, end.detail or "", end.line)
            if hint is not None:
                yield f"  fix: {hint}"
        if rec.corrupted:
            yield "  the arbiter played random legal actions for the offender from then on"


def render_game(
    record: GameRecord,
    *,
    deal: int | None = None,
    seat: int | None = None,
    style: Style | None = None,
) -> list[str]:
    """The replay of a (re-refereed) record as lines of text.

    ``deal``: only that deal (1-based); ``seat``: only what that seat knew.  Raises
    :class:`ShowError` for a deal number the game does not have.
    """
    if seat not in (None, 0, 1):
        raise ShowError(f"--seat {seat}: a seat is 0 or 1")
    n_deals = len(record.deals)
    if deal is not None and not 1 <= deal <= n_deals:
        have = f"deals 1-{n_deals}" if n_deals else "no deals"
        raise ShowError(f"game {record.game_id} has {have}: no deal {deal}")
    r = _Renderer(record, style or Style(), seat)
    lines = list(r.header())
    st = new_game(record.rules, record.first_dealer)
    for dr in record.deals:
        # A turned-up king scores inside deal(): the heading gives the score before it,
        # and the king's point follows as the deal's first event.
        scores = list(st.scores)
        st.deal([Card.parse(c) for c in dr.deck])
        views = [observe(st, 0), observe(st, 1)]
        shown = deal is None or deal == dr.number
        if shown:
            lines += r.deal_lines(views, dr.number, scores)
            lines += _new_events(r, views, views, 0, [])
        trick: list[CardPlayed] = []
        for a in dr.actions:
            before = views
            seen = len(before[0].events)
            st.apply_text(a.seat, a.action)
            views = [observe(st, 0), observe(st, 1)]
            if not shown:
                continue
            if a.action == "no-mark" and r.sees(a.seat):
                # Only the holder is asked: declining would tell the opponent who holds it.
                lines.append(f"  {r.name(a.seat)} holds the king of trumps and does not mark it")
            new = list(_new_events(r, before, views, seen, trick))
            if a.substituted and new:
                new[0] += " [played by the arbiter]"
            lines += new
        if shown:
            more = "" if st.phase in (Phase.DEAL, Phase.GAME_OVER) else " (the game stopped here)"
            lines.append(
                f"  deal {dr.number}: tricks {dr.tricks[0]}-{dr.tricks[1]}, points "
                f"{dr.points[0]}-{dr.points[1]}, score {st.scores[0]}-{st.scores[1]}{more}"
            )
    lines += r.footer()
    return lines


def _new_events(
    r: _Renderer,
    before: list[Observation],
    after: list[Observation],
    seen: int,
    trick: list[CardPlayed],
) -> Iterator[str]:
    for event in after[0].events[seen:]:
        yield from r.event_lines(event, before, after, trick)


def show_game(
    out: Path,
    game_id: int,
    *,
    deal: int | None = None,
    seat: int | None = None,
    stream: TextIO,
) -> None:
    """Find a game and print its replay to ``stream`` in the stream's style."""
    record = find_game(out, game_id)
    text = "\n".join(render_game(record, deal=deal, seat=seat, style=style_for(stream)))
    stream.write(text + "\n")
    stream.flush()
