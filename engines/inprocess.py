"""In-process games between strategies, for tests and benchmarks (no bots, no protocol).

A player here is a function of the whole :class:`arbiter.rules.State` (a
:data:`StatePlayer`); :func:`view_player` wraps a strategy that reads only a seat's
view, through :func:`arbiter.view.observe`.  Not to be confused with
:func:`arbiter.game.play_game`, which plays bot processes over the protocol.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from arbiter.rules import Phase, Rules, Seed, State, deck_for, new_game, parse_action
from arbiter.view import observe
from protocol.view import Observation

__all__ = [
    "StatePlayer",
    "ViewChooser",
    "choose_random",
    "play_inprocess_game",
    "play_inprocess_match",
    "view_player",
]

ViewChooser = Callable[[Observation, random.Random], str]
"""A strategy seen from the wire: a seat's view in, an action's text out."""

StatePlayer = Callable[[State, int, random.Random], int]
"""An in-process player: the whole state (it promises to look only at what it may), a
seat and a random source in, an action int out."""


def choose_random(view: Observation, rng: random.Random) -> str:
    """The random player: any legal action, uniformly."""
    return rng.choice(view.legal)


def view_player(choose: ViewChooser) -> StatePlayer:
    """Adapt a view-based strategy into an in-process player (through ``observe``)."""

    def play(state: State, seat: int, rng: random.Random) -> int:
        return parse_action(choose(observe(state, seat), rng))

    return play


def play_inprocess_game(
    players: tuple[StatePlayer, StatePlayer],
    seed: Seed,
    game: int,
    first_dealer: int = 0,
    rules: Rules | None = None,
    check: bool = True,
) -> int:
    """Play one game in process; returns the winning seat.

    Decks come from :func:`arbiter.rules.deck_for` with ``(seed, game, deal)``, so two
    games with the same ``game`` number get the same cards.  With ``check`` every action
    goes through :meth:`State.apply_checked` (an illegal choice raises).
    """
    state = new_game(rules or Rules(), first_dealer)
    rngs = (random.Random(f"{seed}/{game}/0"), random.Random(f"{seed}/{game}/1"))
    deal = 0
    while not state.is_over():
        if state.phase == Phase.DEAL:
            deal += 1
            state.deal(deck_for(seed, game, deal))
            continue
        seat = state.to_act
        action = players[seat](state, seat, rngs[seat])
        if check:
            state.apply_checked(seat, action)
        else:
            state.apply(action)
    return state.winner


def play_inprocess_match(
    a: StatePlayer,
    b: StatePlayer,
    pairs: int,
    seed: Seed = 0,
    rules: Rules | None = None,
) -> tuple[int, int]:
    """Play ``pairs`` game pairs (same decks, seats swapped); returns (games won by a, games)."""
    wins = 0
    for g in range(pairs):
        fd = g % 2
        if play_inprocess_game((a, b), seed, g, fd, rules) == 0:
            wins += 1
        if play_inprocess_game((b, a), seed, g, fd, rules) == 1:
            wins += 1
    return wins, 2 * pairs
