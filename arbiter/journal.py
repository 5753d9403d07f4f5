"""The results journal: one game record per line of ``OUT/games.jsonl``.

A game counts only once its line is written, flushed and fsync'ed.  Because a
crash or a power cut can only cut the *last* line short, reading tolerates exactly
that case: a final line that is not valid JSON (or lacks its newline) is dropped
with a warning and the file is truncated back to the last whole record before new
games are appended.  A bad line anywhere else is real damage and an error naming
the file and the line.  A record that cannot be written (a full disk) is cut back
out of the file and raises :class:`JournalError`: the records before it stay whole.
A record of the older format (with the seed itself instead of ``seed_sha256``, and
decks from the older deck function) is an error wherever it is: such a journal is never
truncated or mixed with new games.  So is a line longer than
:data:`MAX_RECORD_BYTES`, even the last: no crash writes that much, and the reader
never holds more of it.

Bots are hostile programs and may be able to write to the journal, so a journal is
read as untrusted input: :func:`checked_entries` re-referees every record, refuses a
game id seen twice and lets the caller add its own checks (the tournament compares
each record with its schedule).  Reading streams: one line is decoded, checked and
handed on at a time, so memory does not grow with the journal.

Everything the arbiter writes under ``OUT/`` is owner-only (files 0600, directories
0700) whatever the umask: records show every card of every deal.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO, Final, NamedTuple

import msgspec

from arbiter.record import GameRecord, RecordError, rereferee

__all__ = [
    "MAX_RECORD_BYTES",
    "Entry",
    "Journal",
    "JournalError",
    "JournalRead",
    "JournalReader",
    "checked_entries",
    "digest",
    "encode_record",
    "make_private_dir",
    "open_private",
    "open_private_fd",
    "read_journal",
    "write_private",
    "write_records",
]

_decoder = msgspec.json.Decoder(GameRecord)
_encoder = msgspec.json.Encoder()


class JournalError(ValueError):
    """A journal that cannot be used: damaged in the middle, unreadable, or unwritable.

    Raised by :func:`read_journal` and by :meth:`Journal.append` (any ``OSError``, e.g.
    a full disk); its text names the file.  Not raised for a truncated last line,
    which :func:`read_journal` drops with a warning (unless it is longer than
    :data:`MAX_RECORD_BYTES`).
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


class Entry(NamedTuple):
    """One record of a journal and where it is."""

    line: int
    """Line number (1-based)."""
    offset: int
    """Byte offset of the line."""
    data: bytes
    """The line as stored, without its newline."""
    record: GameRecord
    """The decoded record."""


MAX_RECORD_BYTES: Final = 16 << 20
"""Longest journal line read (bytes): a whole game record is a few kilobytes."""


def _size_text(n: int) -> str:
    return f"{n >> 20} MiB" if n % (1 << 20) == 0 else f"{n} bytes"


