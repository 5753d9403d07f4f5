"""Every message of the bot protocol (PROTOCOL.md), one tagged frozen Struct each.

Two unions, one per direction: :data:`ToBot` (arbiter → bot) and :data:`FromBot`
(bot → arbiter).  On the wire a message is one JSON object on one line whose
``"type"`` field is the Struct's tag.  The encoder and the decoders are built once
here and reused: the arbiter's per-message path is hot.

Strictness (PROTOCOL.md §2.5): what the arbiter *receives* is checked strictly
(:class:`_FromBotBase` forbids unknown fields), and :func:`decode_from_bot` turns
any defect into an :class:`~protocol.faults.InvalidMessage` fault whose text a bot
author can act on.  What
the arbiter *sends* may grow: new fields get defaults, and bots must ignore fields
and message types they do not know (:class:`_ToBotBase` does not forbid them; the
SDK also drops unknown nested fields).

The game state inside messages is defined in :mod:`protocol.view`: a request's
``view`` is the seat's :class:`~protocol.view.Observation` and an ``event`` notice
wraps one public event Struct.  The ``forfeit`` message's reason is a
:class:`~protocol.faults.FaultReason`.  This package imports nothing from the
arbiter or the engines, so a bot can use it on its own.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Annotated, Any, Final, Literal

import msgspec

from protocol.faults import FaultReason, InvalidMessage
from protocol.view import GameEvent, Observation, Rules

__all__ = [
    "MAX_LINE_BYTES",
    "MAX_NESTING",
    "PROTOCOL_VERSION",
    "Action",
    "BotHello",
    "Deal",
    "DealEnd",
    "EventNotice",
    "Forfeit",
    "FromBot",
    "GameEnd",
    "Hand",
    "Hello",
    "NewGame",
    "Quit",
    "Request",
    "ToBot",
    "decode_from_bot",
    "decode_known_to_bot",
    "decode_to_bot",
    "encode",
]

PROTOCOL_VERSION: Final = 1
"""The protocol version this module speaks (PROTOCOL.md §1)."""

MAX_LINE_BYTES: Final = 64 * 1024
"""Longest line a bot may send, in bytes, not counting the ``\\n`` (PROTOCOL.md §2.3)."""

MAX_NESTING: Final = 16
"""Deepest nesting of arrays and objects in a bot line (PROTOCOL.md §2.3).

Bot messages are flat (one object of strings and integers); the limit is far above
that and far below the depth at which decoding would exhaust the Python stack.
"""

OptionValue = str | int | float | bool | None
"""A value of an engine option from the configuration."""

ShortText = Annotated[str, msgspec.Meta(min_length=1, max_length=100)]


# --------------------------------------------------------------------------- arbiter → bot


class _ToBotBase(msgspec.Struct, frozen=True, tag_field="type", kw_only=True):
    """Base of arbiter → bot messages.

    Unknown fields are *not* forbidden: the arbiter may add fields (always with a
    default) in a compatible revision, and a bot built on these types must keep
    working (PROTOCOL.md §2.5).
    """


class Hello(_ToBotBase, tag="hello", frozen=True, kw_only=True):
    """First message of a session; the bot answers with its own :class:`BotHello` (§3.1)."""

    protocol: int = PROTOCOL_VERSION
    """Protocol version the arbiter speaks."""
    options: dict[str, OptionValue] = {}
    """Engine options from the arbiter's configuration, passed through untouched."""


class NewGame(_ToBotBase, tag="new_game", frozen=True, kw_only=True):
    """A game starts; no reply (§3.3)."""

    game: str
    """Game id, unique in the tournament."""
    match: str
    """Id of the match (the series of games between the same two bots)."""
    game_number: int
    """Number of this game in its match, from 1; it selects the game's decks."""
    pair: int | None
    """Duplicate pair number (both games of a pair get the same decks), or null."""
    seat: int
    """Your seat for the whole game: 0 or 1."""
    opponent: str
    """The opponent's name (from its hello)."""
    first_dealer: int
    """Seat dealing the first deal."""
    rules: Rules
    """The rule set in force (the options of PROTOCOL.md §3.3)."""
    time_ms: int
    """Time allowed for each decision, in milliseconds."""
    clock_ms: int | None
    """Initial game clock per seat in milliseconds, or null when there is no clock."""


