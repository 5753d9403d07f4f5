"""Tests of protocol/faults.py: one closed list of fault reasons, one exception each,
and every list of reasons elsewhere (wire schema, record type, documents) is that one."""

from __future__ import annotations

import json
import re
import typing
from pathlib import Path

import pytest

from arbiter import faults as arbiter_faults
from arbiter.record import TERMINATION_REASONS, TerminationReason
from protocol import faults
from protocol.faults import BotFault, FaultReason
from protocol.schema import SCHEMA_PATHS

ROOT = Path(__file__).resolve().parents[1]
REASONS = {reason.value for reason in FaultReason}
OTHER_ENDINGS = {"normal", "withdrawn", "match_forfeit"}


def _table_reasons(path: Path, heading: str) -> set[str]:
    """The first column of the first table after ``heading`` in a Markdown file."""
    text = path.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            rows.append(line)
        elif rows:
            break
    return {m[1] for row in rows[2:] if (m := re.match(r"\| `(\w+)` \|", row))}


def test_every_reason_has_exactly_one_exception() -> None:
    subclasses = [
        cls
        for cls in vars(faults).values()
        if isinstance(cls, type) and issubclass(cls, BotFault) and cls is not BotFault
    ]
    assert sorted(cls.reason for cls in subclasses) == sorted(FaultReason)


def test_the_arbiter_names_the_protocol_family() -> None:
    """arbiter.faults re-exports the one family; it defines no fault of its own."""
    for name in faults.__all__:
        assert getattr(arbiter_faults, name) is getattr(faults, name)


def test_termination_reasons_are_the_faults_and_three_more() -> None:
    assert typing.get_args(TerminationReason) == TERMINATION_REASONS
    assert set(TERMINATION_REASONS) == REASONS | OTHER_ENDINGS
    assert len(TERMINATION_REASONS) == len(REASONS) + len(OTHER_ENDINGS)


@pytest.mark.parametrize(
    "where",
    ["schema-to-bot.json", "README.md Faults", "PROTOCOL.md §6"],
)
def test_every_list_of_fault_reasons_is_the_one_list(where: str) -> None:
    """The wire schema and both documents list exactly :class:`FaultReason`."""
    if where == "schema-to-bot.json":
        schema = json.loads(SCHEMA_PATHS["to-bot"].read_text(encoding="utf-8"))
        listed = set(schema["$defs"]["Forfeit"]["properties"]["reason"]["enum"])
    elif where == "README.md Faults":
        listed = _table_reasons(ROOT / "README.md", "## Faults")
    else:
        listed = _table_reasons(ROOT / "PROTOCOL.md", "## §6 Faults")
    assert listed == REASONS


def test_a_fault_keeps_a_short_line() -> None:
    fault = faults.InvalidMessage("bad", line=b"x" * 1000)
    assert fault.reason is FaultReason.INVALID_MESSAGE
    assert fault.line == b"x" * faults.MAX_LINE_IN_FAULT
    assert str(faults.IllegalAction("no")) == "no"
