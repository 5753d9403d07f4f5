"""Tests of protocol/messages.py, protocol/schema.py and the examples in PROTOCOL.md."""

from __future__ import annotations

import json
import random
import re
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from arbiter.rules import make_rules
from protocol.faults import FaultReason, InvalidMessage
from protocol.messages import (
    MAX_LINE_BYTES,
    MAX_NESTING,
    Action,
    BotHello,
    Deal,
    DealEnd,
    EventNotice,
    Forfeit,
    FromBot,
    GameEnd,
    Hand,
    Hello,
    NewGame,
    Quit,
    ToBot,
    decode_from_bot,
    decode_known_to_bot,
    decode_to_bot,
    encode,
)
from protocol.schema import SCHEMA_PATHS, Direction, build_schema, plain_text, render_schema
from protocol.view import CardPlayed

DOC = Path(__file__).resolve().parents[1] / "PROTOCOL.md"
_FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.M | re.S)
TRANSCRIPT_LINE = re.compile(r"^([01]) (<<|>>) (\{.*\})$")


def doc_blocks(language: str) -> list[tuple[str, str]]:
    """(info string after the language, body) of every fenced block in PROTOCOL.md."""
    text = DOC.read_text(encoding="utf-8")
    return [(m[2].strip(), m[3]) for m in _FENCE.finditer(text) if m[1] == language]


def transcript() -> list[tuple[int, str, bytes]]:
    """The §8 transcript as (seat, direction, line with its newline); annotations dropped."""
    (block,) = doc_blocks("transcript")
    out = []
    for raw in block[1].splitlines():
        if not raw or raw.startswith("#"):
            continue
        m = TRANSCRIPT_LINE.match(raw)
        assert m, f"not a transcript line: {raw[:80]!r}"
        out.append((int(m[1]), m[2], m[3].encode() + b"\n"))
    return out


def _tags(union: object) -> set[str]:
    return {str(t.__struct_config__.tag) for t in typing.get_args(union)}


# --------------------------------------------------------------------------- the document


def test_every_json_example_decodes_to_its_direction() -> None:
    blocks = doc_blocks("json")
    assert len(blocks) >= 12
    seen: dict[str, set[str]] = {"to-bot": set(), "from-bot": set()}
    for info, body in blocks:
        assert info in seen, f"a ```json block must say to-bot or from-bot, not {info!r}"
        message: ToBot | FromBot
        message = decode_to_bot(body) if info == "to-bot" else decode_from_bot(body.encode())
        # Nothing ignored: re-encoding gives back every field of the example.
        assert msgspec.json.decode(encode(message)) == json.loads(body)
        seen[info].add(str(message.__struct_config__.tag))
    assert seen["to-bot"] == _tags(ToBot)
    assert seen["from-bot"] == _tags(FromBot)


def test_every_transcript_line_decodes_and_reencodes_exactly() -> None:
    lines = transcript()
    assert len(lines) > 100
    for _seat, direction, line in lines:
        message = decode_to_bot(line) if direction == "<<" else decode_from_bot(line)
        assert encode(message) == line


def test_request_example_is_a_position_of_the_transcript_with_its_id() -> None:
    """§3.6 and §8 show the same position with the same id, and the transcript's
    annotations number requests as the wire does."""
    lines = transcript()
    (request,) = [body for info, body in doc_blocks("json") if '"type": "request"' in body]
    (action,) = [body for info, body in doc_blocks("json") if body.startswith('{"type":"action"')]
    wire = [(seat, direction, json.loads(line)) for seat, direction, line in lines]
    at = [i for i, (_, d, m) in enumerate(wire) if d == "<<" and m == json.loads(request)]
    assert len(at) == 1, "the §3.6 request is not a line of the transcript"
    seat, _, reply = wire[at[0] + 1]
    assert (seat, reply) == (wire[at[0]][0], json.loads(action))
    (block,) = doc_blocks("transcript")
    raw = block[1].splitlines()
    for i, note in enumerate(raw):
        if m := re.match(r"# Request (\d+) to seat (\d)", note):
            line = next(x for x in raw[i:] if not x.startswith("#"))
            sent = TRANSCRIPT_LINE.match(line)
            assert sent and sent[1] == m[2] and json.loads(sent[3])["id"] == int(m[1]), note


