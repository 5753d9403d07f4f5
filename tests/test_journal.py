"""Tests of arbiter/journal.py: appending records durably, a full disk, older formats."""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from arbiter import journal as journal_module
from arbiter.journal import Journal, JournalError, read_journal
from arbiter.record import DealRecord, GameRecord, Termination
from arbiter.rules import make_rules, seed_sha256
from tests.disk_helpers import fill_disk_after


def _record(game_id: int) -> GameRecord:
    return GameRecord(
        game_id=game_id,
        engines=["a", "b"],
        pair_id=None,
        deal_set=game_id,
        seed_sha256=seed_sha256(1),
        first_dealer=0,
        rules=make_rules(),
        deals=[],
        scores=[5, 2],
        winner=0,
        termination=Termination(reason="normal"),
    )


def test_appended_records_read_back(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    journal = Journal(path)
    for game_id in range(3):
        journal.append(_record(game_id))
    journal.close()
    found = read_journal(path)
    assert found.records == [_record(0), _record(1), _record(2)]
    assert found.warnings == [] and found.good_bytes == path.stat().st_size


def test_full_disk_is_a_journal_error_and_keeps_earlier_records_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "games.jsonl"
    fill_disk_after(monkeypatch, records_fit=2)
    journal = Journal(path)
    journal.append(_record(0))
    journal.append(_record(1))
    size = path.stat().st_size
    with pytest.raises(JournalError) as info:
        journal.append(_record(2))
    assert str(info.value) == f"cannot write {path}: No space left on device"
    journal.close()  # nothing left buffered to fail again
    assert path.stat().st_size == size  # the half-written record was cut back out
    found = read_journal(path)
    assert found.records == [_record(0), _record(1)] and found.warnings == []


def _line(game_id: int, *, old: bool = False) -> bytes:
    record = GameRecord(
        game_id=game_id,
        engines=["a", "b"],
        pair_id=None,
        deal_set=game_id,
        seed_sha256=seed_sha256(77),
        first_dealer=0,
        rules=make_rules(),
        deals=[DealRecord(number=1, dealer=0, deck=[], actions=[], tricks=[3, 2], points=[5, 0])],
        scores=[5, 0],
        winner=0,
        termination=Termination(reason="normal"),
    )
    raw = msgspec.to_builtins(record)
    if old:  # the format before seed_sha256: the seed itself
        del raw["seed_sha256"]
        raw["seed"] = 77
    return msgspec.json.encode(raw) + b"\n"


def test_new_records_read_back(tmp_path: Path) -> None:
    path = tmp_path / "games.jsonl"
    path.write_bytes(_line(0) + _line(1))
    assert [r.game_id for r in read_journal(path).records] == [0, 1]


@pytest.mark.parametrize("lines", [[True], [False, True], [True, False]], ids=str)
def test_older_records_are_an_error_naming_file_and_line(tmp_path: Path, lines: list[bool]) -> None:
    """Even as the last line: an old record is not mistaken for a truncated one."""
    path = tmp_path / "games.jsonl"
    data = b"".join(_line(i, old=old) for i, old in enumerate(lines))
    path.write_bytes(data)
    with pytest.raises(JournalError) as info:
        read_journal(path)
    assert f"{path}:{lines.index(True) + 1}: " in str(info.value)
    assert "written by an older version of ecarte" in str(info.value)
    assert path.read_bytes() == data


@pytest.mark.parametrize("last", [False, True], ids=["in-the-middle", "as-the-last-line"])
def test_an_enormous_line_is_refused_without_reading_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, last: bool
) -> None:
    monkeypatch.setattr(journal_module, "MAX_RECORD_BYTES", 4096)
    path = tmp_path / "games.jsonl"
    journal = Journal(path)
    journal.append(_record(0))
    journal.close()
    with path.open("ab") as f:
        f.write(b"x" * 4097 + (b"" if last else b"\n"))
        if not last:
            f.write(msgspec.json.encode(_record(1)) + b"\n")
    with pytest.raises(JournalError, match=r"games\.jsonl:2: line longer than 4096 bytes"):
        read_journal(path)


def test_a_line_of_exactly_the_cap_is_read_as_a_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    line = msgspec.json.encode(_record(0))
    monkeypatch.setattr(journal_module, "MAX_RECORD_BYTES", len(line))
    path = tmp_path / "games.jsonl"
    path.write_bytes(line + b"\n" + line + b"\n")
    assert read_journal(path).records == [_record(0), _record(0)]
