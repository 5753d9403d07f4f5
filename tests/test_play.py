"""``ecarte play``: a person plays an engine in the terminal, as a seat of the game loop.

The end-to-end tests run the real command in a pseudo-terminal and type at it, as a
person would: a whole game against the bundled random engine with a fixed seed, with
bad input along the way, then the record is re-refereed and the screen checked for
the engine's hidden cards.
"""

from __future__ import annotations

import os
import pty
import re
import select
import signal
import sys
import time
from pathlib import Path

import pytest

from arbiter import play
from arbiter.cards import CARDS, Card, card_list
from arbiter.cli import main as cli_main
from arbiter.config import EngineConfig, rule_options
from arbiter.journal import JournalReader
from arbiter.play import ChoiceError, Screen, parse_choice
from arbiter.record import GameRecord, rereferee
from arbiter.rules import make_rules, new_game
from arbiter.show import Style
from protocol.messages import Deal, EventNotice, decode_to_bot
from protocol.view import CardPlayed, Observation
from tests.test_referee import make_referee, random_players
from tests.test_referee import play as play_referee

ROOT = Path(__file__).resolve().parents[1]
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
PROMPT = "q quit)> "
SYMBOLS = str.maketrans("♠♥♦♣", "SHDC")


def _view(
    phase: str,
    hand: list[str],
    legal: list[str],
    trick: list[str] | None = None,
    stock: int = 21,
) -> Observation:
    return Observation(
        seat=0,
        rules=make_rules(),
        scores=[0, 0],
        dealer=1,
        deal=1,
        phase=phase,  # type: ignore[arg-type]
        to_act=0,
        hand=hand,
        turnup="7C",
        trump="C",
        stock=stock,
        vulnerable=[False, False],
        exchanges=0,
        discards=[],
        tricks=[0, 0],
        trick=trick or [],
        marked=None,
        events=[],
        legal=legal,
    )


HAND = ["KS", "9S", "AH", "8D", "QC"]
TRICK = _view("trick", HAND, ["KS", "9S"], trick=["JS"])
PROPOSE = _view("propose", HAND, ["stand", "propose"])
DISCARDS = ["discard " + " ".join(c) for c in (["KS"], ["9S"], ["KS", "9S"], HAND)]
DISCARD = _view("discard", HAND, DISCARDS)
LAST_CARD = _view("discard", HAND, [f"discard {c}" for c in HAND], stock=1)