def test_error_examples_in_the_document_are_exact() -> None:
    (block,) = doc_blocks("errors")
    rows = block[1].splitlines()
    assert len(rows) % 2 == 0 and rows
    for sent, said in zip(rows[::2], rows[1::2], strict=True):
        assert sent.startswith(">> ") and said.startswith("!! ")
        with pytest.raises(InvalidMessage) as info:
            decode_from_bot(sent[3:].encode())
        assert str(info.value) == said[3:]


# --------------------------------------------------------------------------- decoding bot lines

BAD_LINES = [
    pytest.param(b"", "empty line: every line must hold exactly one JSON object", id="empty"),
    pytest.param(b"  \r\n", "empty line: every line must hold exactly one JSON object", id="blank"),
    pytest.param(
        b'{"type":"action","id":1,"action":"KS"',
        "malformed JSON: the line ends in the middle of a JSON value",
        id="truncated",
    ),
    pytest.param(
        b"{type: action}", "malformed JSON: object keys must be strings (byte 1)", id="not-json"
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":"KS"}{"type":"action","id":2,"action":"QS"}',
        "malformed JSON: trailing characters (byte 39)",
        id="two-objects",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":"K\xffS"}',
        "not valid UTF-8: byte 0xff at offset 35",
        id="bad-utf8",
    ),
    pytest.param(b"[1, 2]", 'expected a JSON object with a "type" field, got an array', id="array"),
    pytest.param(b'"KS"', 'expected a JSON object with a "type" field, got a string', id="string"),
    pytest.param(b"12", 'expected a JSON object with a "type" field, got a number', id="number"),
    pytest.param(b"null", 'expected a JSON object with a "type" field, got null', id="null"),
    pytest.param(
        b'{"id":1,"action":"KS"}',
        'missing field "type": a bot sends "hello" or "action"',
        id="no-type",
    ),
    pytest.param(
        b'{"type":7,"id":1,"action":"KS"}',
        'field "type" must be a string ("hello" or "action"), got a number',
        id="type-not-string",
    ),
    pytest.param(
        b'{"type":"play","id":1,"action":"KS"}',
        'unknown message type "play": a bot sends "hello" or "action"',
        id="unknown-type",
    ),
    pytest.param(
        b'{"type":"request","id":1}',
        'unknown message type "request": a bot sends "hello" or "action"',
        id="arbiter-type",
    ),
    pytest.param(
        b'{"type":"action","id":1,"acton":"KS"}',
        'unknown field "acton" in "action" message (its fields: "id", "action")',
        id="unknown-field-typo",
    ),
    pytest.param(
        b'{"type":"hello","name":"x","author":"y","version":"1","protocol":1,"elo":3000}',
        'unknown field "elo" in "hello" message '
        '(its fields: "name", "author", "version", "protocol")',
        id="unknown-field-hello",
    ),
    pytest.param(
        b'{"type":"action","id":1}',
        'missing field "action" in "action" message',
        id="missing-field",
    ),
    pytest.param(
        b'{"type":"action","id":"1","action":"KS"}',
        'wrong type at $.id in "action" message: expected int, got str',
        id="id-as-string",
    ),
    pytest.param(
        b'{"type":"action","id":1.0,"action":"KS"}',
        'wrong type at $.id in "action" message: expected int, got float',
        id="id-as-float",
    ),
    pytest.param(
        b'{"type":"action","id":true,"action":"KS"}',
        'wrong type at $.id in "action" message: expected int, got bool',
        id="id-as-bool",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":["KS"]}',
        'wrong type at $.action in "action" message: expected str, got array',
        id="action-as-list",
    ),
    pytest.param(
        b'{"type":"hello","name":"x","author":"y","version":"1","protocol":null}',
        'wrong type at $.protocol in "hello" message: expected int, got null',
        id="protocol-null",
    ),
    pytest.param(
        b'{"type":"hello","name":"' + b"n" * 101 + b'","author":"y","version":"1","protocol":1}',
        'invalid value at $.name in "hello" message: expected str of length <= 100',
        id="name-too-long",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":' + b"[" * 1000 + b"]" * 1000 + b"}",
        "JSON nested deeper than 16 levels (bot messages are flat objects)",
        id="deep-arrays",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":' + b'{"a":' * 1000 + b"1" + b"}" * 1001,
        "JSON nested deeper than 16 levels (bot messages are flat objects)",
        id="deep-objects",
    ),
    pytest.param(
        b'{"id":' + b"[" * 1000 + b"]" * 1000 + b',"type":"action","action":"KS"}',
        "JSON nested deeper than 16 levels (bot messages are flat objects)",
        id="deep-before-the-tag",
    ),
    pytest.param(
        b"[" * 60_000,
        "JSON nested deeper than 16 levels (bot messages are flat objects)",
        id="deep-unclosed",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":' + b"[" * 15 + b"]" * 15 + b"}",
        'wrong type at $.action in "action" message: expected str, got array',
        id="nested-16-levels-is-not-too-deep",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":"' + b"[" * 1000 + b'"',
        "malformed JSON: the line ends in the middle of a JSON value",
        id="brackets-in-an-unterminated-string",
    ),
    pytest.param(
        b'{"type":"action","id":1,"id":2,"action":"KS"}',
        'duplicate key "id" in "action" message',
        id="duplicate-id",
    ),
    pytest.param(
        b'{"type":"action","type":"action","id":1,"action":"KS"}',
        'duplicate key "type" in "action" message',
        id="duplicate-type",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":"KS","\\u0069d":1}',
        'duplicate key "id" in "action" message',
        id="duplicate-key-escaped",
    ),
    pytest.param(
        b'{"type":"hello","name":"x","author":"y","name":"z","version":"1","protocol":1}',
        'duplicate key "name" in "hello" message',
        id="duplicate-hello-name",
    ),
    pytest.param(
        b'{"type":"hello","name":"x\\u001b[2J","author":"y","version":"1","protocol":1}',
        'invalid value at $.name in "hello" message: control character U+001B at index 1 '
        "(strings must not contain control characters)",
        id="escape-in-name",
    ),
    pytest.param(
        b'{"type":"hello","name":"x","author":"\\u0000","version":"1","protocol":1}',
        'invalid value at $.author in "hello" message: control character U+0000 at index 0 '
        "(strings must not contain control characters)",
        id="nul-in-author",
    ),
    pytest.param(
        '{"type":"hello","name":"x","author":"y","version":"1\u0085","protocol":1}'.encode(),
        'invalid value at $.version in "hello" message: control character U+0085 at index 1 '
        "(strings must not contain control characters)",
        id="c1-in-version",
    ),
    pytest.param(
        '{"type":"hello","name":"ab\u202ecd","author":"y","version":"1","protocol":1}'.encode(),
        'invalid value at $.name in "hello" message: bidirectional control U+202E at index 2 '
        "(strings must not contain control characters)",
        id="bidi-override-in-name",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":"K\x7fS"}',
        'invalid value at $.action in "action" message: control character U+007F at index 1 '
        "(strings must not contain control characters)",
        id="raw-del-in-action",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":"KS\\t"}',
        'invalid value at $.action in "action" message: control character U+0009 at index 2 '
        "(strings must not contain control characters)",
        id="escaped-tab-in-action",
    ),
    pytest.param(
        b'{"type":"action","id":1,"action":"KS\tx"}',
        "malformed JSON: invalid character (byte 36)",
        id="raw-tab-in-action",
    ),
]


