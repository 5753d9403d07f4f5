"""A full disk for the tests of the journal: a file whose writes start failing."""

from __future__ import annotations

import errno
import os
from typing import Any

import pytest

import arbiter.journal


class FullDisk:
    """Wraps an unbuffered file: ``records_fit`` writes go through, the next one writes
    half its bytes (what fitted) and every write after that fails with ENOSPC, as
    write(2) does when a disk fills up."""

    def __init__(self, file: Any, records_fit: int) -> None:
        self._file = file
        self._writes_left = records_fit
        self._full = False

    def write(self, data: Any) -> int:
        if self._full:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        if self._writes_left == 0:
            self._full = True
            return int(self._file.write(bytes(data[: len(data) // 2])))
        self._writes_left -= 1
        return int(self._file.write(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._file, name)


def fill_disk_after(monkeypatch: pytest.MonkeyPatch, records_fit: int) -> None:
    """Make every journal opened from now on run out of space after ``records_fit`` records."""
    real_open = arbiter.journal.open_private

    def open_on_full_disk(path: Any, *args: Any, **kwargs: Any) -> Any:
        file = real_open(path, *args, **kwargs)
        return FullDisk(file, records_fit) if str(path).endswith("games.jsonl") else file

    monkeypatch.setattr(arbiter.journal, "open_private", open_on_full_disk)
