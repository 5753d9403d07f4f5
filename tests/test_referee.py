"""Tests of arbiter/referee.py: the transcript, hidden information, faults, clocks."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from arbiter.faults import BotFault, FaultReason
from arbiter.referee import Referee, charged_ms, seeded_decks
from arbiter.rules import Rules, deck_for, make_rules
from engines.random.bot import RandomPlayer
from protocol.messages import (
    Action,
    BotHello,
    Deal,
    EventNotice,
    Forfeit,
    FromBot,
    GameEnd,
    Hand,
    Hello,
    NewGame,
    Quit,
    Request,
    ToBot,
    decode_from_bot,
    decode_to_bot,
    encode,
)
from protocol.view import Proposed

DOC = Path(__file__).resolve().parents[1] / "PROTOCOL.md"
TRANSCRIPT_SEED = 808
"""Seed of the §8 decks: a game with exchanges, a refusal, a marked king and an ending on
a turned-up king (the transcript is written by ``python -m tests.transcript --regenerate``)."""
_TRANSCRIPT = re.compile(r"^```transcript\n(.*?)^```$", re.M | re.S)
_LINE = re.compile(r"^([01]) (<<|>>) (\{.*\})$")


def transcript() -> list[tuple[int, str, bytes]]:
    """The PROTOCOL.md §8 transcript as (seat, direction, line); annotations dropped."""
    match = _TRANSCRIPT.search(DOC.read_text(encoding="utf-8"))
    assert match is not None
    out = []
    for raw in match[1].splitlines():
        if raw and not raw.startswith("#"):
            line = _LINE.match(raw)
            assert line is not None, raw
            out.append((int(line[1]), line[2], line[3].encode() + b"\n"))
    return out


def make_referee(
    seed: int = TRANSCRIPT_SEED,
    first_dealer: int = 0,
    rules: Rules | None = None,
    decks: object = None,
    clock_ms: int | None = None,
) -> Referee:
    """A referee with the settings of the PROTOCOL.md §8 transcript unless told otherwise."""
    return Referee(
        rules=rules or make_rules(),
        names=("random", "random"),
        game_id="demo-1",
        match="demo",
        game_number=1,
        decks=decks or seeded_decks(seed, 1),  # type: ignore[arg-type]
        first_dealer=first_dealer,
        time_ms=1000,
        clock_ms=clock_ms,
    )


class Player:
    """Anything that can sit at the table: follows notices and chooses actions."""

    def notice(self, message: ToBot) -> None:
        """Take a notice."""

    def choose(self, request: Request) -> str:
        """Pick an action."""
        raise NotImplementedError


def play(ref: Referee, players: Sequence[RandomPlayer | Player]) -> list[list[bytes]]:
    """Play the game through encoded lines; return the lines each seat received."""
    streams: list[list[bytes]] = [[], []]
    while True:
        for seat, message in ref.notices():
            line = encode(message)
            streams[seat].append(line)
            players[seat].notice(decode_to_bot(line))
        pending = ref.request()
        if pending is None:
            return streams
        seat, request = pending
        line = encode(request)
        streams[seat].append(line)
        received = decode_to_bot(line)
        assert isinstance(received, Request)
        reply = encode(Action(id=request.id, action=players[seat].choose(received)))
        ref.submit(seat, decode_from_bot(reply))


def random_players(seed: int) -> list[RandomPlayer]:
    """Two seeded random players."""
    return [RandomPlayer(seed), RandomPlayer(seed + 1000)]


# --------------------------------------------------------------------------- the transcript


def test_transcript_replays_exactly() -> None:
    lines = transcript()
    hellos, game, quits = lines[:4], lines[4:-2], lines[-2:]
    for seat, (a, b) in enumerate(zip(hellos[::2], hellos[1::2], strict=True)):
        assert a == (seat, "<<", encode(Hello(options={"seed": seat + 1})))
        assert b[:2] == (seat, ">>") and isinstance(decode_from_bot(b[2]), BotHello)
    assert quits == [(0, "<<", encode(Quit())), (1, "<<", encode(Quit()))]

    ref = make_referee()
    produced: list[tuple[int, str, bytes]] = []

    def drain() -> None:
        produced.extend((s, "<<", encode(m)) for s, m in ref.notices())
        pending = ref.request()
        if pending is not None:
            produced.append((pending[0], "<<", encode(pending[1])))

    for seat, direction, line in game:
        if direction == ">>":
            drain()
            produced.append((seat, direction, line))
            ref.submit(seat, decode_from_bot(line))
    drain()
    assert produced == game
    assert ref.over and ref.end_reason == "target" and ref.winner == 0 and ref.scores == (5, 0)
    assert ref.decks == [deck_for(TRANSCRIPT_SEED, 1, d) for d in (1, 2, 3)]
    assert ref.log[:3] == [(1, "propose"), (0, "accept"), (1, "discard AS 8S TD JC")]


# --------------------------------------------------------------------------- hidden information


class DiscardEverything(Player):
    """Proposes once per deal, discards its whole hand, then plays the first legal action."""

    def choose(self, request: Request) -> str:
        view = request.view
        if view.phase == "propose":
            proposed = any(isinstance(e, Proposed) for e in view.events)
            return "stand" if proposed else "propose"
        if view.phase == "discard" and view.to_act != view.dealer:
            return " ".join(["discard", *view.hand])
        return view.legal[0]


class AcceptFirst(RandomPlayer):
    """A seeded random player that accepts every proposal of the first deal."""

    def choose(self, request: Request) -> str:
        if request.view.deal == 1 and "accept" in request.legal:
            return "accept"
        return super().choose(request)


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("seat_a", [0, 1])
def test_cards_a_seat_cannot_see_never_reach_it(seat_a: int, seed: int) -> None:
    """Swap a card of B's first hand (which B discards) with the last card of the stock.

    Nothing A may know differs between the two games, so A must receive the same bytes.
    """
    seat_b = 1 - seat_a
    original = seeded_decks(seed, 1)

    def swapped(deal: int) -> Sequence[int]:
        deck = list(original(deal))
        if deal == 1:  # B is the non-dealer: deck position 0 is in B's hand
            deck[0], deck[31] = deck[31], deck[0]
        return deck

    streams = []
    logs = []
    for decks in (original, swapped):
        players: list[RandomPlayer | Player] = [Player(), Player()]
        players[seat_a] = AcceptFirst(seed)
        players[seat_b] = DiscardEverything()
        ref = make_referee(first_dealer=seat_a, decks=decks)
        streams.append(play(ref, players))
        logs.append(ref.log)
    assert streams[0][seat_a] == streams[1][seat_a]
    assert streams[0][seat_b] != streams[1][seat_b]  # B did see the difference
    assert logs[0][2][1].startswith("discard ") and logs[0][2] != logs[1][2]
    assert logs[0][:2] + logs[0][3:] == logs[1][:2] + logs[1][3:]


@pytest.mark.parametrize("seed", range(20))
def test_random_games_keep_the_protocol_invariants(seed: int) -> None:
    rules = make_rules("cavendish") if seed % 2 else make_rules(king_deadline="opening_lead")
    ref = make_referee(seed=seed, first_dealer=seed % 2, rules=rules)
    players = random_players(seed)
    per_seat: list[list[ToBot]] = [[], []]
    for seat, stream in enumerate(play(ref, players)):
        per_seat[seat] = [decode_to_bot(line) for line in stream]
    ids: list[list[int]] = [[], []]
    for seat, messages in enumerate(per_seat):
        assert isinstance(messages[0], NewGame) and messages[0].seat == seat
        assert isinstance(messages[-1], GameEnd) and messages[-1].winner == ref.winner
        events: list[object] = []
        new_hand: list[str] | None = None
        for message in messages:
            if isinstance(message, Deal):
                events = []
            elif isinstance(message, EventNotice):
                events.append(message.event)
            elif isinstance(message, Hand):
                new_hand = message.hand
            elif isinstance(message, Request):
                ids[seat].append(message.id)
                view = message.view
                # A bot following the notices knows exactly the view's events.
                assert view.events == events and view.to_act == seat and view.legal
                if new_hand is not None:
                    assert view.hand == new_hand
                    new_hand = None
    # Each seat numbers only its own requests: 1, 2, 3, ... with no gaps.
    for seat in (0, 1):
        assert ids[seat] == list(range(1, ref.next_request_ids[seat]))
    # Public notices are identical for both seats.
    public = [[m for m in ms if isinstance(m, EventNotice)] for ms in per_seat]
    assert public[0] == public[1]
    assert ref.end_reason == "target" and max(ref.scores) >= rules.target
    assert ref.decks == [deck_for(seed, 1, d) for d in range(1, len(ref.decks) + 1)]
    assert len(ref.log) == len(ids[0]) + len(ids[1])


# --------------------------------------------------------------------------- faults

REPLIES = [
    pytest.param(
        BotHello(name="x", author="y", version="1", protocol=1),
        "invalid_message",
        'expected an "action" message answering request 1, got a "hello" message',
        id="not-an-action",
    ),
    pytest.param(
        Action(id=0, action="propose"),
        "invalid_message",
        "reply id 0 does not answer request 1 (stale or mismatched id)",
        id="stale-id",
    ),
    pytest.param(
        Action(id=2, action="propose"),
        "invalid_message",
        "reply id 2 does not answer request 1 (stale or mismatched id)",
        id="future-id",
    ),
    pytest.param(
        Action(id=1, action="Propose"),
        "illegal_action",
        "malformed action 'Propose': expected a card like 'KH', one of 'stand', 'propose', "
        "'accept', 'refuse', 'mark', 'no-mark', or 'discard' followed by cards",
        id="malformed-action",
    ),
    pytest.param(
        Action(id=1, action="accept"),
        "illegal_action",
        "illegal action 'accept' by seat 1 in phase PROPOSE; legal: stand, propose",
        id="wrong-phase",
    ),
    pytest.param(
        Action(id=1, action="discard 10H"),
        "illegal_action",
        "malformed action 'discard 10H': invalid card '10H': expected rank then suit, like "
        "'KH' or 'TS' (the ten is written T: 'TH')",
        id="ten-as-10",
    ),
]


@pytest.mark.parametrize(("reply", "reason", "detail"), REPLIES)
def test_bad_reply_is_a_precise_fault_and_changes_nothing(
    reply: FromBot, reason: str, detail: str
) -> None:
    ref = make_referee()
    ref.notices()
    before = ref.request()
    assert before is not None and before[0] == 1 and before[1].id == 1
    with pytest.raises(BotFault) as info:
        ref.submit(1, reply)
    assert (info.value.reason, info.value.detail) == (reason, detail)
    assert ref.request() == before and ref.log == [] and ref.notices() == []


def test_illegal_card_names_the_rule() -> None:
    ref = make_referee()
    for seat, action in [(1, "propose"), (0, "refuse")]:
        ref.submit(seat, Action(id=ref.next_request_ids[seat] - 1, action=action))
    pending = ref.request()
    assert pending is not None
    seat, request = pending
    assert "KD" not in request.view.hand
    with pytest.raises(BotFault) as info:
        ref.submit(seat, Action(id=request.id, action="KD"))
    assert info.value.reason == "illegal_action"
    assert "KD is not in the hand" in info.value.detail


def test_submit_for_a_seat_not_asked_is_a_runner_bug() -> None:
    ref = make_referee()
    with pytest.raises(RuntimeError):
        ref.submit(0, Action(id=1, action="accept"))


def test_forfeit_tells_the_offender_then_ends_the_game() -> None:
    ref = make_referee()
    ref.notices()
    ref.forfeit(1, FaultReason.TIMEOUT, "no reply to request 1 within 1000 ms")
    assert ref.notices() == [
        (
            1,
            Forfeit(
                game="demo-1",
                reason=FaultReason.TIMEOUT,
                detail="no reply to request 1 within 1000 ms",
            ),
        ),
        (0, GameEnd(game="demo-1", winner=0, reason="forfeit", scores=[1, 0])),
    ]
    assert ref.request() is None and ref.over and ref.winner == 0
    assert ref.fault == (1, "timeout", "no reply to request 1 within 1000 ms")
    ref.forfeit(0, FaultReason.TIMEOUT, "ignored: the game is over")
    ref.abort()
    assert ref.notices() == [] and ref.end_reason == "forfeit"


def test_abort_has_no_winner() -> None:
    ref = make_referee()
    ref.notices()
    ref.abort()
    end = GameEnd(game="demo-1", winner=None, reason="aborted", scores=[1, 0])
    assert ref.notices() == [(0, end), (1, end)] and ref.request() is None


def test_game_clock_is_charged_and_reported() -> None:
    ref = make_referee(clock_ms=5000)
    new_games = [m for _, m in ref.notices() if isinstance(m, NewGame)]
    assert [g.clock_ms for g in new_games] == [5000, 5000]
    pending = ref.request()
    assert pending is not None and pending[1].clock_ms == 5000
    ref.submit(1, Action(id=1, action="propose"), elapsed_ms=1200)
    ref.notices()
    pending = ref.request()
    assert pending is not None and pending[0] == 0 and pending[1].clock_ms == 5000
    ref.submit(0, Action(id=1, action="accept"), elapsed_ms=10)
    pending = ref.request()
    assert pending is not None and pending[1].clock_ms == 3800
    assert ref.clocks == [4990, 3800]
    no_clock = make_referee().request()
    assert no_clock is not None and no_clock[1].clock_ms is None


def test_request_ids_continue_across_games() -> None:
    ref = Referee(
        rules=make_rules(),
        names=("a", "b"),
        game_id="g2",
        decks=seeded_decks(1, 2),
        first_dealer=1,
        time_ms=100,
        first_request_ids=(41, 7),
    )
    pending = ref.request()
    assert pending is not None and pending[0] == 0 and pending[1].id == 41
    assert ref.next_request_ids == (42, 7)


@pytest.mark.parametrize(
    ("seconds", "charged"),
    [(0.0, 0), (0.0000004, 0), (0.0003, 1), (0.001, 1), (0.0010004, 1), (0.0012, 2), (1.5, 1500)],
)
def test_clock_charge_is_rounded_up_to_the_millisecond(seconds: float, charged: int) -> None:
    """PROTOCOL.md §5.2: measured to the microsecond, charged rounded up."""
    assert charged_ms(seconds) == charged
