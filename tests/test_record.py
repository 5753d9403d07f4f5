"""Game records re-referee from their content alone; tampering is caught."""

from __future__ import annotations

import random

import msgspec
import pytest

from arbiter.cards import CARDS
from arbiter.record import (
    ActionRecord,
    DealRecord,
    GameRecord,
    RecordError,
    Termination,
    check_decks,
    rereferee,
)
from arbiter.rules import Phase, deck_for, format_action, make_rules, new_game, seed_sha256


def _random_record(seed: int) -> GameRecord:
    rules = make_rules()
    st = new_game(rules, 0)
    rng = random.Random(seed)
    deals: list[DealRecord] = []
    actions: list[ActionRecord] = []
    deck: list[str] = []
    dealer = 0
    before = [0, 0]

    def close() -> None:
        deals.append(
            DealRecord(
                number=len(deals) + 1,
                dealer=dealer,
                deck=deck,
                actions=list(actions),
                tricks=list(st.tricks),
                points=[st.scores[0] - before[0], st.scores[1] - before[1]],
            )
        )

    while not st.is_over():
        if st.phase == Phase.DEAL:
            if deck:
                close()
            before = st.scores[:]
            dealer = st.dealer
            d = deck_for(seed, 0, st.deal_number + 1)
            deck = [str(CARDS[c]) for c in d]
            actions = []
            st.deal(d)
            continue
        seat = st.to_act
        a = rng.choice(st.legal_actions())
        actions.append(ActionRecord(seat, format_action(a), 1.5))
        st.apply(a)
    close()
    return GameRecord(
        game_id=0,
        engines=["x", "y"],
        pair_id=None,
        deal_set=0,
        seed_sha256=seed_sha256(seed),
        first_dealer=0,
        rules=rules,
        deals=deals,
        scores=st.scores,
        winner=st.winner,
        termination=Termination(reason="normal"),
    )


@pytest.mark.parametrize("seed", range(5))
def test_record_replays_and_survives_json(seed: int) -> None:
    rec = _random_record(seed)
    again = msgspec.json.decode(msgspec.json.encode(rec), type=GameRecord)
    assert again == rec
    st = rereferee(again)
    assert st.scores == rec.scores and st.winner == rec.winner


def test_tampered_action_is_caught() -> None:
    rec = _random_record(1)
    first = rec.deals[0]
    bad = ActionRecord(1 - first.actions[0].seat, first.actions[0].action, 0.0)
    deals = [msgspec.structs.replace(first, actions=[bad, *first.actions[1:]]), *rec.deals[1:]]
    with pytest.raises(RecordError, match="deal 1, action 1"):
        rereferee(msgspec.structs.replace(rec, deals=deals))


def test_tampered_points_and_result_are_caught() -> None:
    rec = _random_record(2)
    d0 = rec.deals[0]
    deals = [msgspec.structs.replace(d0, points=[d0.points[0] + 1, d0.points[1]]), *rec.deals[1:]]
    with pytest.raises(RecordError, match="deal 1: points"):
        rereferee(msgspec.structs.replace(rec, deals=deals))
    with pytest.raises(RecordError, match="final scores"):
        rereferee(msgspec.structs.replace(rec, winner=1 - rec.winner))


def _forfeit(rec: GameRecord, offender: int, winner: int, corrupted: bool = False) -> GameRecord:
    end = Termination(reason="timeout", offender=offender)
    return msgspec.structs.replace(
        rec, deals=[], scores=[0, 0], winner=winner, termination=end, corrupted=corrupted
    )


def test_forfeit_records_are_checked() -> None:
    """A forfeit is won by the other seat; so is a game the arbiter played on (corrupted)."""
    rec = _random_record(3)
    rereferee(_forfeit(rec, offender=0, winner=1))
    with pytest.raises(RecordError, match=r"seat 1 forfeited \(timeout\), record says seat 1 won"):
        rereferee(_forfeit(rec, offender=1, winner=1))
    no_offender = msgspec.structs.replace(rec, termination=Termination(reason="timeout"))
    with pytest.raises(RecordError, match="names no offender seat"):
        rereferee(no_offender)
    with pytest.raises(RecordError, match="the game is not over"):
        rereferee(_forfeit(rec, offender=0, winner=1, corrupted=True))
    # The arbiter played on for the offender: the finished game's scores, but the
    # offender loses even where the played-out score says it won.
    played_on = msgspec.structs.replace(
        rec,
        termination=Termination(reason="timeout", offender=rec.winner),
        corrupted=True,
        winner=1 - rec.winner,
    )
    rereferee(played_on)
    with pytest.raises(RecordError, match=f"winner {1 - rec.winner}, record says .* winner"):
        rereferee(msgspec.structs.replace(played_on, winner=rec.winner))
    with pytest.raises(RecordError, match="final scores"):
        rereferee(msgspec.structs.replace(played_on, scores=[0, 0]))


def test_deal_numbers_and_decks_are_checked() -> None:
    rec = _random_record(4)
    check_decks(rec, seed=4)  # _random_record deals deck_for(seed, 0, n)
    with pytest.raises(RecordError, match="deal 1: the deck is not the one the run's seed deals"):
        check_decks(rec, seed=5)
    renumbered = [msgspec.structs.replace(rec.deals[0], number=2), *rec.deals[1:]]
    with pytest.raises(RecordError, match="deal 1 is numbered 2"):
        rereferee(msgspec.structs.replace(rec, deals=renumbered))
