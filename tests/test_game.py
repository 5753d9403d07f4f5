"""Tests of arbiter.game: whole games between real bot processes, well and badly behaved.

Each misbehaving bot of ``tests/bots/proto_*.py`` speaks the protocol until its
misbehaviour, and plays a two-game match against the bundled random engine, seats
alternating.  Every game must be recorded with exactly the expected fault, charged to
the misbehaving bot (never to the random engine); the misbehaving bot is restarted
for the second game, and when the match is over no process of either bot is left.
"""

from __future__ import annotations

import itertools
import os
import re
import signal
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import pytest
import trio

from arbiter.bot import Bot, BotCommand, Limits
from arbiter.cards import CARDS, Card
from arbiter.config import EngineConfig, FaultPolicy, TimeControl, TournamentConfig
from arbiter.game import FaultPolicyName, GameSpec, TimeSettings, play_game
from arbiter.record import GameRecord, rereferee
from arbiter.report import result_of
from arbiter.rules import deck_for, make_rules, seed_sha256
from arbiter.session import QUIT_GRACE, TERM_GRACE, BotSession
from arbiter.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[1]
BOTS = Path(__file__).parent / "bots"
RANDOM_ARGV = [sys.executable, "-m", "engines.random.bot"]
TAG_VAR = "ECARTE_TEST_GAME_TAG"
"""Set in every bot's environment (and inherited by its children) to find them in /proc."""
RULES = make_rules()
SEED = 11
TIME = TimeSettings(per_move_ms=300, grace_ms=200)
"""Short decisions, so timeouts are quick; ample for the random engine (about 1 ms)."""
STOP_GRACE_S = 0.1
"""Exit and SIGTERM grace of a misbehaving bot: the defaults (2 s and 1 s) only add waiting."""


# -- processes ----------------------------------------------------------------------------


def _stat_fields(pid: str | int) -> list[bytes] | None:
    """The fields of /proc/PID/stat after "(comm)", or None if the process is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return None
    return stat[stat.rfind(b")") + 2 :].split()


def _live(fields: list[bytes] | None) -> bool:
    return fields is not None and fields[0] not in (b"Z", b"X")


def live_members(pgid: int) -> list[int]:
    """Non-zombie processes of group ``pgid`` (PID 1 may not reap zombies)."""
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat_fields(entry)
            if _live(fields) and fields is not None and int(fields[2]) == pgid:
                members.append(int(entry))
    return members


def tagged_processes(tag: str) -> list[int]:
    """Live processes whose environment holds ``TAG_VAR=tag`` (a bot or its children)."""
    needle = f"{TAG_VAR}={tag}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and _live(_stat_fields(entry)):
            found.append(int(entry))
    return found


def is_alive(pid: int) -> bool:
    return _live(_stat_fields(pid))


class TrackedSession(BotSession):
    """A session that keeps every process it started, for the checks after the match."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.started: list[Bot] = []
        """Every process started, in order (one per start, handshake failed or not)."""

    async def _handshake(self, bot: Bot) -> None:
        self.started.append(bot)
        await super()._handshake(bot)


def assert_all_gone(sessions: list[TrackedSession], tag: str) -> None:
    """No process of these sessions, nor any child of theirs, is left alive."""
    for session in sessions:
        assert not session.alive
        for bot in session.started:
            assert bot.returncode is not None, f"{session.name} pid {bot.pid} was not reaped"
            assert live_members(bot.pgid) == [], f"{session.name} group {bot.pgid} survived"
    assert tagged_processes(tag) == []


# -- matches ------------------------------------------------------------------------------


def proto_command(script: str, tag: str) -> BotCommand:
    return BotCommand([sys.executable, str(BOTS / f"{script}.py")], env={TAG_VAR: tag})


def random_command(tag: str) -> BotCommand:
    return BotCommand(RANDOM_ARGV, cwd=str(ROOT), env={TAG_VAR: tag})


