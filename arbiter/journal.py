"""The results journal: one game record per line of ``OUT/games.jsonl``.

A game counts only once its line is written, flushed and fsync'ed.  Because a
crash or a power cut can only cut the *last* line short, reading tolerates exactly
that case: a final line that is not valid JSON (or lacks its newline) is dropped
with a warning and the file is truncated back to the last whole record before new
games are appended.  A bad line anywhere else is real damage and an error naming
the file and the line.  A record that cannot be written (a full disk) is cut back
out of the file and raises :class:`JournalError`: the records before it stay whole.
A record of the older format (with the seed itself instead of
``seed_sha256``, and decks from the older deck function) is an error wherever it is:
such a journal is never truncated or mixed with new games.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from arbiter.record import GameRecord

__all__ = ["Journal", "JournalError", "JournalRead", "read_journal"]

_decoder = msgspec.json.Decoder(GameRecord)
_encoder = msgspec.json.Encoder()


class JournalError(ValueError):
    """A journal that cannot be used: damaged in the middle, unreadable, or unwritable.

    Raised by :func:`read_journal` and by :meth:`Journal.append` (any ``OSError``, e.g.
    a full disk); its text names the file.  Not raised for a truncated last line,
    which :func:`read_journal` drops with a warning.
    """


@dataclass
class JournalRead:
    """What :func:`read_journal` found."""

    records: list[GameRecord]
    """Whole records, in file order."""
    good_bytes: int
    """Length of the file up to the end of the last whole record."""
    warnings: list[str] = field(default_factory=list)
    """Things dropped (a truncated last line)."""


def _older_record(chunk: bytes) -> bool:
    """Whether a line that is not a valid record is one of the pre-``seed_sha256`` format."""
    try:
        raw = msgspec.json.decode(chunk)
    except msgspec.DecodeError:
        return False
    return isinstance(raw, dict) and "seed" in raw and "seed_sha256" not in raw


def read_journal(path: Path) -> JournalRead:
    """Read a journal; a missing file is an empty journal."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return JournalRead([], 0)
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc.strerror}") from None
    records: list[GameRecord] = []
    warnings: list[str] = []
    pos = 0
    lineno = 0
    good = 0
    while pos < len(data):
        end = data.find(b"\n", pos)
        lineno += 1
        last = end < 0 or end == len(data) - 1
        chunk = data[pos:] if end < 0 else data[pos:end]
        if not chunk.strip():
            pos = len(data) if end < 0 else end + 1
            good = pos
            continue
        try:
            if end < 0:
                raise msgspec.DecodeError("no newline at the end of the last line")
            records.append(_decoder.decode(chunk))
        except (msgspec.DecodeError, msgspec.ValidationError) as exc:
            if isinstance(exc, msgspec.ValidationError) and _older_record(chunk):
                raise JournalError(
                    f"{path}:{lineno}: game record written by an older version of ecarte "
                    "(it holds the seed itself, not seed_sha256, and its decks came from an "
                    "older deck function): read or resume it with that version"
                ) from None
            if last:
                warnings.append(
                    f"{path}:{lineno}: dropped a truncated last record ({len(chunk)} bytes: {exc})"
                )
                break
            raise JournalError(
                f"{path}:{lineno}: damaged record in the middle of the journal: {exc}"
            ) from None
        pos = end + 1
        good = pos
    return JournalRead(records, good, warnings)


class Journal:
    """Append-only writer; every record is flushed and fsync'ed before it counts."""

    def __init__(self, path: Path, *, truncate_to: int | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Unbuffered: a write that failed leaves nothing behind for close() to retry.
        self._file = open(path, "ab", buffering=0)
        if truncate_to is not None and self._file.tell() != truncate_to:
            self._file.truncate(truncate_to)
            self._file.seek(truncate_to)

    def append(self, record: GameRecord) -> None:
        """Write one record durably; raise :class:`JournalError` if it cannot be written."""
        data = memoryview(_encoder.encode(record) + b"\n")
        start = self._file.tell()
        try:
            while data:
                written = self._file.write(data)
                data = data[written or 0 :]  # a short write (e.g. the disk filled up) goes on
            os.fsync(self._file.fileno())
        except OSError as exc:
            with contextlib.suppress(OSError):  # no half record left for a resume to drop
                os.ftruncate(self._file.fileno(), start)
                self._file.seek(start)
            raise JournalError(f"cannot write {self.path}: {exc.strerror or exc}") from None

    def close(self) -> None:
        """Close the file."""
        self._file.close()


def write_records(path: Path, records: Iterable[GameRecord]) -> None:
    """Write a whole journal at once (used by merge), atomically via a temporary file."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    with open(tmp, "wb") as f:
        for r in records:
            f.write(_encoder.encode(r) + b"\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
