"""The measurement store: an append-only JSON-lines file, one record per measurement.

Why not SQLite: its locking is unreliable on NFS and Lustre, where batch jobs keep their
files. Appends here take a POSIX record lock (``fcntl.lockf``, honoured by NFS lockd), write
one whole line with ``O_APPEND`` and ``fsync`` before returning, so a record is either fully
on disk or absent. A line cut short by a crash (``kill -9`` mid-write) is ignored on read and
sealed with a newline by the next append, so later records stay readable.

A store path is a ``.jsonl`` file or a directory holding ``measurements.jsonl``.

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

import fcntl
import json
import os
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from iotune.errors import StoreError

SCHEMA_VERSION = 1
STORE_FILE_NAME = "measurements.jsonl"

#: Human words for where a number came from; every record carries one.
PROVENANCE = {"mpi": "measured", "sim": "simulated", "replay": "replayed"}


def now_iso() -> str:
    """The current UTC time as an ISO 8601 string with seconds."""
    return datetime.now(UTC).isoformat(timespec="seconds")


def resolve_store_path(path: str | os.PathLike[str]) -> Path:
    """The JSON-lines file behind a store path (a ``.jsonl`` file or a directory)."""
    p = Path(path)
    if p.is_dir() or (not p.suffix and not p.exists()):
        return p / STORE_FILE_NAME
    return p


class Store:
    """Append-only access to one store file; safe for several processes appending at once."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = resolve_store_path(path)

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Write ``record`` (adding ``schema_version``, ``id`` and ``recorded_at``) durably.

        Returns the record as written. Raises StoreError when the file cannot be written.
        """
        full = {"schema_version": SCHEMA_VERSION, "id": uuid.uuid4().hex, **record,
                "recorded_at": now_iso()}
        line = (json.dumps(full, sort_keys=True, default=str) + "\n").encode()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # Read-write so the last byte is read through this descriptor: opening the file
            # again and closing it would drop this process's lockf lock (POSIX locks belong to
            # the process and file, and any close releases them).
            fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise StoreError(
                f"store {self.path}: cannot open for appending: {exc.strerror}"
            ) from None
        try:
            fcntl.lockf(fd, fcntl.LOCK_EX)
            if _ends_without_newline(fd):
                line = b"\n" + line
            _write_all(fd, line)
            os.fsync(fd)
        except OSError as exc:
            raise StoreError(f"store {self.path}: write failed: {exc.strerror}") from None
        finally:
            os.close(fd)  # closing releases the lock
        return full

    def records(self) -> list[dict[str, Any]]:
        """Every complete record in file order; a torn or foreign line is skipped."""
        return list(self.iter_records())

    def iter_records(self) -> Iterator[dict[str, Any]]:
        if not self.path.exists():
            return
        try:
            handle = self.path.open("rb")
        except OSError as exc:
            raise StoreError(f"store {self.path}: cannot read: {exc.strerror}") from None
        with handle:
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break  # torn last line of a crashed writer
                try:
                    record = json.loads(raw)
                except ValueError:
                    continue
                if isinstance(record, dict) and "schema_version" in record:
                    yield record

    def exists(self) -> bool:
        return self.path.exists()


def _ends_without_newline(fd: int) -> bool:
    """True when the file behind ``fd`` is not empty and its last byte is not a newline."""
    size = os.fstat(fd).st_size
    return size > 0 and os.pread(fd, 1, size - 1) != b"\n"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]