class JournalReader:
    """Iterate over a journal's records one line at a time.

    A missing file is an empty journal.  After a complete iteration ``good_bytes`` is
    the length up to the end of the last whole record and ``warnings`` says what was
    dropped (a truncated last line).  Damage before the last line, and a line longer
    than :data:`MAX_RECORD_BYTES` anywhere, raises :class:`JournalError`.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.good_bytes = 0
        """Length of the file up to the end of the last whole record read so far."""
        self.warnings: list[str] = []
        """Things dropped (a truncated last line)."""

    def __iter__(self) -> Iterator[Entry]:
        try:
            f = open(self.path, "rb")
        except FileNotFoundError:
            return
        except OSError as exc:
            raise JournalError(f"cannot read {self.path}: {exc.strerror}") from None
        with f:
            pos = 0
            lineno = 0
            # Lines are read with a cap: a file that is no journal (or a damaged one)
            # may hold one enormous line, which must not be read into memory whole.
            while raw := f.readline(MAX_RECORD_BYTES + 1):
                lineno += 1
                if len(raw) > MAX_RECORD_BYTES and not raw.endswith(b"\n"):
                    raise JournalError(
                        f"{self.path}:{lineno}: line longer than {_size_text(MAX_RECORD_BYTES)}: "
                        "no game record is that long (is this a journal?)"
                    )
                start, pos = pos, pos + len(raw)
                chunk = raw.rstrip(b"\n")
                if not chunk.strip():
                    self.good_bytes = pos
                    continue
                try:
                    if not raw.endswith(b"\n"):
                        raise msgspec.DecodeError("no newline at the end of the last line")
                    record = _decoder.decode(chunk)
                except (msgspec.DecodeError, msgspec.ValidationError) as exc:
                    if isinstance(exc, msgspec.ValidationError) and _older_record(chunk):
                        raise JournalError(
                            f"{self.path}:{lineno}: game record written by an older version "
                            "of ecarte (it holds the seed itself, not seed_sha256, and its "
                            "decks came from an older deck function): read or resume it with "
                            "that version"
                        ) from None
                    if not f.read(1):  # the last line: cut short by a crash
                        self.warnings.append(
                            f"{self.path}:{lineno}: dropped a truncated last record "
                            f"({len(chunk)} bytes: {exc})"
                        )
                        return
                    raise JournalError(
                        f"{self.path}:{lineno}: damaged record in the middle of the journal: {exc}"
                    ) from None
                self.good_bytes = pos
                yield Entry(lineno, start, chunk, record)


def checked_entries(
    reader: JournalReader, check: Callable[[GameRecord], None] | None = None
) -> Iterator[Entry]:
    """The reader's entries, each re-refereed, then passed to ``check``.

    Raises :class:`JournalError` naming the file and line for a record that fails
    re-refereeing or ``check`` (which raises :class:`~arbiter.record.RecordError`),
    and for a game id already seen.  Not raised for a truncated last line (dropped
    with a warning by the reader).
    """
    first_line: dict[int, int] = {}
    for entry in reader:
        rec = entry.record
        where = f"{reader.path}:{entry.line}: game {rec.game_id}"
        seen = first_line.setdefault(rec.game_id, entry.line)
        if seen != entry.line:
            raise JournalError(f"{where} appears a second time (first on line {seen})")
        try:
            rereferee(rec)
            if check is not None:
                check(rec)
        except RecordError as exc:
            raise JournalError(f"{where} does not check out: {exc}") from None
        yield entry


def read_journal(path: Path) -> JournalRead:
    """Read a whole journal into memory (unchecked); a missing file is an empty journal."""
    reader = JournalReader(path)
    records = [e.record for e in reader]
    return JournalRead(records, reader.good_bytes, reader.warnings)


def digest(data: bytes) -> bytes:
    """A short fingerprint of a line, to recognise it again without keeping it."""
    return hashlib.blake2b(data, digest_size=16).digest()


class Journal:
    """Append-only writer; every record is flushed and fsync'ed before it counts."""

    def __init__(self, path: Path, *, truncate_to: int | None = None) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Unbuffered: a write that failed leaves nothing behind for close() to retry.
        self._file = open_private(path, os.O_WRONLY | os.O_APPEND, buffering=0)
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


def write_records(path: Path, lines: Iterable[bytes]) -> None:
    """Write a whole journal of encoded records at once (used by merge).

    Atomic via a temporary file; the journal is owner-only.
    """
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        with open_private(tmp, os.O_WRONLY | os.O_TRUNC) as f:
            for line in lines:
                f.write(line + b"\n")
            f.flush()
            os.fsync(f.fileno())
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    os.replace(tmp, path)


def encode_record(record: GameRecord) -> bytes:
    """A record as a journal line (without the newline)."""
    return _encoder.encode(record)


def open_private_fd(path: Path, flags: int) -> int:
    """``os.open`` of ``path`` created 0600, never through a symbolic link (a
    :class:`JournalError` names it)."""
    try:
        return os.open(path, flags | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise JournalError(
            f"{path} is a symbolic link: the arena does not write its files through one (remove it)"
        ) from None


def open_private(path: Path, flags: int, *, buffering: int = -1) -> BinaryIO:
    """Open ``path`` for binary writing, created (or re-moded) 0600 whatever the umask.

    A symbolic link in its place is refused (:class:`JournalError`): the arbiter never
    writes through one, which a bot might have planted to have a file of its choosing
    written (or the seed written where it can read it).
    """
    fd = open_private_fd(path, flags)
    try:
        os.fchmod(fd, 0o600)
        file: BinaryIO = os.fdopen(fd, "ab" if flags & os.O_APPEND else "wb", buffering=buffering)
        return file
    except BaseException:
        os.close(fd)
        raise


def write_private(path: Path, data: bytes) -> None:
    """Replace the content of ``path`` with ``data``; the file is owner-only."""
    with open_private(path, os.O_WRONLY | os.O_TRUNC) as f:
        f.write(data)


def make_private_dir(path: Path) -> None:
    """Create ``path`` (and missing parents) and make it 0700 if this call created it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir()
    except FileExistsError:
        if path.is_symlink():  # files made in it would land wherever the link leads
            raise JournalError(
                f"{path} is a symbolic link; the run's files are not written through one"
            ) from None
        return
    os.chmod(path, 0o700)  # mkdir's mode is filtered by the umask
