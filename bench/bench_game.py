"""Games per second and arbiter CPU per decision of ``play_game``, with instant bots.

Both seats run a minimal instant bot (inline below: ``json`` and ``sys`` only, no
rules engine) that answers every request with its first legal action, so nearly all
the time measured is the arbiter's: the referee, encoding, decoding, deadlines and
the pipes.  Arbiter CPU is this process's CPU time (``getrusage(RUSAGE_SELF)``,
user + system; the bots are other processes) divided by the decisions played.

Next to it, a floor measured in the same run: a bare trio ping-pong with the same
two children over exactly the same lines (every notice and request of the same
games, computed beforehand by the pure referee, sent raw; each reply read up to its
newline, not decoded).  The ratio compares messages per second (lines to the bots
plus replies); the target is at least 0.5.  Process start-up and handshakes are
outside the timings.  Prints figures only.  Run from the repository root:

    PYTHONPATH=. python bench/bench_game.py [games]
"""

from __future__ import annotations

import resource
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import partial

import trio

from arbiter.bot import BotCommand
from arbiter.game import GameSpec, TimeSettings, play_game
from arbiter.record import GameRecord
from arbiter.referee import Referee, seeded_decks
from arbiter.rules import Rules, make_rules
from arbiter.session import BotSession
from protocol.messages import Action, Hello, Quit, encode

INSTANT_BOT = r"""
import json, sys
out = sys.stdout
for line in sys.stdin:
    if line.startswith('{"type":"request"'):
        m = json.loads(line)
        a = json.dumps(m["view"]["legal"][0])
        out.write('{"type":"action","id":%d,"action":%s}\n' % (m["id"], a))
        out.flush()
    elif line.startswith('{"type":"hello"'):
        out.write('{"type":"hello","name":"instant","author":"bench","version":"1","protocol":1}\n')
        out.flush()
    elif line.startswith('{"type":"quit"'):
        break
"""
ARGV = [sys.executable, "-c", INSTANT_BOT]
BOT_NAME = "instant"
SEED = 7
TIME = TimeSettings(per_move_ms=1000)
RUNS = 5
"""Alternating runs of each kind; the fastest of each is reported."""


def cpu_seconds() -> float:
    """CPU time of this process so far (user + system), children excluded."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


@dataclass
class Run:
    seconds: float
    """Wall time."""
    cpu: float
    """CPU time of this process."""


def specs(games: int, rules: Rules) -> list[GameSpec]:
    # Every game has deals of its own: the bots then play the whole run in one process,
    # and the figure is the arbiter's per-message cost.  (In a tournament a bot is also
    # restarted before it would see the same deals again: one process start per game.)
    return [
        GameSpec(
            game_id=g,
            engines=("a", "b"),
            rules=rules,
            seed=SEED,
            deal_set=g,
            first_dealer=g % 2,
            pair_id=None,
            match="a~b",
            time=TIME,
        )
        for g in range(1, games + 1)
    ]


def traffic(games: list[GameSpec]) -> tuple[list[tuple[int, bytes, bool]], list[list[str]]]:
    """Every line ``play_game`` sends in these games with instant bots, in order, as
    ``(seat, line, expects a reply)``; and each game's actions (to check the match)."""
    script: list[tuple[int, bytes, bool]] = []
    logs: list[list[str]] = []
    next_ids = (1, 1)
    for spec in games:
        tm = spec.time
        ref = Referee(
            rules=spec.rules,
            names=(BOT_NAME, BOT_NAME),
            game_id=str(spec.game_id),
            decks=seeded_decks(spec.seed, spec.deal_set),
            first_dealer=spec.first_dealer,
            time_ms=tm.per_move_ms,
            clock_ms=tm.clock_ms,
            match=spec.match,
            game_number=spec.deal_set,
            pair=spec.deal_set if spec.pair_id is not None else None,
            first_request_ids=next_ids,
        )
        while True:
            script += [(seat, encode(msg), False) for seat, msg in ref.notices()]
            pending = ref.request()
            if pending is None:
                break
            seat, req = pending
            script.append((seat, encode(req), True))
            ref.submit(seat, Action(id=req.id, action=req.legal[0]))
        next_ids = ref.next_request_ids
        logs.append([action for _, action in ref.log])
    return script, logs


