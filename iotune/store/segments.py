"""Segments of the store cache: the records of one byte range of the journal, by partition.

A segment covers the complete lines of the journal from byte ``start`` to byte ``end`` and
keeps, for every record there, a row in one partition:

- measurements (records with a kernel, not probe rounds) are partitioned by kernel, backend
  and campaign (as :class:`~iotune.store.records.Measurement` reads them), so a reader loads
  only the partitions it asks for; a row holds the record's identity columns, settings,
  params, phase times, bandwidth, bytes, state and the few fields readers ask for by name
  (``tune_id``, ``strategy``, ``elapsed_s``);
- every other record (probe rounds, foreign records) is a row of byte offsets only;
- every row has ``@offset`` and ``@length`` (where its line is in the journal, to read the
  whole record when asked) and ``@seq`` (its position among the store's records).

Damaged lines and duplicate records (:mod:`iotune.store.damage`) get no row: a segment
keeps their line numbers instead (and the number of its first line and how many lines it
covers), so a later reader reports them without parsing the journal again. It also keeps
the sorted 16-byte digests of its records' ids, so the records after it are checked for
duplicates without reading it whole.

On disk a segment is one ``.seg`` file (see :class:`FileSegment`): a JSON header (range,
record count, identity of the journal it was read from, partitions and their columns) and
plain numeric arrays (no pickle; see :mod:`iotune.store.columns`). It is written to a
temporary name and renamed into place, so a reader sees a whole segment or none.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from iotune.store.columns import ABSENT, Piece, encode
from iotune.store.damage import DAMAGED, DUPLICATE, id_digest, parse_line
from iotune.store.records import IDENTITY_COLUMNS, Measurement

#: Version of the segment layout; a segment of another version is ignored and removed.
#: 2: the read phase's times, bandwidth and bytes. 3: the hints in effect and whether each
#: setting took effect. 4: the source of each measurement. 5: line numbers, skipped lines
#: and record id digests.
FORMAT = 5
MEASUREMENT, OTHER, UNREADABLE = "m", "p", "x"
ROW_COLUMNS = ("@offset", "@length", "@seq")
#: Fields kept by name beside the measurement's own (readers ask for them).
EXTRA_FIELDS = ("tune_id", "strategy", "elapsed_s")

#: The read phase's fields of a measurement (None for a run without one).
READ_COLUMNS = ("@read_total", "@read_open", "@read", "@read_close", "@read_bandwidth",
                "@bytes_read")

PartitionKey = tuple[str, str, str, str]


@dataclass
class Partition:
    """One partition of a segment: ``key`` (kind, kernel, backend, campaign), its rows."""

    key: PartitionKey
    rows: int
    columns: list[str]

    @property
    def kind(self) -> str:
        return self.key[0]


def measurement_columns() -> tuple[str, ...]:
    return (*ROW_COLUMNS, *IDENTITY_COLUMNS, "@settings", "@params", "@total", "@open",
            "@write", "@close", "@bandwidth", "@bytes", "@schema", "@state",
            *(f"@{name}" for name in EXTRA_FIELDS), *READ_COLUMNS, "@in_effect", "@effects")


def row_of(record: dict[str, Any]) -> tuple[PartitionKey, tuple[Any, ...]]:
    """The partition of ``record`` and the values it keeps, in the order of
    :func:`measurement_columns` after the row columns (none for other records)."""
    if record.get("campaign") == "probe" or "kernel" not in record:
        return (OTHER, str(record.get("kernel")), str(record.get("backend", "")),
                str(record.get("campaign") or "")), ()
    try:
        m = Measurement.from_record(record, keep=False)
    except (TypeError, ValueError, AttributeError):
        return (UNREADABLE, "", "", ""), ()
    times = m.times
    return (MEASUREMENT, m.kernel, m.backend, m.campaign), (
        *(m.source if key == "source" else record.get(key) for key in IDENTITY_COLUMNS),
        m.settings, m.params,
        times.total, times.open, times.write, times.close, m.bandwidth_mib_s, m.bytes_written,
        m.schema_version, m.state, *(record.get(name, ABSENT) for name in EXTRA_FIELDS),
        times.read_total, times.read_open, times.read, times.read_close,
        m.read_bandwidth_mib_s, m.bytes_read, m.hints_in_effect, m.effects)


class Segment:
    """The interface of a segment, in memory or in a file."""

    start: int
    end: int
    first_seq: int
    records: int
    identity: dict[str, Any]
    partitions: list[Partition]
    #: The number of the journal line the segment starts at (from 0) and of lines it covers.
    first_line: int
    lines: int
    #: ``(line number from 1, kind)`` of each damaged line and duplicate record it skipped.
    damage: list[tuple[int, str]]
    #: True when the segment is in a file of the cache.
    stored: bool = False

    def ids(self) -> np.ndarray:
        """The id digests of its records (:func:`~iotune.store.damage.id_digest`), sorted,
        as an ``S16`` array."""
        raise NotImplementedError

    def piece(self, partition: int, column: str) -> Piece:
        """Column ``column`` of partition number ``partition`` (absent if it has none)."""
        raise NotImplementedError

    def release(self) -> None:
        """Let go of the columns read so far; asked for again, they are read again. A
        reader going through a store a segment at a time calls it, so its memory stays
        that of one segment. (A segment in memory has nothing to read again and keeps
        its columns.)"""

    @property
    def size(self) -> int:
        return self.end - self.start


@dataclass
class MemorySegment(Segment):
    """A segment just read from the journal."""

    start: int
    end: int
    first_seq: int
    records: int
    partitions: list[Partition]
    pieces: list[dict[str, Piece]]
    identity: dict[str, Any] = field(default_factory=dict)
    first_line: int = 0
    lines: int = 0
    damage: list[tuple[int, str]] = field(default_factory=list)
    id_digests: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype="S16"))

    def piece(self, partition: int, column: str) -> Piece:
        found = self.pieces[partition].get(column)
        return found if found is not None else Piece.absent(self.partitions[partition].rows)

    def ids(self) -> np.ndarray:
        return self.id_digests


class SeenIds:
    """The record ids of the segments before the ones being built, to tell duplicates."""

    def __init__(self, segments: Iterable[Segment] = ()) -> None:
        self.segments = list(segments)

    def known(self, digests: list[bytes]) -> np.ndarray:
        """A mask of ``digests`` held by a record of one of the segments."""
        found = np.zeros(len(digests), dtype=bool)
        if not digests:
            return found
        query = np.array(digests, dtype="S16")
        for segment in self.segments:
            ids = segment.ids()
            if len(ids):
                at = np.minimum(np.searchsorted(ids, query), len(ids) - 1)
                found |= ids[at] == query
        return found


def build_segment(data: bytes, start: int, first_seq: int, first_line: int = 0,
                  seen: SeenIds | None = None) -> MemorySegment:
    """The segment of journal bytes ``data`` (complete lines) read from offset ``start``,
    its first record being number ``first_seq`` of the store and its first line number
    ``first_line`` (from 0).

    Damaged lines (not a record, see :func:`~iotune.store.damage.parse_line`) and records
    whose id an earlier line of ``data`` or a segment of ``seen`` holds are skipped and
    listed in the segment's ``damage``, as :meth:`iotune.store.Store.iter_records` skips
    them.
    """
    parsed: list[tuple[int, int, dict[str, Any] | None, bytes | None]] = []
    offset = start
    for line in data.split(b"\n")[:-1]:
        record = parse_line(line)[0]
        parsed.append((offset, len(line) + 1, record,
                       id_digest(record) if record is not None else None))
        offset += len(line) + 1
    digests = [d for *_, d in parsed if d is not None]
    earlier = iter((seen or SeenIds()).known(digests).tolist())
    mine: set[bytes] = set()
    damage: list[tuple[int, str]] = []
    tables: dict[PartitionKey, list[tuple[Any, ...]]] = {}
    seq = first_seq
    for number, (offset, length, record, digest) in enumerate(parsed, start=first_line + 1):
        if record is None:
            damage.append((number, DAMAGED))
            continue
        if digest is not None:
            if next(earlier) or digest in mine:
                damage.append((number, DUPLICATE))
                continue
            mine.add(digest)
        key, values = row_of(record)
        rows = tables.get(key)
        if rows is None:
            rows = tables[key] = []
        rows.append((offset, length, seq, *values))
        seq += 1
    offset = start + len(data)
    partitions, pieces = [], []
    for key, rows in tables.items():
        names = measurement_columns() if key[0] == MEASUREMENT else ROW_COLUMNS
        partitions.append(Partition(key, len(rows), list(names)))
        pieces.append({name: encode(values)
                       for name, values in zip(names, zip(*rows, strict=True), strict=True)})
    return MemorySegment(start, offset, first_seq, seq - first_seq, partitions, pieces,
                         first_line=first_line, lines=len(parsed), damage=damage,
                         id_digests=np.sort(np.array(sorted(mine), dtype="S16")))


MAGIC = b"IOTUNSEG"
#: The only dtypes a segment file may hold (no object arrays: nothing is unpickled).
DTYPES = frozenset(("<i8", "<f8", "<i4", "|i1", "|u1"))


class FileSegment(Segment):
    """A segment read from its file; columns are loaded when first asked for.

    The file: ``MAGIC``, the header's length (8 bytes, little-endian), the header (JSON:
    range, identity, partitions, and ``arrays``: name -> [dtype, count, offset]), then the
    arrays' bytes. The file stays open, so it stays readable if another process removes it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.stored = True
        self._handle = path.open("rb")
        try:
            start = self._handle.read(16)
            if len(start) != 16 or start[:8] != MAGIC:
                raise ValueError(f"{path.name}: not a segment file")
            size = int.from_bytes(start[8:], "little")
            meta = json.loads(self._handle.read(size))
            if meta.get("format") != FORMAT:
                raise ValueError(f"segment format {meta.get('format')}")
            self.start, self.end = int(meta["start"]), int(meta["end"])
            self.first_seq, self.records = int(meta["first_seq"]), int(meta["records"])
            self.identity = dict(meta["identity"])
            self.first_line, self.lines = int(meta["first_line"]), int(meta["lines"])
            self.damage = [(int(line), str(kind)) for line, kind in meta["damage"]]
            self.partitions = [Partition(tuple(p["key"]), int(p["rows"]), list(p["columns"]))
                               for p in meta["partitions"]]
            self._arrays: dict[str, list[Any]] = dict(meta["arrays"])
            self._data = 16 + size
        except Exception:
            self._handle.close()
            raise
        self._loaded: dict[tuple[int, str], Piece] = {}
        self._ids: np.ndarray | None = None

    def ids(self) -> np.ndarray:
        if self._ids is None:
            self._ids = (self._array("ids").view("S16") if "ids" in self._arrays
                         else np.zeros(0, dtype="S16"))
        return self._ids

    def _array(self, name: str) -> np.ndarray:
        dtype, count, offset = self._arrays[name]
        if dtype not in DTYPES:
            raise ValueError(f"{self.path.name}: array {name} of dtype {dtype}")
        kind = np.dtype(dtype)
        data = os.pread(self._handle.fileno(), kind.itemsize * count, self._data + offset)
        if len(data) != kind.itemsize * count:
            raise ValueError(f"{self.path.name}: cut short")
        return np.frombuffer(data, dtype=kind)

    def piece(self, partition: int, column: str) -> Piece:
        found = self._loaded.get((partition, column))
        if found is not None:
            return found
        info = self.partitions[partition]
        if column not in info.columns:
            return Piece.absent(info.rows)
        prefix = f"{partition}.{info.columns.index(column)}."
        arrays = {suffix: self._array(prefix + suffix) for suffix in "nmku"
                  if prefix + suffix in self._arrays}
        piece = self._loaded[(partition, column)] = Piece.from_arrays(info.rows, arrays)
        return piece

    def release(self) -> None:
        self._loaded.clear()

    def close(self) -> None:
        self._handle.close()