@pytest.mark.parametrize(("line", "text"), BAD_LINES)
def test_malformed_bot_line_has_a_precise_error(line: bytes, text: str) -> None:
    with pytest.raises(InvalidMessage) as info:
        decode_from_bot(line)
    assert str(info.value) == text


def test_line_length_limit_is_64_kib_without_the_newline() -> None:
    head, tail = b'{"type":"action","id":1,"action":"', b'"}'
    fits = head + b"x" * (MAX_LINE_BYTES - len(head) - len(tail)) + tail
    assert len(fits) == MAX_LINE_BYTES
    assert isinstance(decode_from_bot(fits + b"\r\n"), Action)
    too_long = fits[:-2] + b"x" + tail
    with pytest.raises(InvalidMessage) as info:
        decode_from_bot(too_long + b"\n")
    assert str(info.value) == "line too long: 65537 bytes, the limit is 65536 bytes"


def test_good_bot_lines_decode_with_or_without_newline() -> None:
    assert decode_from_bot(b'{"type":"action","id":3,"action":"discard 7H 8C"}') == Action(
        id=3, action="discard 7H 8C"
    )
    assert decode_from_bot(
        b'{"protocol":1,"version":"2","author":"a","name":"b","type":"hello"}\r\n'
    ) == BotHello(name="b", author="a", version="2", protocol=1)