def game_spec(
    game_id: int,
    engines: tuple[str, str],
    *,
    target: int = 5,
    time: TimeSettings = TIME,
    fault_policy: FaultPolicyName = "forfeit_game",
    own_deals: bool = False,
) -> GameSpec:
    """Game ``game_id`` of a match played in duplicate pairs (games 1 and 2 share decks).

    ``own_deals`` gives the game a deal set of its own: the arbiter restarts a bot before
    it would see the same deals twice, and tests that count restarts due to faults must
    not mix those in.
    """
    return GameSpec(
        game_id=game_id,
        engines=engines,
        rules=make_rules(target=target),
        seed=SEED,
        deal_set=game_id + 100 if own_deals else (game_id + 1) // 2,
        first_dealer=game_id % 2,
        pair_id=f"p{(game_id + 1) // 2}",
        match=f"{engines[0]}~{engines[1]}",
        time=time,
        fault_policy=fault_policy,
    )


@dataclass
class Match:
    records: list[GameRecord]
    bad: TrackedSession
    other: TrackedSession
    """The opponent: the random engine unless told otherwise."""
    log: Path
    """The misbehaving bot's stderr log."""
    other_log: Path

    def bad_seat(self, record: GameRecord) -> int:
        return record.engines.index(self.bad.name)


async def play_match(
    script: str,
    tmp_path: Path,
    *,
    tag: str,
    games: int = 2,
    limits: Limits | None = None,
    handshake_ms: int = 10_000,
    time: TimeSettings = TIME,
    fault_policy: FaultPolicyName = "forfeit_game",
    opponent: str | None = None,
) -> Match:
    """``games`` games of ``script`` against the random engine (or the bot script
    ``opponent``), seats alternating."""
    records: list[GameRecord] = []
    log = tmp_path / f"{script}.stderr.log"
    other_log = tmp_path / "opponent.stderr.log"
    async with trio.open_nursery() as nursery:
        bad = TrackedSession(
            script,
            proto_command(script, tag),
            nursery,
            log_path=log,
            limits=limits,
            handshake_ms=handshake_ms,
            grace_s=STOP_GRACE_S,
            term_grace_s=STOP_GRACE_S,
        )
        command = random_command(tag) if opponent is None else proto_command(opponent, tag)
        other = TrackedSession(opponent or "random", command, nursery, log_path=other_log)
        try:
            for game_id in range(1, games + 1):
                seats = (bad, other) if game_id % 2 else (other, bad)
                spec = game_spec(
                    game_id,
                    (seats[0].name, seats[1].name),
                    time=time,
                    fault_policy=fault_policy,
                    own_deals=True,
                )
                records.append(await play_game(spec, seats))
        finally:
            with trio.CancelScope(shield=True):
                await bad.stop()
                await other.stop()
    return Match(records, bad, other, log, other_log)


# -- misbehaving bots ---------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    script: str
    """The bot, ``tests/bots/<script>.py``."""
    reason: str
    """The fault reason expected in every game, or "normal"."""
    detail: str = ""
    """A regular expression the termination detail must match."""
    line: str | None = None
    """A regular expression the offending line kept in the record must match."""
    limits: Limits | None = None
    handshake_ms: int = 10_000
    per_move_ms: int = TIME.per_move_ms
    killed: bool = False
    """The bot survives SIGTERM: only SIGKILL ends it."""
    played: bool = True
    """The games get past the handshake (some actions are recorded)."""


SLACK_MS = 5000
"""Time per move for bots that fault by exiting or closing a pipe: the game ends on the
end of file at once, and a loaded machine still has the time to start the bot."""

