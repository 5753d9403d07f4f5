"""Tests of arbiter/journal.py: appending records durably, and a full disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from arbiter.journal import Journal, JournalError, read_journal
from arbiter.record import GameRecord, Termination
from arbiter.rules import make_rules
from tests.disk_helpers import fill_disk_after


def _record(game_id: int) -> GameRecord:
    return GameRecord(
        game_id=game_id,
        engines=["a", "b"],
        pair_id=None,
        deal_set=game_id,
        seed=1,
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