def test_strict_checks_accept_what_a_good_bot_sends() -> None:
    """No false alarm: commas and brackets inside strings, escapes of printable
    characters, non-ASCII names, and whitespace between keys are all fine."""
    assert decode_from_bot(b'{"type":"action","id":1,"action":"K,S[{,"}') == Action(
        id=1, action="K,S[{,"
    )
    assert decode_from_bot(b'{"type":"action","id":1,"action":"\\u004bS"}') == Action(
        id=1, action="KS"
    )
    hello = '{ "type" : "hello", "name" : "Écarté\u00a0bot, [v2]", "author" : "李", '
    hello += '"version" : "1.0 \u2014 \U0001f0cf", "protocol" : 1 }\r\n'
    assert decode_from_bot(hello.encode()) == BotHello(
        name="Écarté\u00a0bot, [v2]", author="李", version="1.0 \u2014 \U0001f0cf", protocol=1
    )


def test_nesting_limit_counts_the_message_object() -> None:
    def nested(depth: int) -> bytes:  # the message object is level 1
        inner = depth - 1
        return b'{"type":"action","id":1,"action":' + b"[" * inner + b"]" * inner + b"}"

    for depth in (MAX_NESTING, MAX_NESTING + 1):
        with pytest.raises(InvalidMessage) as info:
            decode_from_bot(nested(depth))
        assert ("nested deeper" in str(info.value)) == (depth > MAX_NESTING)


def test_hostile_lines_raise_only_protocol_error() -> None:
    """Whatever a bot sends, decoding it raises InvalidMessage or nothing: any other
    exception would abort the game as an arbiter error and never charge the bot."""
    good = b'{"type":"action","id":12,"action":"discard 7H 8C"}'
    hello = b'{"type":"hello","name":"n","author":"a","version":"1","protocol":1}'
    hostile = [
        b'{"type":"action","id":' + b"9" * 65_000 + b',"action":"KS"}',
        b'{"type":"action","id":-' + b"9" * 65_000 + b',"action":"KS"}',
        b'{"type":"action","id":1e99999,"action":"KS"}',
        b'{"type":"action","id":1,"action":"KS","x":' + b"9" * 65_000 + b"}",
        b'{"type":"action","id":1,"action":"KS","x":1' + b"0" * 65_000 + b".5}",
        b'{"type":"action","id":1,"action":"\\ud800"}',
        b'{"type":"action","id":1,"action":"\xed\xa0\x80"}',
        b"[" * 65_536,
        b"{" * 65_536,
        b'{"a":' * 13_000,
        b'"' + b"\\" * 65_000,
        b"\xff" * 65_536,
        b"\x00" * 100,
    ]
    rng = random.Random(7)
    alphabet = b'{}[]",:\\u0123456789eE.-+ ' + b"\x00\x1b\x7f\xc2\x85\xe2\x80\xaeabcdefxyz"
    for _ in range(3000):
        line = bytearray(rng.choice((good, hello)))
        for _ in range(rng.randint(1, 6)):
            pos = rng.randint(0, len(line))
            if rng.random() < 0.5 and line:
                del line[min(pos, len(line) - 1)]
            else:
                line[pos:pos] = bytes(rng.choices(alphabet, k=rng.randint(1, 40)))
        hostile.append(bytes(line))
    for text in hostile:
        try:
            decode_from_bot(text)
        except InvalidMessage:
            pass


