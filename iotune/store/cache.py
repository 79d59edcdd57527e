"""The store cache: columnar segments derived from the journal, kept current by readers.

The journal (:mod:`iotune.store`) is the truth; the cache is a directory beside it named
after it with ``.cache`` added (``store.jsonl.cache/``; ``measurements.jsonl.cache/`` in a
store directory) holding segment files (:mod:`iotune.store.segments`), each covering the
complete lines of one byte range of the journal. Reading a store (:func:`open_snapshot`):

1. the segments chained from byte 0 are checked against the journal: same device and
   inode, journal at least as long as they cover, SHA-256 of its first bytes and of the
   last bytes of each segment's range unchanged. The first segment that fails (journal
   replaced, truncated or rewritten) and every one after it are dropped and removed;
2. the journal bytes after the last valid segment are parsed (in chunks of
   :data:`CHUNK_BYTES`, so memory stays bounded) and written as new segments, except a
   tail under :data:`MIN_SEGMENT_BYTES`, which is parsed again by the next reader
   (a small store has no cache at all); a torn last line is left for later;
3. the last two cached segments are merged (rebuilt from the journal as one) while they
   are of similar size and fit :data:`CHUNK_BYTES` together, so a journal that grows a
   little at a time is kept in a few files per chunk.

Every reader also says which lines it skipped: each segment keeps the line numbers of the
damaged lines and duplicate records of its range (:mod:`iotune.store.damage`), and
:func:`open_snapshot` tells them, with an incomplete last line, to
:func:`~iotune.store.damage.notice`. A duplicate is a record whose id an earlier line holds,
in this segment or (through their id digests) in any before it. A journal that has bytes
but not one record is not a store: StoreError.

The cache is never required: deleting it costs one full parse, a directory that cannot be
written means parsing in memory, and a segment that cannot be read is removed and rebuilt.
Writers write each file under a temporary name and rename it into place, so a crash leaves
at most a temporary file (ignored, removed after :data:`STALE_TEMP_S`), and two processes
extending the cache at once write the same ranges with the same content (or different
ranges, of which readers chain the longest). A reader keeps its segment files open, so one
removed by another process's merge stays readable to it.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.store.columns import Piece
from iotune.store.damage import Damage, notice
from iotune.store.journal import check_journal_head
from iotune.store.lock import beside
from iotune.store.segments import (
    MEASUREMENT,
    SEGMENT_ERRORS,
    TEMP_PREFIX,
    FileSegment,
    MemorySegment,
    Partition,
    SeenIds,
    Segment,
    build_segment,
    parse_segment_name,
    segment_name,
    write_segment,
)

#: A journal tail shorter than this is parsed on every read instead of being cached.
MIN_SEGMENT_BYTES = 1 << 20
#: Journal bytes parsed at once and the largest segment written.
CHUNK_BYTES = 32 << 20
#: Bytes hashed at the head of the journal and at the end of each segment's range.
HEAD_BYTES, TAIL_BYTES = 4096, 256
#: A temporary file older than this (seconds) is a crashed writer's and is removed.
STALE_TEMP_S = 3600.0


def cache_path(journal: str | os.PathLike[str]) -> Path:
    """The cache directory of the journal file ``journal``."""
    return beside(journal, ".cache")


@dataclass(frozen=True)
class Part:
    """One partition of one segment of a snapshot."""

    segment: Segment
    index: int
    info: Partition

    def piece(self, column: str) -> Piece:
        return self.segment.piece(self.index, column)


@dataclass
class Snapshot:
    """The records of a journal up to byte ``end``, as segments (from files or memory)."""

    journal: Path
    segments: list[Segment] = field(default_factory=list)
    #: Whether the journal had bytes after ``end`` (an incomplete last line).
    unfinished: bool = False

    @property
    def end(self) -> int:
        return self.segments[-1].end if self.segments else 0

    @property
    def lines(self) -> int:
        """Complete lines of the journal up to ``end``."""
        return self.segments[-1].first_line + self.segments[-1].lines if self.segments else 0

    @property
    def damage(self) -> Damage:
        """The lines skipped: damaged, duplicate, and an incomplete last one."""
        return Damage.of([item for s in self.segments for item in s.damage],
                         self.lines + 1 if self.unfinished else None)

    @property
    def records(self) -> int:
        return sum(s.records for s in self.segments)

    def release(self) -> None:
        """Let go of every column read from the segments so far (see
        :meth:`~iotune.store.segments.Segment.release`)."""
        for segment in self.segments:
            segment.release()

    def parts(self, kind: str | None = MEASUREMENT, *, kernel: str | None = None,
              backend: str | None = None, campaign: str | None = None) -> list[Part]:
        """The partitions of ``kind`` (None: of every kind) matching every given field, in
        journal order."""
        wanted = (kind, kernel, backend, campaign)
        return [Part(segment, i, info) for segment in self.segments
                for i, info in enumerate(segment.partitions)
                if all(w is None or w == k for w, k in zip(wanted, info.key, strict=True))]


def open_snapshot(journal: str | os.PathLike[str], *, use_cache: bool = True) -> Snapshot:
    """Every complete record of ``journal`` now, through its cache (brought up to date) or,
    with ``use_cache`` False, parsed from the journal alone. An absent journal is empty.

    The lines skipped are told to :func:`~iotune.store.damage.notice`. StoreError when the
    journal has bytes but no record (a binary or other file given as a store).
    """
    path = Path(journal)
    snapshot = None
    for _ in range(3):
        try:
            snapshot = _open(path, use_cache)
            break
        except FileNotFoundError:
            if not path.exists():
                return Snapshot(path)
            # a segment was removed by another process between listing and opening it
    if snapshot is None:
        snapshot = _open(path, use_cache=False)
    if snapshot.records == 0 and (snapshot.lines or snapshot.unfinished):
        check_journal_head(path)
    notice(path, "store", snapshot.damage)
    return snapshot


def _open(journal: Path, use_cache: bool) -> Snapshot:
    try:
        handle = journal.open("rb")
    except FileNotFoundError:
        return Snapshot(journal)
    with handle:
        fd = handle.fileno()
        stat = os.fstat(fd)
        cache = _Cache(cache_path(journal), fd, stat) if use_cache else None
        chain = cache.valid_chain() if cache else []
        segments: list[Segment] = list(chain)
        last = chain[-1] if chain else None
        for parsed in _parse(fd, stat.st_size, last, SeenIds(chain)):
            kept = cache.keep(parsed) if cache and parsed.size >= MIN_SEGMENT_BYTES else parsed
            segments.append(kept)
        if cache:
            segments = cache.merged(segments)
            cache.clean(segments)
    snapshot = Snapshot(journal, segments)
    snapshot.unfinished = stat.st_size > snapshot.end
    return snapshot


def _parse(fd: int, size: int, after: Segment | None, seen: SeenIds
           ) -> Iterator[MemorySegment]:
    """Segments of the complete lines of the journal after segment ``after`` (from its
    start when None), a chunk at a time; ``seen`` holds the segments before, and is given
    each new one."""
    position = after.end if after else 0
    seq = after.first_seq + after.records if after else 0
    line = after.first_line + after.lines if after else 0
    while position < size:
        length = min(CHUNK_BYTES, size - position)
        data = os.pread(fd, length, position)
        cut = data.rfind(b"\n")
        while cut < 0 and position + len(data) < size:  # a line longer than a chunk
            data += os.pread(fd, CHUNK_BYTES, position + len(data))
            cut = data.rfind(b"\n")
        if cut < 0:
            return  # only a torn last line is left
        segment = build_segment(data[: cut + 1], position, seq, line, seen)
        position, seq, line = segment.end, seq + segment.records, line + segment.lines
        seen.segments.append(segment)
        yield segment


class _Cache:
    """The cache directory of one open journal: validation, writing, merging, cleaning."""

    def __init__(self, directory: Path, fd: int, stat: os.stat_result) -> None:
        self.directory, self.fd, self.stat = directory, fd, stat
        self.writable = True
        self.files: dict[str, tuple[int, int]] = {}
        self.doomed: set[str] = set()
        self._hashes: dict[tuple[int, int], str] = {}

    def identity(self, segment: Segment) -> dict[str, Any]:
        head = min(HEAD_BYTES, segment.end)
        return {"dev": self.stat.st_dev, "ino": self.stat.st_ino, "head_len": head,
                "head_sha": self._sha(0, head),
                "tail_sha": self._sha(max(segment.start, segment.end - TAIL_BYTES),
                                      segment.end)}

    def _sha(self, start: int, end: int) -> str:
        key = (start, end)
        if key not in self._hashes:
            data = os.pread(self.fd, end - start, start)
            self._hashes[key] = hashlib.sha256(data).hexdigest()
        return self._hashes[key]

    def _matches(self, segment: Segment) -> bool:
        if segment.end > self.stat.st_size:
            return False
        try:
            return segment.identity == self.identity(segment)
        except OSError:
            return False

    def valid_chain(self) -> list[FileSegment]:
        """The segment files chained from byte 0 that still describe the journal."""
        try:
            names = os.listdir(self.directory)
        except OSError:
            return []
        for name in names:
            span = parse_segment_name(name)
            if span is not None:
                self.files[name] = span
            elif name.startswith("v") and name.endswith(".seg"):
                self.doomed.add(name)  # another format's
        by_start: dict[int, list[tuple[int, str]]] = {}
        for name, (start, end) in self.files.items():
            by_start.setdefault(start, []).append((end, name))
        chain: list[FileSegment] = []
        position, seq, line = 0, 0, 0
        while position in by_start:
            chosen, failed = None, False
            for end, name in sorted(by_start.pop(position), reverse=True):
                if chosen is not None or end > self.stat.st_size:
                    continue  # written by a reader that saw more of the journal than this one
                chosen = self._open(name, position, seq, line)
                if chosen is None:
                    self.doomed.add(name)
                    failed = True
            if chosen is None:
                if failed:  # the journal changed from here on: nothing cached beyond is valid
                    self.doomed.update(n for n, (start, _) in self.files.items()
                                       if start >= position)
                break
            chain.append(chosen)
            position, seq = chosen.end, seq + chosen.records
            line += chosen.lines
        return chain

    def _open(self, name: str, start: int, seq: int, line: int) -> FileSegment | None:
        try:
            segment = FileSegment(self.directory / name)
        except FileNotFoundError:
            raise
        except SEGMENT_ERRORS:
            return None
        if ((segment.start, segment.first_seq, segment.first_line) != (start, seq, line)
                or not self._matches(segment)):
            segment.close()
            return None
        return segment

    def keep(self, segment: MemorySegment) -> Segment:
        """Write ``segment`` to the cache if the directory allows; the segment as read back
        from its file (columns loaded when asked for, so memory stays bounded), else as
        given."""
        segment.identity = self.identity(segment)
        if not self.writable:
            return segment
        name = segment_name(segment.start, segment.end)
        try:
            self.directory.mkdir(exist_ok=True)
            write_segment(segment, self.directory / name)
        except OSError:
            self.writable = False
            return segment
        self.files[name] = (segment.start, segment.end)
        segment.stored = True
        try:
            return FileSegment(self.directory / name)
        except SEGMENT_ERRORS:
            return segment

    def merged(self, segments: list[Segment]) -> list[Segment]:
        """``segments`` with the last two cached ones rebuilt as one (from the journal) while
        they are of similar size and fit :data:`CHUNK_BYTES` together, as a binary counter
        carries: a chunk of journal written a little at a time ends in a few files."""
        while self.writable:
            stored = [i for i, s in enumerate(segments) if s.stored]
            if len(stored) < 2 or stored[-1] != stored[-2] + 1:
                return segments
            first, last = segments[stored[-2]], segments[stored[-1]]
            if first.size + last.size > CHUNK_BYTES or first.size > 2 * last.size:
                return segments
            data = os.pread(self.fd, last.end - first.start, first.start)
            merged = self.keep(build_segment(data, first.start, first.first_seq,
                                             first.first_line, SeenIds(segments[:stored[-2]])))
            if not merged.stored:
                return segments
            self.doomed.update(segment_name(s.start, s.end) for s in (first, last))
            segments = [*segments[:stored[-2]], merged, *segments[stored[-1] + 1:]]
        return segments

    def clean(self, segments: list[Segment]) -> None:
        """Remove segment files this chain supersedes or that failed, and stale temporary
        files; only files of the cache's own names, and never one the chain uses."""
        if not self.writable or not self.directory.is_dir():
            return
        used = {segment_name(s.start, s.end) for s in segments if s.stored}
        end = segments[-1].end if segments else 0
        doomed = set(self.doomed)
        doomed.update(name for name, (_, stop) in self.files.items() if stop <= end)
        for name in doomed - used:
            with contextlib.suppress(OSError):
                (self.directory / name).unlink()
        now = time.time()
        with contextlib.suppress(OSError):
            for entry in os.scandir(self.directory):
                if entry.name.startswith(TEMP_PREFIX):
                    with contextlib.suppress(OSError):
                        if now - entry.stat().st_mtime > STALE_TEMP_S:
                            os.unlink(entry.path)
