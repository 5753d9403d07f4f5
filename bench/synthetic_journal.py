"""Synthetic journals for the benches: the records a two-engine run would write.

Each game is a seeded random playout through the rules on the decks and first
dealer the schedule gives it, so the records pass every check ``--resume`` makes.
"""

from __future__ import annotations

import random
from pathlib import Path

import msgspec

from arbiter.cards import CARDS
from arbiter.config import TournamentConfig, parse_config
from arbiter.record import ActionRecord, DealRecord, EngineInfo, GameRecord, Termination
from arbiter.rules import Phase, Rules, deck_for, format_action, new_game, seed_sha256
from arbiter.schedule import ScheduledGame
from arbiter.tournament import schedule_of

SEED = 11

CONFIG = """
name: synthetic
engines:
  - {name: alpha, builtin: random}
  - {name: beta, builtin: random}
seed: SEED
games_per_pairing: GAMES
"""


def config_for(games: int) -> TournamentConfig:
    """A two-engine config whose schedule has ``games`` games (even)."""
    return parse_config(CONFIG.replace("SEED", str(SEED)).replace("GAMES", str(games)))


def record_for(game: ScheduledGame, rules: Rules, seed: int) -> GameRecord:
    """The record of one scheduled game, played by random choices."""
    rng = random.Random(f"bench/{game.game_id}")
    st = new_game(rules, game.first_dealer)
    deals: list[DealRecord] = []
    while not st.is_over():
        before = st.scores[:]
        number = st.deal_number + 1
        dealer = st.dealer
        deck = deck_for(seed, game.deal_set, number)
        st.deal(deck)
        actions: list[ActionRecord] = []
        while st.phase != Phase.DEAL and not st.is_over():
            seat = st.to_act
            a = rng.choice(st.legal_actions())
            actions.append(ActionRecord(seat, format_action(a), round(rng.uniform(0.05, 3), 3)))
            st.apply(a)
        deals.append(
            DealRecord(
                number=number,
                dealer=dealer,
                deck=[str(CARDS[c]) for c in deck],
                actions=actions,
                tricks=list(st.tricks),
                points=[st.scores[0] - before[0], st.scores[1] - before[1]],
            )
        )
    assert st.winner is not None
    return GameRecord(
        game_id=game.game_id,
        engines=list(game.engines),
        pair_id=game.pair_id,
        deal_set=game.deal_set,
        seed_sha256=seed_sha256(seed),
        first_dealer=game.first_dealer,
        rules=rules,
        deals=deals,
        scores=list(st.scores),
        winner=st.winner,
        termination=Termination(reason="normal"),
        info=[
            EngineInfo(name=n, bot_name="random", author="bench", version="1") for n in game.engines
        ],
        started="2026-01-01T00:00:00+00:00",
        seconds=0.05,
    )


def write_journal(path: Path, games: int) -> None:
    """Write the journal of the whole ``config_for(games)`` schedule to ``path``."""
    config = config_for(games)
    rules = config.resolved_rules()
    encoder = msgspec.json.Encoder()
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as f:
        for game in schedule_of(config):
            f.write(encoder.encode(record_for(game, rules, SEED)) + b"\n")