# --------------------------------------------------------------------------- messages and schema


def test_every_message_round_trips() -> None:
    rules = make_rules(target=7)
    to_bot: list[ToBot] = [
        Hello(options={"seed": 3, "name": "x", "fast": True, "ratio": 0.5, "none": None}),
        NewGame(
            game="g",
            match="m",
            game_number=2,
            pair=1,
            seat=1,
            opponent="o",
            first_dealer=0,
            rules=rules,
            time_ms=50,
            clock_ms=60_000,
        ),
        Deal(deal=1, dealer=0, hand=["KS", "TH"], turnup="7C", scores=[0, 1]),
        EventNotice(event=CardPlayed(seat=0, card="KS")),
        Hand(hand=["KS"]),
        DealEnd(deal=2, complete=False, tricks=[0, 0], points=[1, 0], scores=[5, 3]),
        GameEnd(game="g", winner=None, reason="aborted", scores=[0, 0]),
        Forfeit(game="g", reason=FaultReason.TIMEOUT, detail="no reply within 50 ms"),
        Quit(),
    ]
    for message in to_bot:
        assert decode_to_bot(encode(message)) == message
    for reply in (
        Action(id=1, action="KS"),
        BotHello(name="a", author="b", version="c", protocol=1),
    ):
        assert decode_from_bot(encode(reply)) == reply
    assert encode(Quit()) == b'{"type":"quit"}\n'


def test_arbiter_messages_ignore_unknown_top_level_fields() -> None:
    assert decode_to_bot(b'{"type":"quit","reason":"done"}') == Quit()


def test_the_typed_decoder_ignores_unknown_fields_at_any_depth() -> None:
    """§2.5 for a bot written on decode_to_bot alone, as ecarte check now probes: unknown
    fields inside the view, the rules and an event are dropped; an unknown message type is
    an error (decode_known_to_bot gives None for it instead)."""
    line = next(
        body for _, direction, body in transcript() if direction == "<<" and b'"request"' in body
    )
    request = decode_to_bot(line)
    data = json.loads(line)
    data["view"]["mood"] = "calm"
    data["view"]["rules"]["new_option"] = 1
    data["view"]["events"][0]["extra"] = [1, 2]
    assert decode_to_bot(json.dumps(data)) == request
    with pytest.raises(msgspec.ValidationError, match="unknown type"):
        decode_to_bot(b'{"type":"weather","sky":"grey"}')
    assert decode_known_to_bot(b'{"type":"weather","sky":"grey"}') is None


@pytest.mark.parametrize("direction", ["to-bot", "from-bot"])
def test_checked_in_schemas_are_up_to_date(direction: Direction) -> None:
    assert SCHEMA_PATHS[direction].read_text(encoding="utf-8") == render_schema(direction), (
        f"{SCHEMA_PATHS[direction].name} is stale: run `python -m protocol.schema`"
    )


def _objects(node: Any) -> Iterator[dict[str, Any]]:
    """Every schema node of ``node`` that describes an object with properties."""
    if isinstance(node, dict):
        if "properties" in node:
            yield node
        for value in node.values():
            yield from _objects(value)
    elif isinstance(node, list):
        for item in node:
            yield from _objects(item)