#: What reading a damaged or foreign segment file may raise.
SEGMENT_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError)


def write_segment(segment: MemorySegment, path: Path) -> None:
    """Write ``segment`` to ``path`` atomically (a temporary file in the same directory,
    then ``os.replace``). OSError when the directory cannot be written."""
    arrays: dict[str, np.ndarray] = {}
    for i, (info, pieces) in enumerate(zip(segment.partitions, segment.pieces, strict=True)):
        for j, name in enumerate(info.columns):
            for suffix, array in pieces[name].arrays().items():
                arrays[f"{i}.{j}.{suffix}"] = np.ascontiguousarray(
                    array, dtype=array.dtype.newbyteorder("<"))
    arrays["ids"] = np.ascontiguousarray(segment.ids()).view(np.uint8)
    table, offset = {}, 0
    for name, array in arrays.items():
        table[name] = [array.dtype.str, len(array), offset]
        offset += -(-array.nbytes // 8) * 8
    meta = {"format": FORMAT, "start": segment.start, "end": segment.end,
            "first_seq": segment.first_seq, "records": segment.records,
            "identity": segment.identity, "first_line": segment.first_line,
            "lines": segment.lines, "damage": [list(item) for item in segment.damage],
            "partitions": [{"key": list(p.key), "rows": p.rows, "columns": p.columns}
                           for p in segment.partitions], "arrays": table}
    header = json.dumps(meta).encode()
    temporary = path.parent / f"{TEMP_PREFIX}{os.getpid()}-{uuid.uuid4().hex[:8]}.seg"
    try:
        with temporary.open("wb") as handle:
            handle.write(MAGIC + len(header).to_bytes(8, "little") + header)
            for array in arrays.values():
                data = array.tobytes()
                handle.write(data + b"\0" * (-len(data) % 8))
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


#: Name prefix of segment files being written (a crash may leave one behind).
TEMP_PREFIX = ".tmp-"


def segment_name(start: int, end: int) -> str:
    return f"v{FORMAT}-{start:016x}-{end:016x}.seg"


def parse_segment_name(name: str) -> tuple[int, int] | None:
    """(start, end) of a segment file name of this format, else None."""
    parts = name.removesuffix(".seg").split("-")
    if not name.endswith(".seg") or len(parts) != 3 or parts[0] != f"v{FORMAT}":
        return None
    try:
        return int(parts[1], 16), int(parts[2], 16)
    except ValueError:
        return None


def total_records(segments: Iterable[Segment]) -> int:
    return sum(s.records for s in segments)
