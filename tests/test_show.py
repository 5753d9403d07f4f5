"""``ecarte show``: a recorded game replayed as a person reads it in the terminal."""

from __future__ import annotations

import os
import pty
import random
import select
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from arbiter.cards import CARDS, Card
from arbiter.cli import main as cli_main
from arbiter.journal import encode_record, write_records
from arbiter.record import ActionRecord, DealRecord, GameRecord, Termination
from arbiter.rules import Phase, deck_for, format_action, make_rules, new_game, seed_sha256
from arbiter.show import Style, render_game

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
ENV.pop("NO_COLOR", None)


def _record(seed: int, game_id: int = 0) -> GameRecord:
    """A game of random legal actions, recorded as the arbiter records one."""
    rules = make_rules()
    st = new_game(rules, 1)
    rng = random.Random(seed)
    deals: list[DealRecord] = []
    while not st.is_over():
        before, dealer = st.scores[:], st.dealer
        deck = deck_for(seed, 0, st.deal_number + 1)
        st.deal(deck)
        actions = []
        while st.phase not in (Phase.DEAL, Phase.GAME_OVER):
            seat = st.to_act
            a = rng.choice(st.legal_actions())
            actions.append(ActionRecord(seat, format_action(a), 2.0))
            st.apply(a)
        deals.append(
            DealRecord(
                number=len(deals) + 1,
                dealer=dealer,
                deck=[str(CARDS[c]) for c in deck],
                actions=actions,
                tricks=list(st.tricks),
                points=[st.scores[0] - before[0], st.scores[1] - before[1]],
            )
        )
    return GameRecord(
        game_id=game_id,
        engines=["alpha", "beta"],
        pair_id=None,
        deal_set=0,
        seed_sha256=seed_sha256(seed),
        first_dealer=1,
        rules=rules,
        deals=deals,
        scores=st.scores,
        winner=st.winner,
        termination=Termination(reason="normal"),
    )


def _exchange_record() -> GameRecord:
    """The first seeded random game whose first deal has an exchange."""
    for seed in range(100):
        rec = _record(seed)
        if any(a.action.startswith("discard") for a in rec.deals[0].actions):
            return rec
    raise AssertionError("no seed gives an exchange")


def _journal(tmp_path: Path, *records: GameRecord) -> Path:
    out = tmp_path / "run"
    out.mkdir()
    write_records(out / "games.jsonl", (encode_record(r) for r in records))
    return out


def _discarded(rec: GameRecord, seat: int) -> set[str]:
    return {
        card
        for a in rec.deals[0].actions
        if a.seat == seat and a.action.startswith("discard")
        for card in a.action.split()[1:]
    }


def _cards_seen(rec: GameRecord, seat: int) -> set[str]:
    """Cards ``seat`` held, saw turned up or saw played in the first deal."""
    st = new_game(rec.rules, rec.first_dealer)
    st.deal([CARDS.index(Card.parse(c)) for c in rec.deals[0].deck])
    seen = {rec.deals[0].deck[10]}
    for a in [None, *rec.deals[0].actions]:
        if a is not None:
            st.apply_text(a.seat, a.action)
            if len(a.action) == 2:
                seen.add(a.action)
        seen |= {str(CARDS[c]) for c in range(32) if st.hands[seat] >> c & 1}
    return seen


def test_full_replay_shows_both_hands_exchanges_tricks_and_scores() -> None:
    rec = _exchange_record()
    text = "\n".join(render_game(rec, deal=1, style=Style(symbols=False)))
    deck = rec.deals[0].deck
    # Seat 0 is the non-dealer (seat 1 deals first): packets 3-2 from the top.
    assert "alpha: " in text and "beta: " in text
    for card in (*deck[0:3], *deck[3:6], deck[10]):
        assert card in text
    assert f"turn-up {deck[10]}: trumps {deck[10][1]}" in text
    assert "alpha proposes" in text and "beta accepts" in text
    for card in _discarded(rec, 0) | _discarded(rec, 1):
        assert card in text
    assert text.count("  trick ") == 5 or "game stopped" in text
    assert f"deal 1: tricks {rec.deals[0].tricks[0]}-{rec.deals[0].tricks[1]}" in text
    assert "result: " in "\n".join(render_game(rec, style=Style(symbols=False)))