async def arbiter_run(games: list[GameSpec], expected: list[list[str]]) -> Run:
    """The games through ``play_game``, bots started and greeted beforehand."""
    async with trio.open_nursery() as nursery:
        sessions = (
            BotSession("a", BotCommand(ARGV), nursery),
            BotSession("b", BotCommand(ARGV), nursery),
        )
        for s in sessions:
            await s.ensure_started()
        records: list[GameRecord] = []
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        for spec in games:
            records.append(await play_game(spec, sessions))
        seconds, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        for s in sessions:
            await s.stop()
    actions = [[a.action for d in r.deals for a in d.actions] for r in records]
    assert all(r.termination.reason == "normal" for r in records)
    assert actions == expected, "the arbiter's games differ from the floor's"
    return Run(seconds, cpu)


async def floor_run(script: list[tuple[int, bytes, bool]]) -> Run:
    """The same lines over raw trio pipes to the same children."""
    async with trio.open_nursery() as nursery:
        procs: list[trio.Process] = []
        for _ in range(2):
            start = partial(
                trio.run_process,
                ARGV,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                check=False,
                start_new_session=True,
            )
            procs.append(await nursery.start(start))
        stdins = [p.stdin for p in procs]
        stdouts = [p.stdout for p in procs]
        assert all(s is not None for s in stdins) and all(s is not None for s in stdouts)

        async def exchange(seat: int, line: bytes) -> None:
            stdin, stdout = stdins[seat], stdouts[seat]
            assert stdin is not None and stdout is not None
            await stdin.send_all(line)
            data = await stdout.receive_some(65536)
            while not data.endswith(b"\n"):
                data += await stdout.receive_some(65536)

        hello = encode(Hello())
        for seat in (0, 1):
            await exchange(seat, hello)
        cpu0, t0 = cpu_seconds(), time.perf_counter()
        for seat, line, reply in script:
            if reply:
                await exchange(seat, line)
            else:
                stdin = stdins[seat]
                assert stdin is not None
                await stdin.send_all(line)
        seconds, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
        for stdin in stdins:
            assert stdin is not None
            await stdin.send_all(encode(Quit()))
            await stdin.aclose()
    return Run(seconds, cpu)


async def main(n: int) -> None:
    games = specs(n, make_rules())
    script, logs = traffic(games)
    requests = sum(reply for _, _, reply in script)
    messages = len(script) + requests
    decisions = sum(len(log) for log in logs)
    print(
        f"{n} games, {decisions} decisions, {messages} messages "
        f"({len(script) - requests} notices, {requests} requests, {requests} replies); "
        f"instant bots; best of {RUNS} alternating runs"
    )
    floors: list[Run] = []
    arbiters: list[Run] = []
    for _ in range(RUNS):
        floors.append(await floor_run(script))
        arbiters.append(await arbiter_run(games, logs))
    floor = min(floors, key=lambda r: r.seconds)
    arb = min(arbiters, key=lambda r: r.seconds)
    print(
        f"{'floor (raw trio pipes)':<24} {messages / floor.seconds:>9,.0f} messages/s  "
        f"{n / floor.seconds:>7,.1f} games/s  CPU {1e6 * floor.cpu / decisions:6.1f} µs/decision"
    )
    print(
        f"{'play_game':<24} {messages / arb.seconds:>9,.0f} messages/s  "
        f"{n / arb.seconds:>7,.1f} games/s  CPU {1e6 * arb.cpu / decisions:6.1f} µs/decision"
    )
    print(
        f"{'ratio (arbiter / floor)':<24} {floor.seconds / arb.seconds:>9.2f} × messages/s  "
        f"(target ≥ 0.50)"
    )


if __name__ == "__main__":
    trio.run(main, int(sys.argv[1]) if len(sys.argv) > 1 else 100)