class Deal(_ToBotBase, tag="deal", frozen=True, kw_only=True):
    """A deal starts: your cards (private) and the turn-up; no reply (§3.4)."""

    deal: int
    """Number of the deal in this game, from 1."""
    dealer: int
    """Seat dealing this deal."""
    hand: list[str]
    """Your five cards, sorted by suit (S H D C) then rank."""
    turnup: str
    """The turned-up card; its suit is trumps."""
    scores: list[int]
    """Game points of seats 0 and 1 before this deal."""


class EventNotice(_ToBotBase, tag="event", frozen=True, kw_only=True):
    """One public event of the deal, sent to both seats; no reply (§3.5)."""

    event: GameEvent
    """The event, as in ``view.events``."""


class Hand(_ToBotBase, tag="hand", frozen=True, kw_only=True):
    """Your hand after your own exchange (private, to you only); no reply (§3.5)."""

    hand: list[str]
    """Your cards after discarding and drawing."""


class Request(_ToBotBase, tag="request", frozen=True, kw_only=True):
    """A decision: answer with an :class:`Action` echoing ``id`` in time (§3.6)."""

    id: int
    """Request id: counts the requests to this bot within a session (1, 2, ...); echo it."""
    time_ms: int
    """Time allowed for this decision, in milliseconds."""
    clock_ms: int | None
    """Your remaining game clock in milliseconds, or null when there is no clock."""
    view: Observation
    """Your full current view; ``view.legal`` lists the legal actions."""

    @property
    def legal(self) -> list[str]:
        """The legal actions, in notation (a shortcut for ``view.legal``)."""
        return self.view.legal


class DealEnd(_ToBotBase, tag="deal_end", frozen=True, kw_only=True):
    """A deal is over (after its fifth trick, or cut short by the game's end) (§3.7)."""

    deal: int
    """Number of the deal that ended."""
    complete: bool
    """False when the game ended before the fifth trick (e.g. on a king)."""
    tricks: list[int]
    """Tricks won in this deal by seats 0 and 1."""
    points: list[int]
    """Points scored in this deal by seats 0 and 1 (king points included)."""
    scores: list[int]
    """Game points of seats 0 and 1 after this deal."""


class GameEnd(_ToBotBase, tag="game_end", frozen=True, kw_only=True):
    """The game is over; no reply (§3.8)."""

    game: str
    """Game id."""
    winner: int | None
    """Winning seat, or null when the arbiter aborted the game."""
    reason: Literal["target", "forfeit", "aborted"]
    """Why it ended: a seat reached the target, the opponent forfeited, or an arbiter error."""
    scores: list[int]
    """Game points of seats 0 and 1 at the end."""


class Forfeit(_ToBotBase, tag="forfeit", frozen=True, kw_only=True):
    """You faulted and lose the game; sent to the offender just before it is stopped (§6)."""

    game: str
    """Game id, or empty outside a game (a failed handshake)."""
    reason: FaultReason
    """The fault."""
    detail: str
    """Human explanation, e.g. the decoding error or why the action is illegal."""


class Quit(_ToBotBase, tag="quit", frozen=True, kw_only=True):
    """The session is over: exit within 2 seconds (§3.9)."""


ToBot = Hello | NewGame | Deal | EventNotice | Hand | Request | DealEnd | GameEnd | Forfeit | Quit
"""Any arbiter → bot message."""


# --------------------------------------------------------------------------- bot → arbiter


class _FromBotBase(
    msgspec.Struct, frozen=True, tag_field="type", forbid_unknown_fields=True, kw_only=True
):
    """Base of bot → arbiter messages.

    Unknown fields are forbidden: a typo in a bot (``"acton"``) must fail loudly with
    a path at once rather than be ignored and time out later (PROTOCOL.md §2.5).
    """