CASES = [
    pytest.param(
        Case("proto_crash_first_turn", "disconnected", r"exited with code 1", per_move_ms=SLACK_MS),
        id="crash-first-turn",
    ),
    pytest.param(
        Case(
            "proto_no_hello",
            "no_handshake",
            r"no hello within 500 ms",
            handshake_ms=500,
            played=False,
        ),
        id="no-handshake",
    ),
    pytest.param(
        Case("proto_sleep_on_request", "timeout", r"no reply within 0\.5"),
        id="sleep-on-request",
    ),
    pytest.param(
        Case("proto_illegal_card", "illegal_action", r"illegal action '\w\w' .* phase TRICK"),
        id="illegal-card",
    ),
    pytest.param(
        Case("proto_garbage", "invalid_message", r"malformed JSON", line=r"^I play the king"),
        id="garbage",
    ),
    pytest.param(
        Case(
            "proto_deep_nesting",
            "invalid_message",
            r"^JSON nested deeper than 16 levels",
            line=r'^\{"type":"action","id":\d+,"action":\[\[\[',
        ),
        id="deep-nesting",
    ),
    pytest.param(
        Case("proto_duplicate_key", "invalid_message", r'^duplicate key "id" in "action" message'),
        id="duplicate-key",
    ),
    pytest.param(
        Case(
            "proto_control_name",
            "invalid_message",
            r"^handshake: invalid value at \$\.name .* control character U\+001B",
            played=False,
        ),
        id="control-character-in-name",
    ),
    pytest.param(
        Case(
            "proto_big_line",
            "invalid_message",
            r"line longer than 65536 bytes",
            line=r'^\{"type": "action", .* {100}$',
        ),
        id="10MB-line",
    ),
    pytest.param(Case("proto_stderr_flood", "normal"), id="stderr-flood-100MB"),
    # PROTOCOL.md §3.1: a bot may send its hello before reading the arbiter's.
    pytest.param(Case("proto_hello_first", "normal"), id="hello-before-the-arbiters"),
    pytest.param(
        Case("proto_ignore_term", "timeout", r"no reply within 0\.5", killed=True),
        id="ignore-sigterm",
    ),
    pytest.param(
        Case("proto_grandchild_exit", "disconnected", r"exited with code 0", per_move_ms=SLACK_MS),
        id="grandchild-holds-stdout",
    ),
    pytest.param(
        Case("proto_stale_id", "invalid_message", r"reply id \d+ does not answer request"),
        id="stale-id",
    ),
    pytest.param(
        Case(
            "proto_close_stdout",
            "disconnected",
            r"closed its stdout while still running",
            per_move_ms=SLACK_MS,
        ),
        id="close-stdout",
    ),
    pytest.param(
        Case(
            "proto_close_stdin",
            "disconnected",
            r"closed its stdin while still running",
            per_move_ms=SLACK_MS,
        ),
        id="close-stdin",
    ),
    pytest.param(
        Case("proto_unrequested", "invalid_message", r"unrequested line", line=r"^debug: played"),
        id="unrequested-line",
    ),
    pytest.param(
        Case("proto_exit_mid_deal", "disconnected", r"exited with code 0", per_move_ms=SLACK_MS),
        id="exit-mid-deal",
    ),
    pytest.param(
        Case(
            "proto_memory_hog",
            "resource_limit",
            r"memory limit of 128 MB exceeded",
            limits=Limits(memory_mb=128),
            per_move_ms=3000,  # filling 128 MB takes the kernel a few tenths of a second
        ),
        id="memory-hog",
    ),
]


