"""The annotated transcript of PROTOCOL.md §8, written from a replay through the referee.

Two bundled ``random`` players (seeds 1 and 2) play game ``demo-1`` on the decks of
``tests.test_referee.TRANSCRIPT_SEED``; every line and every annotation is produced
here, so a change to the decks or the messages is one command away from a new
transcript::

    python -m tests.transcript --regenerate

The same command rewrites the request and action examples of §3.6, taken from the
transcript (the first request answering a led card by a seat that has exchanged), so
the two always show the same position with the same id.  ``tests/test_referee.py``
checks that the referee still produces the transcript, ``tests/test_protocol.py``
that the §3.6 examples are lines of it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re

import msgspec

from arbiter.cards import SUIT_NAMES, Card
from engines.random.bot import RandomPlayer
from protocol.messages import Action, BotHello, Hello, Quit, ToBot, decode_from_bot, encode
from tests.test_referee import DOC, make_referee

EXAMPLE_REQUEST = re.compile(r'(?ms)^```json to-bot\n\{\n  "type": "request",\n.*?^```$')
"""The pretty-printed request example of §3.6."""
EXAMPLE_ACTION = re.compile(r'(?m)^```json from-bot\n\{"type":"action".*\n```$')
"""The action example of §3.6."""


def example(lines: list[str]) -> tuple[str, str]:
    """The §3.6 examples: the first request with a led card to a seat that has exchanged,
    pretty-printed, and its reply, both as in the transcript."""
    for ask, answer in itertools.pairwise(lines):
        if not ask.endswith("}}") or ' << {"type":"request"' not in ask:
            continue
        message = json.loads(ask.split(" ", 2)[2])
        view = message["view"]
        if view["phase"] == "trick" and view["trick"] and view["discards"]:
            return json.dumps(message, indent=2, ensure_ascii=False), answer.split(" ", 2)[2]
    raise LookupError("no request in the transcript shows a led card after an exchange")


def render() -> list[str]:
    """The transcript's lines, annotations included."""
    out: list[str] = [
        "# Handshake, once per process: the arbiter greets each bot with its engine",
        "# options; the bot answers with its name and protocol version (deadline 10 s).",
    ]

    def line(seat: int, direction: str, raw: bytes) -> None:
        out.append(f"{seat} {direction} {raw.decode().rstrip()}")

    bot_hello = BotHello(name="random", author="ecarte-arena", version="1.0", protocol=1)
    for seat in (0, 1):
        line(seat, "<<", encode(Hello(options={"seed": seat + 1})))
        line(seat, ">>", encode(bot_hello))
    ref = make_referee()
    players = [RandomPlayer(1), RandomPlayer(2)]
    seen_hand = False

    def notices(batch: list[tuple[int, ToBot]]) -> None:
        nonlocal seen_hand
        for seat, message in batch:
            players[seat].notice(message)
            d = msgspec.to_builtins(message)
            kind, event = d["type"], d.get("event", {})
            note = None
            if seat == 0 and kind == "new_game":
                note = (
                    "Game demo-1 starts: each bot learns its seat, the opponent, the rules, "
                    "the time."
                )
            elif seat == 0 and kind == "deal":
                suit = SUIT_NAMES[Card.parse(d["turnup"]) >> 3]
                note = (
                    f"Deal {d['deal']}: seat {d['dealer']} deals; each seat gets only its own "
                    f"hand. Turn-up {d['turnup']}: {suit} are trumps."
                )
            elif seat == 0 and event.get("type") == "deal":
                note = "Every public event goes to both seats, starting with the deal itself."
            elif seat == 0 and event.get("reason") == "king_turned_up":
                note = "The turn-up is a king: the dealer scores 1 at once."
            elif seat == 0 and event.get("type") == "mark":
                note = "The king of trumps is marked: shown to both, 1 point."
            elif kind == "hand" and not seen_hand:
                seen_hand = True
                note = "Only the seat that exchanged sees its new hand; the other learns the count."
            elif seat == 0 and kind == "deal_end":
                note = (
                    f"Deal {d['deal']} is over: tricks {d['tricks']}, points {d['points']}, "
                    f"scores {d['scores']}."
                )
                if not d["complete"]:
                    note += " It ended early: the game is over (a king reached 5)."
            elif seat == 0 and kind == "game_end":
                note = (
                    "The game is over. The bots stay alive for their next game; "
                    "here the session ends."
                )
            if note is not None:
                out.append(f"# {note}")
            line(seat, "<<", encode(message))

    count = 0
    while True:
        notices(ref.notices())
        pending = ref.request()
        if pending is None:
            break
        seat, request = pending
        count += 1
        view = request.view
        phase = view.phase + (
            f", {view.trick[0]} led" if view.phase == "trick" and view.trick else ""
        )
        legal = view.legal
        if view.phase == "discard":
            what = f"{len(legal)} discards, from {legal[0]!r} to {legal[-1]!r}"
        else:
            what = ", ".join(legal)
        # Numbered as on the wire: each bot counts its own requests.
        if count == 1:
            out.append(
                f"# Request {request.id} to seat {seat} (phase {phase}; ids count each bot's "
                "own requests)."
            )
            out.append(f"# The view is the seat's whole knowledge; view.legal lists: {what}.")
        else:
            out.append(f"# Request {request.id} to seat {seat} (phase {phase}); legal: {what}.")
        line(seat, "<<", encode(request))
        reply = encode(Action(id=request.id, action=players[seat].choose(request)))
        line(seat, ">>", reply)
        ref.submit(seat, decode_from_bot(reply))
    out.append("# Quit: each bot must exit within 2 s.")
    for seat in (0, 1):
        line(seat, "<<", encode(Quit()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--regenerate", action="store_true", help="rewrite PROTOCOL.md §8")
    args = parser.parse_args()
    if not args.regenerate:
        parser.error("pass --regenerate to rewrite the transcript in PROTOCOL.md")
    lines = render()
    block = "```transcript\n" + "\n".join(lines) + "\n```"
    request, action = example(lines)
    text = DOC.read_text(encoding="utf-8")
    text = re.sub(r"(?ms)^```transcript\n.*?^```$", lambda _: block, text)
    text = EXAMPLE_REQUEST.sub(lambda _: f"```json to-bot\n{request}\n```", text, count=1)
    text = EXAMPLE_ACTION.sub(lambda _: f"```json from-bot\n{action}\n```", text, count=1)
    DOC.write_text(text, encoding="utf-8")
    print(f"wrote the transcript of {DOC}")


if __name__ == "__main__":
    main()