class BotHello(_FromBotBase, tag="hello", frozen=True, kw_only=True):
    """The bot's answer to the arbiter's :class:`Hello`: who it is, the protocol it speaks."""

    name: ShortText
    """Engine name (1-100 characters)."""
    author: ShortText
    """Author (1-100 characters)."""
    version: ShortText
    """Engine version (1-100 characters)."""
    protocol: int
    """Protocol version the bot speaks; must be 1."""


class Action(_FromBotBase, tag="action", frozen=True, kw_only=True):
    """The bot's answer to a :class:`Request`."""

    id: int
    """The ``id`` of the request answered."""
    action: str
    """One of the request's ``view.legal``, e.g. ``"KS"``, ``"propose"``, ``"discard 7H 8C"``."""


FromBot = BotHello | Action
"""Any bot → arbiter message."""

_FROM_BOT_TAGS: Final = {"hello": BotHello, "action": Action}


# --------------------------------------------------------------------------- codec

_encoder: Final = msgspec.json.Encoder()
_from_bot_decoder: Final[msgspec.json.Decoder[FromBot]] = msgspec.json.Decoder(FromBot)
_to_bot_decoder: Final[msgspec.json.Decoder[ToBot]] = msgspec.json.Decoder(ToBot)
_any_decoder: Final = msgspec.json.Decoder()


def encode(message: ToBot | FromBot) -> bytes:
    """One wire line: the message as compact JSON followed by ``\\n``."""
    return _encoder.encode(message) + b"\n"


def decode_to_bot(line: bytes | str) -> ToBot:
    """Decode an arbiter → bot line, ignoring unknown fields at any depth (PROTOCOL.md §2.5).

    Raises ``msgspec.DecodeError``/``msgspec.ValidationError`` for a line that is not a
    message of a known type with its fields (see :func:`decode_known_to_bot` to skip
    messages of unknown types instead).
    """
    message = decode_known_to_bot(line)
    if message is None:
        raise msgspec.ValidationError("a message of an unknown type")
    return message


def decode_known_to_bot(line: bytes | str) -> ToBot | None:
    """:func:`decode_to_bot`, but None for a message of an unknown type (§2.5: a bot ignores
    it).  The typed decoder runs first; only a line it refuses is pruned and decoded again."""
    try:
        return _to_bot_decoder.decode(line)
    except msgspec.ValidationError:
        pass  # the slow path below: a newer arbiter's fields or message types
    pruned = _prune(_any_decoder.decode(line), _TO_BOT_INFO)
    if pruned is _UNKNOWN:
        return None
    result: ToBot = msgspec.convert(pruned, ToBot)
    return result


_TO_BOT_INFO: Final = msgspec.inspect.type_info(ToBot)
_UNKNOWN: Final = object()


def _prune(value: Any, info: msgspec.inspect.Type) -> Any:
    """``value`` without the object keys (and tagged union members) ``info`` does not know."""
    if isinstance(info, msgspec.inspect.UnionType):
        if isinstance(value, dict):
            structs = [t for t in info.types if isinstance(t, msgspec.inspect.StructType)]
            if structs:
                for t in structs:
                    if t.tag_field is not None and value.get(t.tag_field) == t.tag:
                        return _prune(value, t)
                if structs[0].tag_field is not None:
                    return _UNKNOWN
        for member in info.types:  # e.g. ``list[str] | None``
            if isinstance(member, msgspec.inspect.StructType | msgspec.inspect.ListType):
                return _prune(value, member)
        return value
    if isinstance(info, msgspec.inspect.StructType) and isinstance(value, dict):
        fields = {f.encode_name: f.type for f in info.fields}
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key == info.tag_field:
                out[key] = item
            elif key in fields:
                out[key] = _prune(item, fields[key])
        return out
    if isinstance(info, msgspec.inspect.ListType) and isinstance(value, list):
        items = [_prune(v, info.item_type) for v in value]
        return [v for v in items if v is not _UNKNOWN]
    return value