@pytest.mark.parametrize("case", CASES)
async def test_misbehaving_bot(case: Case, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    match = await play_match(
        case.script,
        tmp_path,
        tag=tag,
        limits=case.limits,
        handshake_ms=case.handshake_ms,
        time=TimeSettings(per_move_ms=case.per_move_ms, grace_ms=TIME.grace_ms),
    )
    assert len(match.records) == 2
    for game_id, record in enumerate(match.records, start=1):
        bad = match.bad_seat(record)
        assert record.game_id == game_id
        assert bad == (game_id + 1) % 2  # seats alternate
        term = record.termination
        assert term.reason == case.reason, term
        if case.reason == "normal":
            assert term.offender is None
            assert rereferee(record).is_over()
        else:
            assert term.offender == bad  # never the random engine
            assert record.winner == 1 - bad
            assert re.search(case.detail, term.detail), term.detail
            if case.line is not None:
                assert term.line is not None and re.search(case.line, term.line), term.line
            assert bool(record.deals) == case.played
            rereferee(record)  # the game as far as it went is consistent
        assert not record.corrupted
    # A bot that faulted is started afresh for the next game; the others are kept.
    faults = 0 if case.reason == "normal" else len(match.records)
    assert len(match.bad.started) == max(1, faults)
    assert len({bot.pid for bot in match.bad.started}) == len(match.bad.started)
    assert len(match.other.started) == 1
    if case.killed:
        assert [bot.returncode for bot in match.bad.started] == [-signal.SIGKILL] * 2
    assert_all_gone([match.bad, match.other], tag)
    log = match.log.read_bytes()
    grandchildren = [int(pid) for pid in re.findall(rb"grandchild (\d+)", log)]
    if case.script == "proto_grandchild_exit":
        assert len(grandchildren) == 2
    assert not any(is_alive(pid) for pid in grandchildren)
    if case.script == "proto_stderr_flood":  # drained: logged up to the cap, the rest dropped
        assert re.match(rb"\[(game \d+ )?pid \d+\] e{1000}", log)
        assert log.endswith(b" bytes dropped after the cap of 1000000 bytes]\n")
        assert len(log) < 1_100_000


@pytest.mark.parametrize(
    "script",
    [
        pytest.param("proto_crash_first_turn", id="fault-in-a-request"),
        pytest.param("proto_close_stdin", id="fault-in-a-notice"),
    ],
)
async def test_other_bot_is_told_game_end(script: str, tmp_path: Path) -> None:
    """PROTOCOL.md §3, §6: a game ended by a fault ends with game_end to the other bot."""
    match = await play_match(script, tmp_path, tag=uuid.uuid4().hex, opponent="proto_recorder")
    assert [r.termination.reason for r in match.records] == ["disconnected"] * 2
    got = re.findall(r"got (\w+)", match.other_log.read_text())
    assert got[0] == "hello" and got[-1] == "quit"
    games = " ".join(got[1:-1]).split("new_game")[1:]
    assert len(games) == 2
    for game in games:
        assert game.split()[-1] == "game_end", game


async def test_under_a_clock_the_clock_governs_and_each_reply_costs_a_millisecond(
    tmp_path: Path,
) -> None:
    """PROTOCOL.md §5.2: under a clock the deadline is clock_ms (per_move_ms and time_ms
    limit nothing), replies are charged rounded up to the millisecond, then the increment
    is added.  The bot sleeps 350 ms on its third request: beyond time_ms (200) plus grace
    (100), within the clock that increments have raised above it."""
    time = TimeSettings(per_move_ms=50, clock_ms=200, increment_ms=300, grace_ms=100)
    match = await play_match(
        "proto_clock_sleeper", tmp_path, tag=uuid.uuid4().hex, games=1, time=time
    )
    assert match.records[0].termination.reason == "normal"
    seen = [tuple(map(int, m)) for m in re.findall(r"clock (\d+) (\d+)", match.log.read_text())]
    assert len(seen) >= 3 and all(time_ms == 200 for time_ms, _ in seen)
    # The stderr log names the game and the process of every line.
    pid = match.bad.started[0].pid
    for line in match.log.read_text().splitlines():
        assert line.startswith(f"[game 1 pid {pid}] clock "), line
    clocks = [clock for _, clock in seen]
    assert clocks[0] == 200 and clocks[2] > 300
    for before, after in itertools.pairwise(clocks):
        assert after <= before - 1 + 300  # at least 1 ms charged for the fastest reply
    assert clocks[3] <= clocks[2] - 350 + 300


async def test_opponent_sees_the_hello_name_and_records_keep_both(tmp_path: Path) -> None:
    """PROTOCOL.md §3.1/§3.3: new_game.opponent is the opponent's hello name; records
    name engines by their configured name and keep the hello name next to it."""
    match = await play_match(
        "proto_hello_first", tmp_path, tag=uuid.uuid4().hex, games=1, opponent="proto_recorder"
    )
    (record,) = match.records
    assert record.engines == ["proto_hello_first", "proto_recorder"]
    assert [info.bot_name for info in record.info] == ["eager", "recorder"]
    assert re.findall(r"got new_game (\w+)", match.other_log.read_text()) == ["eager"]


# -- games between random bots ------------------------------------------------------------


def actions_of(record: GameRecord) -> list[tuple[int, str]]:
    return [(a.seat, a.action) for deal in record.deals for a in deal.actions]


def check_normal_record(record: GameRecord) -> None:
    """A normally ended game replays under the rules to what it says."""
    assert record.termination.reason == "normal"
    assert record.termination.offender is None
    assert not record.corrupted
    state = rereferee(record)
    assert state.is_over()
    assert state.scores == record.scores
    assert state.winner == record.winner


@pytest.mark.parametrize(
    ("game_id", "king_ending"),
    [
        pytest.param(3, False, id="last-deal-played-out"),
        pytest.param(12, True, id="game-ends-on-a-turned-up-king"),
    ],
)
async def test_random_game_record(game_id: int, king_ending: bool, tmp_path: Path) -> None:
    """Two random engines; the game is fixed by the seeds, so ``king_ending`` is known:
    game 12 ends when the dealer of a new deal turns up a king (a deal with no decision,
    announced in the same batch of notices as the end of the deal before)."""
    tag = uuid.uuid4().hex
    async with trio.open_nursery() as nursery:
        sessions = (
            TrackedSession("alice", random_command(tag), nursery, options={"seed": 1}),
            TrackedSession("bob", random_command(tag), nursery, options={"seed": 2}),
        )
        spec = game_spec(game_id, ("alice", "bob"), time=TimeSettings(per_move_ms=1000))
        try:
            record = await play_game(spec, sessions)
        finally:
            with trio.CancelScope(shield=True):
                for s in sessions:
                    await s.stop()
    check_normal_record(record)
    assert record.engines == ["alice", "bob"]
    pair = (game_id + 1) // 2
    assert (record.game_id, record.seed_sha256, record.deal_set) == (
        game_id,
        seed_sha256(SEED),
        pair,
    )
    assert (record.pair_id, record.first_dealer) == (f"p{pair}", game_id % 2)
    assert record.rules == spec.rules
    assert record.winner in (0, 1)
    assert record.scores[record.winner] >= spec.rules.target > record.scores[1 - record.winner]
    assert [(i.name, i.bot_name, i.version) for i in record.info] == [
        ("alice", "random", "1.0"),
        ("bob", "random", "1.0"),
    ]
    assert len(record.deals) >= 2
    for number, deal in enumerate(record.deals, start=1):
        assert deal.number == number
        assert deal.dealer == (record.first_dealer + number - 1) % 2  # dealers alternate
        assert len(deal.deck) == 32
        assert {str(Card.parse(c)) for c in deal.deck} == {str(c) for c in CARDS}
        assert deal.deck == [str(CARDS[c]) for c in deck_for(SEED, record.deal_set, number)]
        last = number == len(record.deals)
        assert bool(deal.actions) != (last and king_ending), "pick another game id"
        if last and king_ending:
            assert deal.points[deal.dealer] == 1 and deal.tricks == [0, 0]
        for action in deal.actions:
            assert action.seat in (0, 1)
            assert isinstance(action.ms, float)
            assert 0 <= action.ms < 1000 + spec.time.grace_ms
            assert not action.substituted
        assert len(deal.tricks) == len(deal.points) == 2
    assert sum(sum(d.points) for d in record.deals) == sum(record.scores)
    # The record survives its JSON form (a line of games.jsonl).
    again = msgspec.json.decode(msgspec.json.encode(record), type=GameRecord)
    assert again == record
    assert_all_gone(list(sessions), tag)


async def test_fault_does_not_disturb_concurrent_game(tmp_path: Path) -> None:
    """Game A (a bot crashing on its first turn) and games B (random against random) run
    at once in one nursery; B keeps playing until A's two games are over.  B's games end
    normally, their bots are never restarted, and each game is exactly the one played
    alone afterwards."""
    tag = uuid.uuid4().hex
    a_records: list[GameRecord] = []
    b_records: list[GameRecord] = []
    async with trio.open_nursery() as nursery:
        crash = TrackedSession("crash", proto_command("proto_crash_first_turn", tag), nursery)
        rand_a = TrackedSession("random-a", random_command(tag), nursery)
        b0 = TrackedSession("random-b0", random_command(tag), nursery)
        b1 = TrackedSession("random-b1", random_command(tag), nursery)
        a_done = trio.Event()

        async def games_a() -> None:
            for game_id in (1, 2):
                seats = (crash, rand_a) if game_id % 2 else (rand_a, crash)
                spec = game_spec(game_id, (seats[0].name, seats[1].name), own_deals=True)
                a_records.append(await play_game(spec, seats))
            a_done.set()

        async def games_b() -> None:
            while not a_done.is_set() or len(b_records) < 2:
                spec = game_spec(
                    len(b_records) + 1, ("random-b0", "random-b1"), target=11, own_deals=True
                )
                b_records.append(await play_game(spec, (b0, b1)))

        try:
            async with trio.open_nursery() as games:
                games.start_soon(games_a)
                games.start_soon(games_b)
        finally:
            with trio.CancelScope(shield=True):
                for s in (crash, rand_a, b0, b1):
                    await s.stop()
    assert [r.termination.reason for r in a_records] == ["disconnected"] * 2
    assert [r.termination.offender for r in a_records] == [0, 1]
    assert len(crash.started) == 2
    for record in b_records:
        check_normal_record(record)
    assert len(b0.started) == len(b1.started) == len(rand_a.started) == 1
    assert_all_gone([crash, rand_a, b0, b1], tag)

    # The same games played alone, afterwards: identical.
    async with trio.open_nursery() as nursery:
        alone = (
            TrackedSession("random-b0", random_command(tag), nursery),
            TrackedSession("random-b1", random_command(tag), nursery),
        )
        try:
            for record in b_records:
                spec = game_spec(
                    record.game_id, ("random-b0", "random-b1"), target=11, own_deals=True
                )
                replay = await play_game(spec, alone)
                assert actions_of(replay) == actions_of(record)
                assert (replay.scores, replay.winner) == (record.scores, record.winner)
        finally:
            with trio.CancelScope(shield=True):
                for s in alone:
                    await s.stop()


# -- fault policy -------------------------------------------------------------------------


def substituted_runs(record: GameRecord, seat: int) -> Iterator[bool]:
    for deal in record.deals:
        for action in deal.actions:
            if action.seat == seat:
                yield action.substituted


async def test_random_substitute_policy(tmp_path: Path) -> None:
    tag = uuid.uuid4().hex
    match = await play_match(
        "proto_illegal_card", tmp_path, tag=tag, fault_policy="random_substitute"
    )
    for record in match.records:
        bad = match.bad_seat(record)
        assert record.corrupted
        assert record.termination.reason == "illegal_action"
        assert record.termination.offender == bad
        # The game went on to the target: substitutes replay as legal actions.
        state = rereferee(record)
        assert state.is_over()
        assert state.scores == record.scores
        assert max(record.scores) >= RULES.target
        # Whatever the played-out score, the offender loses.
        assert record.winner == 1 - bad
        # The offender played until its fault, the arbiter played for it afterwards.
        flags = list(substituted_runs(record, bad))
        first = flags.index(True)
        assert flags[first:] == [True] * (len(flags) - first)
        assert not any(substituted_runs(record, 1 - bad))
        for deal in record.deals:
            assert all(a.ms == 0.0 for a in deal.actions if a.substituted)
    # The offender is stopped after each corrupted game and restarted for the next.
    assert len(match.bad.started) == 2
    assert len(match.other.started) == 1
    assert_all_gone([match.bad, match.other], tag)


# -- through the tournament runner ----------------------------------------------------------


async def test_tournament_restarts_then_withdraws_a_faulting_bot(tmp_path: Path) -> None:
    """run_tournament: the crashing bot is restarted after its first fault, withdrawn after
    its second in a row; its remaining games are forfeits, not played."""
    tag = uuid.uuid4().hex
    script = str(BOTS / "proto_crash_first_turn.py")
    config = TournamentConfig(
        engines=[
            EngineConfig(name="crash", command=[sys.executable, script], env={TAG_VAR: tag}),
            EngineConfig(name="random", env={TAG_VAR: tag}),
        ],
        games_per_pairing=4,
        time_control=TimeControl(per_move_ms=TIME.per_move_ms, grace_ms=TIME.grace_ms),
        faults=FaultPolicy(withdraw_after=2),
        seed=SEED,
    )
    results = await run_tournament(
        config, base_dir=tmp_path, out_dir=tmp_path / "out", concurrency=1
    )
    reasons = [(r.reason, r.engines[r.offender or 0]) for r in results]
    assert reasons == [("disconnected", "crash")] * 2 + [("withdrawn", "crash")] * 2
    journal = (tmp_path / "out" / "games.jsonl").read_bytes().splitlines()
    records = [msgspec.json.decode(line, type=GameRecord) for line in journal]
    assert [r.game_id for r in records] == [r.game_id for r in results]
    assert all(r.deals for r in records[:2]) and not any(r.deals for r in records[2:])
    assert tagged_processes(tag) == []


async def test_tournament_records_the_games_of_a_deeply_nesting_bot(tmp_path: Path) -> None:
    """A line nested 1,000 deep is the bot's invalid_message, not an arbiter error: every
    game is recorded in the journal and won by the opponent (so a resume replays none)."""
    tag = uuid.uuid4().hex
    script = str(BOTS / "proto_deep_nesting.py")
    config = TournamentConfig(
        engines=[
            EngineConfig(name="deep", command=[sys.executable, script], env={TAG_VAR: tag}),
            EngineConfig(name="random", env={TAG_VAR: tag}),
        ],
        games_per_pairing=2,
        time_control=TimeControl(per_move_ms=TIME.per_move_ms, grace_ms=TIME.grace_ms),
        seed=SEED,
    )
    results = await run_tournament(
        config, base_dir=tmp_path, out_dir=tmp_path / "out", concurrency=1
    )
    journal = (tmp_path / "out" / "games.jsonl").read_bytes().splitlines()
    records = [msgspec.json.decode(line, type=GameRecord) for line in journal]
    assert [result_of(r) for r in records] == results
    assert len(records) == 2
    for r in records:
        assert r.termination.reason == "invalid_message"
        assert r.termination.offender is not None
        assert r.engines[r.termination.offender] == "deep"
        assert r.winner is not None and r.engines[r.winner] == "random"
    assert tagged_processes(tag) == []


async def test_missing_executable_forfeits_the_game_without_crashing(tmp_path: Path) -> None:
    """A bot that cannot start loses its game as failed_to_start; the arbiter carries on."""
    async with trio.open_nursery() as nursery:
        missing = BotSession("missing", BotCommand([str(tmp_path / "no-such-bot")]), nursery)
        rnd = BotSession(
            "random", BotCommand([sys.executable, "-m", "engines.random.bot"]), nursery
        )
        rec = await play_game(
            GameSpec(0, ("missing", "random"), make_rules(), 1, 0, 0), (missing, rnd)
        )
        await rnd.stop()
    assert rec.termination.reason == "failed_to_start" and rec.termination.offender == 0
    assert rec.winner == 1 and rec.deals == []


async def test_arbiter_error_aborts_the_game_and_blames_nobody(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PROTOCOL.md §6.1: an arbiter bug aborts the game; no fault is recorded for a bot."""
    from arbiter.faults import ArbiterError
    from arbiter.referee import Referee

    calls = {"n": 0}
    real_submit = Referee.submit

    def flaky_submit(self: Referee, seat: int, message: Any, elapsed_ms: int = 0) -> None:
        calls["n"] += 1
        if calls["n"] == 5:
            raise RuntimeError("boom")
        real_submit(self, seat, message, elapsed_ms)

    monkeypatch.setattr(Referee, "submit", flaky_submit)
    async with trio.open_nursery() as nursery:
        cmd = BotCommand([sys.executable, "-m", "engines.random.bot"])
        a, b = BotSession("a", cmd, nursery), BotSession("b", cmd, nursery)
        with pytest.raises(ArbiterError, match="game 0 aborted by an arbiter error"):
            await play_game(GameSpec(0, ("a", "b"), make_rules(), 1, 0, 0), (a, b))
        assert a.bot is None and b.bot is None, "both bots were stopped"


async def test_session_stop_graces_default_to_the_protocol() -> None:
    """PROTOCOL.md §3.9.2: 2 s to exit after quit, then 1 s between SIGTERM and SIGKILL."""
    async with trio.open_nursery() as nursery:
        session = BotSession("random", random_command("unused"), nursery)
    assert (session.grace_s, session.term_grace_s) == (QUIT_GRACE, TERM_GRACE) == (2.0, 1.0)