@pytest.mark.parametrize(
    ("text", "view", "action"),
    [
        ("1", PROPOSE, "stand"),
        ("2", PROPOSE, "propose"),
        ("Propose", PROPOSE, "propose"),
        ("ks", TRICK, "KS"),
        ("9s", TRICK, "9S"),
        ("K♠", TRICK, "KS"),
        ("2", TRICK, "9S"),
        ("1 2", DISCARD, "discard KS 9S"),
        ("9S KS", DISCARD, "discard KS 9S"),
        ("discard ks", DISCARD, "discard KS"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_a_number_or_notation_names_a_legal_action(
    text: str, view: Observation, action: str
) -> None:
    assert parse_choice(text, view) == action


@pytest.mark.parametrize(
    ("text", "view", "reason"),
    [
        ("frobnicate", PROPOSE, "unknown action 'frobnicate': type a number 1-2"),
        ("3", PROPOSE, "no action 3: choose 1-2"),
        ("accept", PROPOSE, "'accept' is not possible now"),
        ("KS", PROPOSE, "not the time to play a card"),
        ("7H", TRICK, "7H is not in your hand"),
        ("AH", TRICK, "AH cannot be played: JS was led and you must follow suit"),
        ("6", DISCARD, "no card 6 in your hand"),
        ("AH", DISCARD, "you must discard between 1 and 5 cards, not 1"),
        ("1 2", LAST_CARD, "you must discard exactly 1 card (only 1 left in the stock), not 2"),
        ("7H", DISCARD, "7H is not in your hand"),
        ("1 1", DISCARD, "KS is listed twice"),
        ("0", DISCARD, "you must discard at least 1 card"),
    ],
    ids=lambda x: x if isinstance(x, str) else "",
)
def test_bad_input_is_refused_with_the_reason(text: str, view: Observation, reason: str) -> None:
    with pytest.raises(ChoiceError, match=re.escape(reason)):
        parse_choice(text, view)


def test_beat_and_trump_duties_are_explained() -> None:
    beat = _view("trick", ["9S", "KS", "AH"], ["KS"], trick=["JS"])
    with pytest.raises(ChoiceError, match="you must beat JS when you can"):
        parse_choice("9S", beat)
    void = _view("trick", ["AH", "QC"], ["QC"], trick=["JS"])
    with pytest.raises(ChoiceError, match="you have no spades, so you must trump"):
        parse_choice("AH", void)


def test_rule_values_read_as_in_a_config() -> None:
    terms = ["target=7", "must_trump=false", "refusal_penalty=any"]
    assert rule_options("default", terms) == {
        "target": 7,
        "must_trump": False,
        "refusal_penalty": "any",
    }


def test_the_screen_uses_suit_symbols_or_plain_notation() -> None:
    deal = Deal(deal=1, dealer=1, hand=["KS", "TH"], turnup="7C", scores=[0, 0])
    fancy = "\n".join(Screen(style=Style(symbols=True)).notice(deal))
    plain = "\n".join(Screen(style=Style(symbols=False)).notice(deal))
    assert "your hand: K♠ T♥" in fancy and "trumps ♣" in fancy
    assert "your hand: KS TH" in plain and "trumps C" in plain
    assert "\x1b[" not in fancy + plain  # colour only when asked (on a TTY)
    red = Screen(style=Style(symbols=True, colour=True)).notice(
        EventNotice(event=CardPlayed(seat=1, card="TH"))
    )
    assert "\x1b[31mT♥\x1b[0m" in red[0]


def test_a_deal_heading_gives_the_score_before_a_turned_up_king() -> None:
    """The screen follows the referee's messages: a deal starts from the score the deal
    before ended on, and a turned-up king's point comes as the deal's first score."""
    for seed in range(100):  # the first seeded random game with a king turned up
        ref = make_referee(seed=seed, first_dealer=0)
        stream = play_referee(ref, random_players(seed))[0]
        if any(str(CARDS[deck[10]])[0] == "K" for deck in ref.decks[1:]):
            break
    screen = Screen(style=Style(symbols=False), seat=0)
    lines = [ln for raw in stream for ln in screen.notice(decode_to_bot(raw))]
    score = re.compile(r"score you (\d+) - (\d+)")
    ended = [0, 0]
    kings = 0
    for i, line in enumerate(lines):
        found = score.search(line)
        if line.startswith("deal ") and found is not None:
            assert [int(found[1]), int(found[2])] == ended, line
            if " K" in lines[i + 1]:  # the turn-up
                kings += 1
                after = list(ended)
                after[0 if "you deal" in line else 1] += 1
                king = next(ln for ln in lines[i:] if "(king turned up)" in ln)
                assert king.endswith(f"score you {after[0]} - {after[1]} {screen.opponent}")
        elif line.startswith("  deal ") and " over" in line and found is not None:
            ended = [int(found[1]), int(found[2])]
    assert kings


# ----------------------------------------------------------------------------- in a pty


class Terminal:
    """``ecarte`` in a pseudo-terminal (its controlling terminal, so ^C is a signal)."""

    def __init__(self, args: list[str], cwd: Path) -> None:
        env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        env.update(PYTHONPATH=str(ROOT), TERM="xterm", LANG="C.UTF-8", PYTHONIOENCODING="utf-8")
        argv = [sys.executable, "-m", "arbiter", *args]
        pid, fd = pty.fork()
        if pid == 0:  # the child
            try:
                # A suite started in the background by a script inherits SIGINT ignored
                # (the shell's rule for background jobs): ^C must reach the arbiter.
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                os.chdir(cwd)
                os.execve(sys.executable, argv, env)
            finally:
                os._exit(127)
        self.pid, self.fd = pid, fd
        self.raw = ""
        self.pos = 0

    def _read(self, deadline: float) -> bool:
        ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            return True
        try:
            data = os.read(self.fd, 65536)
        except OSError:  # EIO: the child has gone
            return False
        if not data:
            return False
        self.raw += data.decode("utf-8", "replace")
        return True

    @property
    def text(self) -> str:
        """Everything shown so far, without colours and carriage returns."""
        return ANSI.sub("", self.raw).replace("\r", "")

    def expect(self, *patterns: str, timeout: float = 30.0) -> str:
        """The screen from the last match up to the first of ``patterns`` to appear."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.text
            hits = [(i, p) for p in patterns if (i := text.find(p, self.pos)) >= 0]
            if hits:
                i, p = min(hits)
                chunk = text[self.pos : i + len(p)]
                self.pos = i + len(p)
                return chunk
            if time.monotonic() > deadline or not self._read(deadline):
                raise AssertionError(f"none of {patterns} on screen; it ends:\n{text[-1500:]}")

    def send(self, keys: str) -> None:
        os.write(self.fd, keys.encode())

    def finish(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while self._read(deadline) and time.monotonic() < deadline:
            pass
        _, status = os.waitpid(self.pid, 0)
        os.close(self.fd)
        return os.waitstatus_to_exitcode(status)


def _last(chunk: str, prefix: str) -> str:
    return [ln for ln in chunk.splitlines() if ln.startswith(prefix)][-1][len(prefix) :]


def _record(out: Path) -> GameRecord:
    (entry,) = list(JournalReader(out / "games.jsonl"))
    return entry.record


def _engine_cards_shown_early(screen: str, record: GameRecord, engine: str) -> list[str]:
    """Cards the engine held that the screen named before the engine showed them."""
    seat = record.engines.index(engine)
    segments = re.split(r"^deal \d+: ", screen, flags=re.M)[1:]
    st = new_game(record.rules, record.first_dealer)
    leaks = []
    for dr, seg in zip(record.deals, segments, strict=False):
        st.deal([Card.parse(t) for t in dr.deck])
        held = st.hands[seat]
        for a in dr.actions:
            st.apply_text(a.seat, a.action)
            held |= st.hands[seat]
        for c in card_list(held):
            shown = Style(symbols=True).card(str(CARDS[c]))
            first = seg.find(shown)
            public = [
                seg.find(f"{engine} {verb} {shown}")
                for verb in ("leads", "plays", "marks the king of trumps")
            ]
            allowed = min([i for i in public if i >= 0], default=-1)
            if first >= 0 and (allowed < 0 or first < allowed):
                leaks.append(f"deal {dr.number}: {shown}")
    return leaks


def test_a_whole_game_typed_at_a_terminal(tmp_path: Path) -> None:
    out = tmp_path / "game"
    term = Terminal(["play", "random", "--seed", "7", "--out", str(out)], tmp_path)
    # A short seed is guessable: the person is told before the game, as in a tournament.
    assert "game 0" not in term.expect("warning: seed 7 is short: any bot that learns")
    seen = {"unknown": False, "range": False, "illegal": False, "help": False}
    prompts = 0
    while True:
        chunk = term.expect(PROMPT, "replay it with:")
        if chunk.endswith("replay it with:"):
            break
        prompts += 1
        actions = _last(chunk, "  ").split("   ")
        hand = _last(chunk, "  your hand: ").translate(SYMBOLS).split()
        if not seen["unknown"]:
            term.send("frobnicate\r")
            assert "unknown action 'frobnicate'" in term.expect(PROMPT)
            term.send(f"{len(actions) + 7}\r")
            assert f"no action {len(actions) + 7}: choose 1-{len(actions)}" in term.expect(PROMPT)
            term.send("?\r")
            assert "rules reminder:" in term.expect(PROMPT)
            seen.update(unknown=True, range=True, help=True)
        legal = re.findall(r"\(([0-9TJQKA][SHDC])\)", " ".join(actions))
        if legal and "discard" not in chunk.splitlines()[-2] and not seen["illegal"]:
            barred = [c for c in hand if c not in legal]
            if barred:
                term.send(barred[0].lower() + "\r")
                assert f"{barred[0]} cannot be played" in term.expect(PROMPT)
                seen["illegal"] = True
        # Alternate numbers and notation (a card in lower case, or the word).
        if prompts % 2 and legal:
            term.send(legal[0].lower() + "\r")
        else:
            term.send("1\r")
    tail = term.expect("\n")
    assert term.finish() == 0
    assert all(seen.values()), seen
    assert f"ecarte show {out} 0" in tail
    record = _record(out)
    rereferee(record)
    assert record.termination.reason == "normal"
    assert record.engines == ["human", "random"]
    assert (out / "config.resolved.json").exists()
    assert _engine_cards_shown_early(term.text, record, "random") == []
    assert cli_main(["show", str(out), "0"]) == 0


@pytest.mark.parametrize(
    ("keys", "how"),
    [
        pytest.param("\x03", "Ctrl+C", id="ctrl-c"),
        pytest.param("q\r", "q", id="q", marks=pytest.mark.slow),
        pytest.param("\x04", "end of input (Ctrl+D)", id="ctrl-d", marks=pytest.mark.slow),
    ],
)
def test_leaving_is_recorded_as_the_players_forfeit(tmp_path: Path, keys: str, how: str) -> None:
    out = tmp_path / "game"
    term = Terminal(["play", "random", "--seat", "1", "--seed", "3", "--out", str(out)], tmp_path)
    term.expect(PROMPT)
    term.send("1\r")
    term.expect(PROMPT)
    term.send(keys)
    screen = term.expect("replay it with:")
    assert term.finish() == 0
    assert "you lose the game by forfeit (disconnected)" in screen
    assert "fix:" not in term.text  # a person's exit is not a bot's bug
    record = _record(out)
    rereferee(record)
    assert record.engines == ["random", "human"]
    assert record.termination.offender == 1
    assert record.termination.detail == f"the player left the game ({how})"
    assert record.winner == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nosuchbot"], "'nosuchbot' is neither a bundled engine"),
        (["random", "--rule", "target=9"], "bad rules option: target"),
        (["random", "--rule", "bogus"], "--rule 'bogus': expected KEY=VALUE"),
        (["random", "--rule", "next_game_dealer=loser"], "cannot honour next_game_dealer"),
        (["random", "--rules", "nosuch"], "unknown rules preset 'nosuch'"),
        (["random", "--time-per-move", "0"], "--time-per-move: "),
        (["random", "--sandbox", "maybe"], "--sandbox: invalid choice: 'maybe'"),
    ],
    ids=["engine", "value", "syntax", "dealer", "preset", "time", "sandbox"],
)
def test_a_bad_play_command_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    try:
        code = cli_main(["play", *args, "--out", str(tmp_path / "out")])
    except SystemExit as exit_:  # argparse refuses the option itself
        code = exit_.code  # type: ignore[assignment]
    assert code == 2
    err = capsys.readouterr().err.splitlines()[-1] + "\n"
    assert err.startswith("ecarte play: error: ") and message in err and err.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_the_engines_time_and_sandbox_come_from_the_command_line(tmp_path: Path) -> None:
    game = play._prepare(
        EngineConfig(name="random"),
        seat=1,
        preset="default",
        options={},
        seed=3,
        out=tmp_path,
        per_move_ms=250,
        sandbox="off",
    )
    assert game.spec.time.per_move_ms == 250
    assert game.config.sandbox == "off"
    assert game.config.time_control.per_move_ms == 250
    assert game.spec.engines == ("random", "human")


@pytest.mark.slow
def test_ctrl_c_while_the_engine_thinks_ends_quietly_unrecorded(tmp_path: Path) -> None:
    sleeper = [sys.executable, str(ROOT / "tests" / "bots" / "proto_sleep_on_request.py")]
    out = tmp_path / "game"
    term = Terminal(
        ["play", " ".join(sleeper), "--seed", "3", "--time-per-move", "60000", "--out", str(out)],
        tmp_path,
    )
    term.expect("you have no time limit")
    # Whoever acts first: if it is the person, propose, so the engine (the dealer) must answer.
    try:
        term.expect(PROMPT, timeout=2)
        term.send("2\r")
    except AssertionError:
        pass
    time.sleep(0.5)  # the engine is asleep on its request
    term.send("\x03")
    screen = term.expect("the game is not recorded")
    assert "interrupted while the engine was thinking" in screen
    assert term.finish() == 130
    assert "Traceback" not in term.text
    assert not (out / "games.jsonl").exists() or not (out / "games.jsonl").read_bytes()


def test_what_a_faulty_bot_sent_reaches_the_result_line_escaped(tmp_path: Path) -> None:
    """A bot that ends the game with a malformed line quotes itself in the result: the
    escape sequences it put there must not reach the person's terminal raw."""
    bot = f"{sys.executable} {ROOT / 'tests' / 'bots' / 'proto_terminal_escapes.py'} field"
    term = Terminal(["play", bot, "--seed", "3", "--out", str(tmp_path / "game")], tmp_path)
    for _ in range(40):  # answer until the bot's first reply ends the game
        chunk = term.expect(PROMPT, "replay it with:")
        if chunk.endswith("replay it with:"):
            break
        term.send("1\r")
    assert term.finish() == 0
    result = [line for line in term.raw.splitlines() if "result:" in line][-1]
    assert "invalid_message" in result and "\\x1b[2J" in result
    assert "\x1b[2J" not in result and "\x07" not in result