def decode_from_bot(line: bytes) -> FromBot:
    """Decode one line received from a bot, strictly; raise :class:`InvalidMessage` if bad.

    ``line`` may still end with its ``\\n`` (and a ``\\r`` before it).  Beyond the
    types, a line must not nest deeper than :data:`MAX_NESTING`, repeat a key, or
    hold a control character in a string (PROTOCOL.md §2.3).  The fast path is one
    typed decode and two cheap scans; only a failure or a suspect line pays for the
    diagnosis.  No other exception leaves this function for any input that fits in
    memory: a hostile line is the bot's fault, never an arbiter error.  The exception
    holds no ``line`` (its text is the whole explanation); a well-formed message that
    is not the expected one is the referee's business, not this function's.
    """
    if line.endswith(b"\n"):
        line = line[:-1]
    if line.endswith(b"\r"):
        line = line[:-1]
    if len(line) > MAX_LINE_BYTES:
        raise InvalidMessage(
            f"line too long: {len(line)} bytes, the limit is {MAX_LINE_BYTES} bytes"
        )
    try:
        message = _from_bot_decoder.decode(line)
    # RecursionError: msgspec may recurse while skipping a deep value (before the tag).
    except (
        msgspec.DecodeError,
        msgspec.ValidationError,
        UnicodeDecodeError,
        RecursionError,
    ) as exc:
        raise InvalidMessage(_diagnose_safely(line, exc)) from None
    # The hot path is "action": one comma count and one isprintable() call.  A decoded
    # message is one flat object, so it can only repeat a key if it has more pairs,
    # hence more commas, than its required fields need; isprintable() is false for
    # every forbidden character (and for a few allowed ones, e.g. U+00A0).
    if type(message) is Action:
        if line.count(b",") >= _ACTION_PAIRS:
            _check_duplicate_keys(line, "action")
        if not message.action.isprintable():
            _check_characters(message)
    else:
        _check_duplicate_keys(line, "hello")
        _check_characters(message)
    return message


_ACTION_PAIRS: Final = 1 + len(Action.__struct_fields__) - len(Action.__struct_defaults__)
"""Pairs (with "type") in an ``action`` message that sends only its required fields."""

_FORBIDDEN_CHARS: Final = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
"""Characters no string from a bot may hold: C0 and C1 controls, DEL, bidi overrides."""


def _check_characters(message: FromBot) -> None:
    """Raise :class:`InvalidMessage` naming the first string field with a forbidden character."""
    for name in message.__struct_fields__:
        value = getattr(message, name)
        if isinstance(value, str) and (m := _FORBIDDEN_CHARS.search(value)) is not None:
            kind = message.__struct_config__.tag
            what = "bidirectional control" if ord(m[0]) > 0x9F else "control character"
            raise InvalidMessage(
                f'invalid value at $.{name} in "{kind}" message: {what} '
                f"U+{ord(m[0]):04X} at index {m.start()} (strings must not contain "
                "control characters)"
            )


def _check_duplicate_keys(line: bytes, kind: str) -> None:
    """Raise :class:`InvalidMessage` if the (decoded, flat) object repeats a key."""

    def pairs_hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise InvalidMessage(f'duplicate key "{key}" in "{kind}" message')
            seen.add(key)
        return dict(pairs)

    try:
        # The line already decoded as a flat message of strings and small integers;
        # parse_int keeps the stdlib's digit limit out of the way all the same.
        json.loads(line, object_pairs_hook=pairs_hook, parse_int=len)
    except (ValueError, RecursionError) as exc:  # not expected: msgspec accepted it
        raise InvalidMessage(f"malformed JSON: {exc}") from None


def _nesting_error(line: bytes) -> str | None:
    """The error text if arrays and objects nest deeper than :data:`MAX_NESTING`."""
    if line.count(b"[") + line.count(b"{") <= MAX_NESTING:
        return None
    brackets = _STRING.sub(b"", line).translate(None, _NOT_BRACKET)
    if max(accumulate(map(_DEPTH_STEP.__getitem__, brackets)), default=0) <= MAX_NESTING:
        return None
    return f"JSON nested deeper than {MAX_NESTING} levels (bot messages are flat objects)"


