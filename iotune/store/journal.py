"""The measurement store: an append-only JSON-lines file, one record per measurement.

Why not SQLite: its locking is unreliable on NFS and Lustre, where batch jobs keep their
files. Appends here hold the store's lock (a lock file created with ``O_EXCL``, which needs
no working ``fcntl`` locks across nodes; see :mod:`iotune.store.lock`), write one whole line
with ``O_APPEND`` and ``fsync`` before returning, so a record is either fully on disk or
absent. A line cut short by a crash (``kill -9`` mid-write) is ignored on read and
sealed with a newline by the next append, so later records stay readable. Readers skip
damaged lines and duplicate records and say which (:mod:`iotune.store.damage`); a file
with bytes but no record is not a journal (:func:`check_journal_head`).

A store path is a ``.jsonl`` file or a directory holding ``measurements.jsonl``; a symbolic
link is followed, so every path to one file is one store (:mod:`iotune.store.location`).

The journal is the only truth. Readers (``tune``, ``train``, ``results``, ``report``) go
through a cache derived from it, a directory beside the journal named after it with
``.cache`` added (``store.jsonl.cache/``, or ``measurements.jsonl.cache/`` in a store
directory): columnar segment files, each covering a byte range of the journal and
partitioned by kernel, backend and campaign, so a reader loads only what it asks for. A
reader brings the cache up to date by parsing only the journal bytes after what it covers,
rebuilds it when the journal was replaced, truncated or rewritten, and never needs it:
deleting the directory costs one full parse. See :mod:`iotune.store.cache`.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from iotune.errors import StoreError
from iotune.store.damage import DAMAGED, DUPLICATE, Damage, id_digest, notice, parse_line
from iotune.store.location import (
    check_store_file,
    check_store_home,
    is_directory_store,
    resolve_store_path,
)
from iotune.store.lock import JournalLock, fcntl_locked

SCHEMA_VERSION = 1
#: Bytes at the head of a file looked at to tell whether it is a journal.
HEAD_CHECK_BYTES = 1 << 20


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


class Store:
    """Append-only access to one store file; safe for several processes appending at once.

    ``path`` (the store path as given) leads to :attr:`path`, the journal file, through any
    symbolic link at its end; the lock and every side file belong to that file. StoreError
    at once when the journal exists but is not a regular file (a named pipe, a device):
    nothing is opened before this check."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.given = Path(path)
        self.path = resolve_store_path(path)
        check_store_file(self.given, self.path)
        self.lock = JournalLock(self.path)
        self._checked = False

    def check_writable(self) -> Store:
        """This store, once sure it can be written where it is named: StoreError unless
        the directory it goes in exists (:func:`~iotune.store.location.check_store_home`).
        Commands that record call it before they start anything; :meth:`exclusive` calls it
        again, so no write ever creates the directories above a store."""
        check_store_home(self.given, self.path)
        return self

    def exclusive(self) -> AbstractContextManager[None]:
        """Hold the store's lock for a block: no other process appends meanwhile, and
        :meth:`append` inside the block does not wait for it again. For a decision that
        must see every record written before it (claiming a run)."""
        self.check_writable()
        if is_directory_store(self.given):
            try:
                self.path.parent.mkdir(exist_ok=True)
            except OSError as exc:
                raise StoreError(f"store {self.given}: cannot create the store directory: "
                                 f"{exc.strerror}") from None
        return self.lock.held()

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Write ``record`` (adding ``schema_version``, ``id`` and ``recorded_at``) durably.

        The line is written with its keys sorted, at every depth, so equal records are
        equal lines: a mapping's order does not survive the journal, and a writer whose
        order matters records a list (per-file settings:
        :func:`iotune.tuned.serial_configuration`). Returns the record as written.
        Raises StoreError when the file cannot be written.
        """
        full = {"schema_version": SCHEMA_VERSION, "id": uuid.uuid4().hex, **record,
                "recorded_at": now_iso()}
        line = (json.dumps(full, sort_keys=True, default=str) + "\n").encode()
        if not self._checked:  # never append to a file that is not a journal
            check_journal_head(self.path)
            self._checked = True
        with self.exclusive():
            self._append_line(line)
        return full

    def _append_line(self, line: bytes) -> None:
        try:
            append_durably(self.path, line)
        except OSError as exc:
            raise StoreError(f"store {self.path}: cannot append: {exc.strerror}") from None

    def records(self) -> list[dict[str, Any]]:
        """Every complete record in file order; a torn or foreign line is skipped."""
        return list(self.iter_records())

    def iter_records(self) -> Iterator[dict[str, Any]]:
        """Every complete record in file order, read as the file is walked (small memory).

        Damaged lines and duplicate records (:mod:`iotune.store.damage`) are skipped, and
        told to :func:`~iotune.store.damage.notice` once the walk is done. StoreError when
        the file is not a journal at all (:func:`check_journal_head`)."""
        check_journal_head(self.path)
        seen: set[bytes] = set()
        skipped: list[tuple[int, str]] = []
        number = end = 0
        for record, after in journal_lines(self.path):
            number, end = number + 1, after
            if record is None:
                skipped.append((number, DAMAGED))
                continue
            digest = id_digest(record)
            if digest is not None:
                if digest in seen:
                    skipped.append((number, DUPLICATE))
                    continue
                seen.add(digest)
            yield record
        torn = self.path.exists() and self.path.stat().st_size > end
        notice(self.path, "store", Damage.of(skipped, number + 1 if torn else None))

    def records_after(self, offset: int) -> tuple[list[dict[str, Any]], int]:
        """The complete records whose lines start at or after byte ``offset``, and the byte
        where the next look should start (after the last complete line)."""
        return records_from(self.path, offset)

    def exists(self) -> bool:
        return self.path.exists()


def journal_lines(path: Path, offset: int = 0) -> Iterator[tuple[dict[str, Any] | None, int]]:
    """Each complete line of a JSON-lines journal from byte ``offset``: its record (None for
    a foreign or unparsable line) and the byte after it. A torn last line (a crashed
    writer's) ends the walk."""
    if not path.exists():
        return
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise StoreError(f"store {path}: cannot read: {exc.strerror}") from None
    with handle:
        handle.seek(offset)
        for raw in handle:
            if not raw.endswith(b"\n"):
                break
            offset += len(raw)
            yield parse_line(raw[:-1])[0], offset


def check_journal_head(path: Path) -> None:
    """StoreError unless ``path`` is absent, empty, or a journal: one of the complete lines
    in its first :data:`HEAD_CHECK_BYTES` is a record, or it has no complete line there and
    starts as a record does (a first line being written). A binary file, or a JSON or CSV
    file given as a store, is refused so that no reader takes it for "no measurements" and
    no writer appends to it."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_CHECK_BYTES)
    except FileNotFoundError:
        return
    except IsADirectoryError:
        raise StoreError(f"store {path}: is a directory, not a JSON-lines file") from None
    except OSError as exc:
        raise StoreError(f"store {path}: cannot read: {exc.strerror}") from None
    lines = head.split(b"\n")[:-1]
    if not lines:
        if not head.strip() or head.lstrip().startswith(b"{"):
            return
        raise StoreError(f"store {path}: not an iotune store (JSON lines of records): it "
                         f"does not start with a record")
    reasons = []
    for raw in lines:
        record, reason = parse_line(raw)
        if record is not None:
            return
        reasons.append(reason)
    raise StoreError(f"store {path}: not an iotune store (JSON lines of records): none of "
                     f"its first {len(lines)} line{'s' if len(lines) > 1 else ''} is a "
                     f"record (line 1: {reasons[0]})")


def records_from(path: Path, offset: int) -> tuple[list[dict[str, Any]], int]:
    """The complete records of a journal from byte ``offset`` (see :func:`journal_lines`)
    and the byte after the last complete line."""
    read = read_from(path, offset)
    return read.records, read.end


@dataclass
class LinesRead:
    """What :func:`read_from` read: the records, the byte after the last complete line,
    the number of complete lines, the line numbers of the damaged ones and of the
    records."""

    records: list[dict[str, Any]]
    end: int
    lines: int
    damaged: list[int]
    numbers: list[int]


def read_from(path: Path, offset: int, first_line: int = 0) -> LinesRead:
    """The complete lines of a journal from byte ``offset``, which starts line number
    ``first_line`` (from 0): their records, and the numbers of the lines that are not
    records (:func:`~iotune.store.damage.parse_line`)."""
    read = LinesRead([], offset, 0, [], [])
    for record, end in journal_lines(path, offset):
        read.end = end
        read.lines += 1
        if record is None:
            read.damaged.append(first_line + read.lines)
        else:
            read.records.append(record)
            read.numbers.append(first_line + read.lines)
    return read


def append_durably(path: Path, line: bytes) -> None:
    """Append one newline-ended ``line`` to ``path`` and ``fsync`` it; the caller holds the
    store's lock (:meth:`Store.exclusive`, which also made sure its directory exists). A
    torn last line left by a crashed writer is sealed with a newline first, so this line
    stays readable. Raises OSError."""
    # Opened while the lock is held, so NFS shows the file's current end. Read-write so the
    # last byte is read through this descriptor: opening the file again and closing it would
    # drop this process's lockf lock (POSIX locks belong to the process and file, and any
    # close releases them).
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        with fcntl_locked(fd):
            if _ends_without_newline(fd):
                line = b"\n" + line
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
    finally:
        os.close(fd)  # closing releases the fcntl lock; the lock file goes after


def _ends_without_newline(fd: int) -> bool:
    """True when the file behind ``fd`` is not empty and its last byte is not a newline."""
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"