def test_a_deal_heading_gives_the_score_before_a_turned_up_king() -> None:
    rec = next(
        r for r in map(_record, range(200)) if any(d.deck[10][0] == "K" for d in r.deals[1:])
    )
    lines = render_game(rec, style=Style(symbols=False))
    headings = [ln for ln in lines if ln.startswith("deal ")]
    closings = [ln for ln in lines if ln.startswith("  deal ") and ": tricks " in ln]
    assert headings[0].endswith("score 0-0")
    for n, (heading, closing) in enumerate(zip(headings[1:], closings, strict=False), 2):
        # The score a deal starts from is the one the deal before ended on.
        assert heading.endswith(closing[closing.rindex("score ") :]), n
        if rec.deals[n - 1].deck[10][0] == "K":
            dealer = rec.engines[rec.deals[n - 1].dealer]
            at = lines.index(heading)
            before = [int(x) for x in heading.rsplit(" ", 1)[1].split("-")]
            before[rec.deals[n - 1].dealer] += 1
            assert lines[at + 4] == (
                f"  {dealer} scores 1 (king turned up): score {before[0]}-{before[1]}"
            )


@pytest.mark.parametrize("seat", [0, 1])
def test_seat_view_hides_the_opponents_cards(seat: int) -> None:
    rec = _exchange_record()
    other = 1 - seat
    lines = render_game(rec, deal=1, seat=seat, style=Style(symbols=False))
    text = "\n".join(lines)
    # Every card the seat never held and never saw played or turned up.
    known = _cards_seen(rec, seat)
    hidden = {str(c) for c in CARDS} - known
    for line in lines:
        for card in hidden:
            assert card not in line.split(), (card, line)
    assert f"{rec.engines[other]}: 5 cards, hidden" in text
    assert f"{rec.engines[seat]} (you): " in text
    # The own exchange shows what was thrown and drawn; the opponent's only counts.
    for card in _discarded(rec, seat):
        assert card in text
    theirs = [line for line in lines if line.startswith(f"  {rec.engines[other]} discards")]
    assert theirs and all("(" not in line for line in theirs)


def test_ascii_fallback_and_no_colour_on_a_pipe(tmp_path: Path) -> None:
    out = _journal(tmp_path, _record(3))
    run = subprocess.run(
        [sys.executable, "-m", "arbiter", "show", str(out), "0", "--deal", "1"],
        env={**ENV, "PYTHONIOENCODING": "ascii"},
        capture_output=True,
        check=True,
    )
    text = run.stdout.decode("ascii")
    assert "turn-up " in text and "\x1b[" not in text
    utf8 = subprocess.run(
        [sys.executable, "-m", "arbiter", "show", str(out), "0", "--deal", "1"],
        env={**ENV, "PYTHONIOENCODING": "utf-8"},
        capture_output=True,
        check=True,
    ).stdout.decode()
    assert any(sym in utf8 for sym in "♠♥♦♣") and "\x1b[" not in utf8


