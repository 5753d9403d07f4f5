"""The referee: one game of the rules turned into protocol traffic, pure and synchronous.

A :class:`Referee` owns a :class:`~arbiter.rules.State` and answers three questions
for the game runner, which only moves bytes and measures time (PROTOCOL.md §3, §5, §6):

* :meth:`Referee.notices` — the notices to send next, as ``(seat, message)`` pairs in
  order (``new_game``, ``deal``, ``event``, ``hand``, ``deal_end``, ``game_end``,
  ``forfeit``);
* :meth:`Referee.request` — the pending decision ``(seat, Request)``, or None when the
  game is over;
* :meth:`Referee.submit` — the bot's decoded reply; raises a fault
  (:class:`~arbiter.faults.InvalidMessage` or :class:`~arbiter.faults.IllegalAction`)
  or applies the action and queues what follows.

A runner's loop::

    ref = Referee(rules=..., names=(a, b), game_id=..., decks=seeded_decks(seed, n), ...)
    while True:
        for seat, msg in ref.notices():
            send(seat, msg)                      # best effort to a dead bot
        pending = ref.request()
        if pending is None:
            break
        seat, req = pending
        limit = decision_limit_ms(req) + grace_ms
        try:
            line, seconds = await exchange(seat, req, limit)   # send + read, within limit
            ref.submit(seat, decode_from_bot(line), elapsed_ms=seconds * 1000)
        except BotFault as e:    # timeout, EOF, undecodable line, wrong id, illegal action
            ref.forfeit(seat, e.reason, e.detail)
    # now ref.winner, ref.end_reason, ref.scores, ref.decks, ref.log, ref.fault

Hidden information (PROTOCOL.md §7): every message built for a seat comes from
:func:`arbiter.view.observe` for that seat or from a public event
(:func:`arbiter.view.event_to_struct`); nothing here reads the opponent's hand,
the discards or the stock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

from arbiter.cards import CARD_TEXT
from arbiter.faults import FaultReason, IllegalAction, InvalidMessage
from arbiter.record import ActionRecord, DealRecord
from arbiter.rules import (
    ActionError,
    Event,
    IllegalActionError,
    Phase,
    Rules,
    Seed,
    State,
    deck_for,
    format_action,
    new_game,
    parse_action,
)
from arbiter.view import event_to_struct, observe
from protocol.messages import (
    Action,
    Deal,
    DealEnd,
    EventNotice,
    Forfeit,
    FromBot,
    GameEnd,
    Hand,
    NewGame,
    Request,
    ToBot,
)

__all__ = ["DeckSource", "Referee", "charged_ms", "decision_limit_ms", "seeded_decks"]

DeckSource = Callable[[int], Sequence[int]]
"""Gives the 32-card order of deal number ``n`` (from 1) of this game."""


def decision_limit_ms(request: Request) -> int:
    """The time ``request`` allows, before the grace margin (PROTOCOL.md §5.2).

    Under a game clock the remaining clock alone governs: ``time_ms`` then holds the
    initial bank and limits nothing (increments can lift ``clock_ms`` above it).
    """
    return request.time_ms if request.clock_ms is None else request.clock_ms


def charged_ms(elapsed_s: float) -> int:
    """Milliseconds a reply that took ``elapsed_s`` seconds costs its clock (PROTOCOL.md §5.2).

    Time is measured to the microsecond and charged rounded up to the millisecond, so
    every reply costs at least 1 ms: a bot cannot live on sub-millisecond replies for free.
    """
    micros = int(elapsed_s * 1_000_000)
    return -(-micros // 1000)


def seeded_decks(seed: Seed, game_number: int) -> DeckSource:
    """The standard deck source: :func:`arbiter.rules.deck_for` for this match seed and game."""
    return lambda deal: deck_for(seed, game_number, deal)


class Referee:
    """One game between two seats, as protocol messages (see the module docstring)."""

    def __init__(
        self,
        *,
        rules: Rules,
        names: tuple[str, str],
        game_id: str,
        decks: DeckSource,
        first_dealer: int,
        time_ms: int,
        clock_ms: int | None = None,
        match: str = "",
        game_number: int = 1,
        pair: int | None = None,
        first_request_ids: tuple[int, int] = (1, 1),
    ) -> None:
        """Set up the game and queue ``new_game`` and the first deal's notices."""
        self.state: State = new_game(rules, first_dealer)
        """The rules state (read it; never send anything derived from it to a bot)."""
        self.game_id = game_id
        """Game id used in the messages."""
        self.time_ms = time_ms
        """Time per decision in milliseconds."""
        self.clocks: list[int] | None = None if clock_ms is None else [clock_ms, clock_ms]
        """Remaining game clock of each seat in milliseconds, or None without a clock."""
        self.decks: list[tuple[int, ...]] = []
        """Every deck dealt so far, in order (for the game record)."""
        self.log: list[tuple[int, str]] = []
        """Every accepted action as ``(seat, canonical action text)``."""
        self.winner: int | None = None
        """Winning seat once the game is over (None while playing or when aborted)."""
        self.end_reason: Literal["target", "forfeit", "aborted"] | None = None
        """Why the game ended, once it has."""
        self.fault: tuple[int, FaultReason, str] | None = None
        """``(seat, reason, detail)`` of the fault that ended the game, if any."""
        self._finished_deals: list[DealRecord] = []
        # The deal under way: its record is built when it ends (or the game does).
        self._deal_actions: list[ActionRecord] = []
        self._deal_head: tuple[int, int, list[str]] | None = None  # number, dealer, deck
        self._deck_source = decks
        # One counter per seat: a shared one would let a seat count the opponent's
        # requests, e.g. a silent no-mark that reveals an unmarked king.
        self._next_ids = list(first_request_ids)
        self._pending: tuple[int, int] | None = None  # (seat, request id)
        self._outbox: list[tuple[int, ToBot]] = []
        self._events_sent = 0
        for seat in (0, 1):
            self._outbox.append(
                (
                    seat,
                    NewGame(
                        game=game_id,
                        match=match,
                        game_number=game_number,
                        pair=pair,
                        seat=seat,
                        opponent=names[1 - seat],
                        first_dealer=first_dealer,
                        rules=rules,
                        time_ms=time_ms,
                        clock_ms=clock_ms,
                    ),
                )
            )
        self._advance()

    # -- what the runner reads ------------------------------------------------------------

    @property
    def over(self) -> bool:
        """Whether the game has ended (by the rules, a forfeit or an abort)."""
        return self.end_reason is not None

    @property
    def scores(self) -> tuple[int, int]:
        """Game points of seats 0 and 1."""
        return self.state.scores[0], self.state.scores[1]

    @property
    def next_request_ids(self) -> tuple[int, int]:
        """The ids each seat's next request will get (the next game's ``first_request_ids``)."""
        return self._next_ids[0], self._next_ids[1]

    @property
    def pending_seat(self) -> int | None:
        """The seat a decision is pending from (cheaper than :meth:`request`)."""
        return None if self._pending is None else self._pending[0]

    def deal_records(self) -> list[DealRecord]:
        """Every deal so far for the game record; a deal cut short by a forfeit as it stood."""
        deals = list(self._finished_deals)
        if self._deal_head is not None:
            deals.append(self._deal_record(self._deal_head))
        return deals

    def notices(self) -> list[tuple[int, ToBot]]:
        """Take the queued notices, in the order they must be sent."""
        out, self._outbox = self._outbox, []
        return out

    def request(self) -> tuple[int, Request] | None:
        """The pending decision as ``(seat, Request)``, or None when the game is over.

        Send :meth:`notices` first.  Calling again without a :meth:`submit` returns the
        same request (same id), with the seat's current clock.
        """
        if self._pending is None:
            return None
        seat, rid = self._pending
        clock = None if self.clocks is None else self.clocks[seat]
        return seat, Request(
            id=rid, time_ms=self.time_ms, clock_ms=clock, view=observe(self.state, seat)
        )

    # -- what the runner tells it ---------------------------------------------------------

    def submit(
        self, seat: int, message: FromBot, elapsed_ms: float = 0.0, *, substituted: bool = False
    ) -> None:
        """Check and apply ``seat``'s reply to the pending request.

        ``elapsed_ms`` (from starting to send the request to receiving the reply) is
        charged to the seat's clock if there is one (:func:`charged_ms`: rounded up)
        and kept in the deal record; ``substituted`` marks an action the runner chose
        for a faulted seat (fault policy ``random_substitute``).  Raises
        :class:`~arbiter.faults.InvalidMessage` for a reply that is not an ``action`` or
        has a stale or mismatched ``id``, :class:`~arbiter.faults.IllegalAction` for
        action text that is not valid notation or not legal now (the state is unchanged
        either way; the faults hold no ``line``: the runner has it), and
        ``RuntimeError`` if ``seat`` was not asked (a runner bug, never a bot's fault).
        """
        if self._pending is None or self._pending[0] != seat:
            raise RuntimeError(f"submit for seat {seat}; pending request: {self._pending}")
        rid = self._pending[1]
        if self.clocks is not None:
            self.clocks[seat] = max(0, self.clocks[seat] - charged_ms(elapsed_ms / 1000))
        if not isinstance(message, Action):
            raise InvalidMessage(
                f'expected an "action" message answering request {rid}, '
                f'got a "{type(message).__struct_config__.tag}" message',
            )
        if message.id != rid:
            raise InvalidMessage(
                f"reply id {message.id} does not answer request {rid} (stale or mismatched id)",
            )
        try:
            action = parse_action(message.action)
            self.state.apply_checked(seat, action)
        except (ActionError, IllegalActionError) as exc:
            raise IllegalAction(str(exc)) from None
        self._pending = None
        text = format_action(action)
        self.log.append((seat, text))
        self._deal_actions.append(ActionRecord(seat, text, round(elapsed_ms, 3), substituted))
        self._advance()

    def forfeit(self, seat: int, reason: FaultReason, detail: str) -> None:
        """End the game: ``seat`` faulted and loses.

        Queues a ``forfeit`` notice to the offender (send it before stopping the bot)
        and ``game_end`` to the opponent.  Ignored once the game is over.
        """
        if self.over:
            return
        self._pending = None
        self.fault = (seat, reason, detail)
        self.winner = 1 - seat
        self.end_reason = "forfeit"
        self._outbox.append((seat, Forfeit(game=self.game_id, reason=reason, detail=detail)))
        self._outbox.append((1 - seat, self._game_end()))

    def abort(self) -> None:
        """End the game with no winner (an arbiter error, never charged to a bot)."""
        if self.over:
            return
        self._pending = None
        self.end_reason = "aborted"
        end = self._game_end()
        self._outbox += [(0, end), (1, end)]

    # -- internals ------------------------------------------------------------------------

    def _game_end(self) -> GameEnd:
        assert self.end_reason is not None
        return GameEnd(
            game=self.game_id,
            winner=self.winner,
            reason=self.end_reason,
            scores=list(self.state.scores),
        )

    def _advance(self) -> None:
        """Queue the events since the last call, and deal on until a decision or the end."""
        state = self.state
        out = self._outbox
        while True:
            self._flush_events()
            if state.phase in (Phase.DEAL, Phase.GAME_OVER) and state.deal_number > 0:
                end = DealEnd(
                    deal=state.deal_number,
                    complete=state.tricks[0] + state.tricks[1] == 5,
                    tricks=list(state.tricks),
                    points=list(state.deal_points),
                    scores=list(state.scores),
                )
                out += [(0, end), (1, end)]
                if self._deal_head is not None:
                    self._finished_deals.append(self._deal_record(self._deal_head))
                    self._deal_head = None
            if state.phase == Phase.GAME_OVER:
                self.winner = state.winner
                self.end_reason = "target"
                end_msg = self._game_end()
                out += [(0, end_msg), (1, end_msg)]
                return
            if state.phase != Phase.DEAL:
                seat = state.to_act
                self._pending = (seat, self._next_ids[seat])
                self._next_ids[seat] += 1
                return
            deck = tuple(self._deck_source(state.deal_number + 1))
            self.decks.append(deck)
            before = list(state.scores)  # a turned-up king scores inside state.deal()
            state.deal(deck)
            self._deal_head = (state.deal_number, state.dealer, [CARD_TEXT[c] for c in deck])
            self._deal_actions = []
            self._events_sent = 0
            for seat in (0, 1):
                view = observe(state, seat)
                assert view.turnup is not None
                out.append(
                    (
                        seat,
                        Deal(
                            deal=view.deal,
                            dealer=view.dealer,
                            hand=view.hand,
                            turnup=view.turnup,
                            scores=before,
                        ),
                    )
                )

    def _deal_record(self, head: tuple[int, int, list[str]]) -> DealRecord:
        number, dealer, deck = head
        st = self.state
        return DealRecord(
            number=number,
            dealer=dealer,
            deck=deck,
            actions=self._deal_actions,
            tricks=list(st.tricks),
            points=list(st.deal_points),
        )

    def _flush_events(self) -> None:
        """Queue every new public event for both seats (plus ``hand`` after an exchange)."""
        state = self.state
        events = state.events
        for i in range(self._events_sent, len(events)):
            event = events[i]
            notice = EventNotice(event=event_to_struct(event))
            self._outbox += [(0, notice), (1, notice)]
            if event[0] == Event.EXCHANGE:
                seat = event[1]
                self._outbox.append((seat, Hand(hand=observe(state, seat).hand)))
        self._events_sent = len(events)