def test_schema_to_bot_is_open_and_from_bot_strict() -> None:
    """PROTOCOL.md §2.5: what a bot receives may grow; what it sends may not."""
    to_bot, from_bot = build_schema("to-bot"), build_schema("from-bot")
    for schema in (to_bot, from_bot):
        assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    # Arbiter to bot: no object forbids extra properties, at any depth, and a message of
    # a type not listed is valid.
    objects = list(_objects(to_bot["$defs"]))
    assert len(objects) > 20
    assert all("additionalProperties" not in o for o in objects)
    known, unknown = to_bot["$defs"]["ToBot"]["anyOf"]
    assert set(known["discriminator"]["mapping"]) == _tags(ToBot)
    assert unknown["properties"]["type"]["not"]["enum"] == sorted(_tags(ToBot))
    # Bot to arbiter: every object is closed, and only the two messages exist.
    from_defs = from_bot["$defs"]
    assert set(from_defs["FromBot"]["discriminator"]["mapping"]) == _tags(FromBot)
    assert all(o["additionalProperties"] is False for o in _objects(from_defs))
    assert "open" in to_bot["title"] and "strict" in from_bot["title"]


def test_schema_descriptions_have_no_python_markup_or_private_references() -> None:
    for direction in ("to-bot", "from-bot"):
        text = render_schema(direction)
        for markup in (
            ":class:",
            ":func:",
            ":data:",
            ":meth:",
            "``",
            "arbiter.rules",
            "rules section",
        ):
            assert markup not in text, (direction, markup)
        assert re.findall(r"[\w-]+\.md", text) == ["PROTOCOL.md"] * text.count(".md")
    assert plain_text("Answer :class:`~protocol.messages.Request` with ``id``.\n\nMore.") == (
        'Answer "request" message with "id".'
    )


def _section(number: str) -> str:
    """The text of section ``number`` of PROTOCOL.md (up to the next section)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"**§{number}**") if f"**§{number}**" in text else text.index(f"§{number} ")
    following = re.compile(r"^(#+ §|\*\*§)", re.M)
    m = following.search(text, start + 10)
    return text[start : m.start() if m else len(text)]


def test_view_table_matches_the_schema() -> None:
    """§3.6: one row per view field, "or null" exactly where the schema allows null,
    and the phases named are the schema's."""
    text = DOC.read_text(encoding="utf-8")
    table = text[text.index("`view` is your observation") : text.index("`legal` is kept inside")]
    rows = {
        m[1]: (m[2], m[3]) for m in re.finditer(r"^\| `(\w+)` \| ([^|]+) \| (.+) \|$", table, re.M)
    }
    view = build_schema("to-bot")["$defs"]["Observation"]
    assert list(rows) == list(view["properties"])
    for name, (kind, _) in rows.items():
        prop = view["properties"][name]
        nullable = any(alt.get("type") == "null" for alt in prop.get("anyOf", []))
        assert ("or null" in kind) == nullable, name
    phases = set(re.findall(r"`(\w+)`", rows["phase"][1]))
    assert phases == set(view["properties"]["phase"]["enum"])


def test_clock_text_states_what_the_arbiter_does() -> None:
    """§5.2 says what tests/test_game.py and tests/test_referee.py check of the arbiter."""
    text = " ".join(_section("5.2").split())
    assert "under a clock the remaining clock alone is the limit" in text
    assert "(`per_move_ms`) is ignored under a clock" in text
    assert "charged rounded up to the millisecond" in text


def test_first_dealer_is_a_seat_in_new_game_and_a_rule_in_rules() -> None:
    """§3.3: the two fields named first_dealer have different types."""
    defs = build_schema("to-bot")["$defs"]
    assert defs["NewGame"]["properties"]["first_dealer"] == {"type": "integer"}
    assert defs["Rules"]["properties"]["first_dealer"]["enum"] == ["random"]