def _under_pty(argv: list[str], env: dict[str, str]) -> bytes:
    """Run a command with a pseudo-terminal as its stdout; return what it printed."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(argv, env=env, stdout=follower, stderr=follower, stdin=follower)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 30)
        if not ready:
            proc.kill()
            raise AssertionError("no output within 30 s")
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    assert proc.wait(timeout=30) == 0
    return b"".join(chunks)


@pytest.mark.parametrize("no_color", [False, True])
def test_colour_only_on_a_terminal_and_not_with_no_color(tmp_path: Path, no_color: bool) -> None:
    out = _journal(tmp_path, _record(3))
    env = {**ENV, "PYTHONIOENCODING": "utf-8", "TERM": "xterm"}
    if no_color:
        env["NO_COLOR"] = "1"
    shown = _under_pty([sys.executable, "-m", "arbiter", "show", str(out), "0"], env)
    assert b"result: " in shown
    assert (b"\x1b[" in shown) is not no_color


def _faulted(termination_of: Callable[[int], Termination]) -> GameRecord:
    """Game 5 cut short after two actions by a fault of the seat whose turn it was."""
    rec = _record(5)
    first = rec.deals[0]
    st = new_game(rec.rules, rec.first_dealer)
    st.deal([CARDS.index(Card.parse(c)) for c in first.deck])
    for a in first.actions[:2]:
        st.apply_text(a.seat, a.action)
    cut = msgspec.structs.replace(
        first, actions=first.actions[:2], tricks=st.tricks, points=st.scores
    )
    offender = first.actions[2].seat
    return msgspec.structs.replace(
        rec,
        deals=[cut],
        scores=st.scores,
        winner=1 - offender,
        termination=termination_of(offender),
    )


def test_fault_is_shown_with_its_line_made_safe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    faulted = _faulted(
        lambda offender: Termination(
            reason="invalid_message",
            offender=offender,
            detail="not JSON",
            line='{"type":"action"\x1b[2J',
        )
    )
    rec = faulted
    offender = faulted.termination.offender
    assert offender is not None
    out = _journal(tmp_path, faulted)
    assert cli_main(["show", str(out), "0"]) == 0
    text = capsys.readouterr().out
    assert f"fault: invalid_message {rec.engines[offender]} (seat {offender})" in text
    assert 'line: {"type":"action"\\x1b[2J' in text and "\x1b" not in text
    assert "(the game stopped here)" in text
    assert "  fix: send one JSON object per line" in text


def test_errors_are_one_line_with_exit_status_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = _journal(tmp_path, _record(1, game_id=4), _record(2, game_id=7))
    journal = out / "games.jsonl"
    n_deals = len(_record(1).deals)
    cases = {
        ("show", str(out), "5"): f"no game 5 in {journal} (2 records, game ids 4-7)",
        ("show", str(journal), "4", "--deal", "99"): f"game 4 has deals 1-{n_deals}: no deal 99",
        ("show", str(tmp_path / "nowhere"), "1"): "no journal at",
    }
    for argv, message in cases.items():
        assert cli_main(list(argv)) == 2
        err = capsys.readouterr().err
        assert message in err and err.count("\n") == 1, err
    lines = journal.read_bytes().splitlines(keepends=True)
    journal.write_bytes(b"{broken\n" + b"".join(lines))
    assert cli_main(["show", str(out), "7"]) == 2
    err = capsys.readouterr().err
    assert f"{journal}:1: damaged record" in err and err.count("\n") == 1
    # A record that does not replay under the rules is named, not shown.
    bad = msgspec.structs.replace(_record(1, game_id=4), scores=[9, 9])
    journal.write_bytes(encode_record(bad) + b"\n")
    assert cli_main(["show", str(out), "4"]) == 2
    assert "game 4 does not replay" in capsys.readouterr().err


def test_a_seat_view_does_not_show_the_opponents_fault_detail(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An illegal action's detail lists the offender's legal cards (its hand): the other
    seat's view names the fault, not the detail nor the line."""
    faulted = _faulted(
        lambda offender: Termination(
            reason="illegal_action",
            offender=offender,
            detail="'stand' is not legal now; legal: SECRET-CARDS",
            line='{"type":"action","id":3,"action":"stand"}',
        )
    )
    offender = faulted.termination.offender
    assert offender is not None
    out = _journal(tmp_path, faulted)
    assert cli_main(["show", str(out), "0", "--seat", str(1 - offender)]) == 0
    other = capsys.readouterr().out
    assert "fault: illegal_action" in other
    assert "SECRET-CARDS" not in other and '"action":"stand"' not in other
    assert "not shown in this seat's view" in other
    assert cli_main(["show", str(out), "0", "--seat", str(offender)]) == 0
    own = capsys.readouterr().out
    assert "SECRET-CARDS" in own and '"action":"stand"' in own