# A JSON string, or an unterminated one running to the end of the line.
_STRING: Final = re.compile(rb'"(?:[^"\\]|\\.)*(?:"|\Z)', re.S)
_NOT_BRACKET: Final = bytes(b for b in range(256) if b not in b"[]{}")
_DEPTH_STEP: Final = {ord("["): 1, ord("{"): 1, ord("]"): -1, ord("}"): -1}


def _diagnose_safely(line: bytes, exc: Exception) -> str:
    """:func:`_diagnose`, falling back to the decoder's own text if the diagnosis fails.

    Whatever the line, the caller raises :class:`InvalidMessage`: an exception here
    would abort the game as an arbiter error, and the bot would never be charged.
    """
    try:
        return _diagnose(line, exc)
    except Exception:
        return f"invalid message: {_plain(str(exc))}"


_JSON_KINDS: Final = {
    list: "an array",
    str: "a string",
    int: "a number",
    float: "a number",
    bool: "a boolean",
    type(None): "null",
}
_EXPECTED_TYPES: Final = '"hello" or "action"'


def _diagnose(line: bytes, exc: Exception) -> str:
    """The bot-author-facing text for a line the typed decoder rejected."""
    if not line.strip():
        return "empty line: every line must hold exactly one JSON object"
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as err:  # msgspec's offsets are relative to one string
        return f"not valid UTF-8: byte 0x{line[err.start]:02x} at offset {err.start}"
    if (nested := _nesting_error(line)) is not None:
        return nested
    try:
        raw: Any = _any_decoder.decode(line)
    except RecursionError:  # not expected after the nesting check
        return f"JSON nested deeper than {MAX_NESTING} levels (bot messages are flat objects)"
    except msgspec.DecodeError as err:
        text = str(err)
        if text == "Input data was truncated":
            text = "the line ends in the middle of a JSON value"
        elif text.startswith("JSON is malformed: "):
            text = text[len("JSON is malformed: ") :]
        return f"malformed JSON: {text}"
    except msgspec.ValidationError as err:  # e.g. a number too large for a float
        return f"malformed JSON: {_plain(str(err))}"
    if not isinstance(raw, dict):
        kind = _JSON_KINDS.get(type(raw), type(raw).__name__)
        return f'expected a JSON object with a "type" field, got {kind}'
    if "type" not in raw:
        return f'missing field "type": a bot sends {_EXPECTED_TYPES}'
    kind = raw["type"]
    if not isinstance(kind, str):
        return f'field "type" must be a string ({_EXPECTED_TYPES}), got {_JSON_KINDS[type(kind)]}'
    cls = _FROM_BOT_TAGS.get(kind)
    if cls is None:
        return f'unknown message type "{kind}": a bot sends {_EXPECTED_TYPES}'
    text = str(exc)
    if text.startswith("Object contains unknown field `"):
        field = text[len("Object contains unknown field `") :].split("`")[0]
        allowed = ", ".join(f'"{f}"' for f in cls.__struct_fields__)
        return f'unknown field "{field}" in "{kind}" message (its fields: {allowed})'
    if text.startswith("Object missing required field `"):
        field = text[len("Object missing required field `") :].split("`")[0]
        return f'missing field "{field}" in "{kind}" message'
    message, sep, where = text.rpartition(" - at `")
    if sep:
        path = where.rstrip("`")
        message = _plain(message)
        if message.startswith("expected ") and ", got " in message:
            return f'wrong type at {path} in "{kind}" message: {message}'
        return f'invalid value at {path} in "{kind}" message: {message}'
    return f'invalid "{kind}" message: {_plain(text)}'


def _plain(text: str) -> str:
    """A msgspec message without backticks and with a lower-case first letter."""
    text = text.replace("`", "")
    return text[:1].lower() + text[1:]
