"""Per-file counters: the POSIX, MPI-IO and HDF5 records of one file, merged.

Darshan keeps one record per file and module (``rank`` -1 when every rank opened the file,
otherwise one record per rank), and one H5D record per HDF5 dataset, named
``file:/dataset``. :func:`file_counters` folds them into one :class:`FileCounters` per file
name: a file's signature combines its POSIX, MPI-IO and HDF5 counters, as in the paper.
The analytic kernel model (:mod:`iotune.darshan.modelled`) produces the same structure.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from iotune.darshan.logfile import DarshanLog, read_log

#: The Darshan modules whose records :func:`file_counters` merges.
COUNTER_MODULES = ("POSIX", "MPI-IO", "H5F", "H5D")

#: Darshan's request-size bins, as in the counter names, with their upper bounds in bytes.
SIZE_BINS: tuple[tuple[str, float], ...] = (
    ("0_100", 100), ("100_1K", 1024), ("1K_10K", 10 * 1024), ("10K_100K", 100 * 1024),
    ("100K_1M", 1024**2), ("1M_4M", 4 * 1024**2), ("4M_10M", 10 * 1024**2),
    ("10M_100M", 100 * 1024**2), ("100M_1G", 1024**3), ("1G_PLUS", float("inf")),
)
#: Counters describing one access pattern: taken from the record that moved the most bytes.
_PICK_FROM_DOMINANT = ("ACCESS", "STRIDE", "ALIGNMENT", "_MODE", "RANK", "DATASPACE",
                       "DATATYPE", "CHUNK", "USE_", "MEM_ALIGNMENT")

Counters = dict[str, float]


def size_bin(length: float) -> str:
    """The Darshan size bin (``"100K_1M"`` ...) of a request of ``length`` bytes."""
    return next(name for name, upper in SIZE_BINS if length <= upper)


@dataclass
class FileCounters:
    """The merged counters of one file.

    ``ranks`` is how many ranks accessed it (``nprocs`` for a record shared by all);
    ``posix``, ``mpiio``, ``h5f`` are the module counters summed over the file's records
    (empty when the module has none); ``h5d`` sums the file's HDF5 datasets, ``datasets``
    counts them.
    """

    name: str
    ranks: int
    nprocs: int
    posix: Counters = field(default_factory=dict)
    mpiio: Counters = field(default_factory=dict)
    h5f: Counters = field(default_factory=dict)
    h5d: Counters = field(default_factory=dict)
    datasets: int = 0

    @property
    def shared(self) -> bool:
        """More than one rank accessed the file."""
        return self.ranks > 1

    def layer(self) -> Counters:
        """The lowest layer with counters (POSIX, else MPI-IO) for byte and op totals."""
        return self.posix or self.mpiio

    @property
    def bytes_written(self) -> float:
        c = self.layer()
        return c.get("POSIX_BYTES_WRITTEN", c.get("MPIIO_BYTES_WRITTEN", 0.0))

    @property
    def bytes_read(self) -> float:
        c = self.layer()
        return c.get("POSIX_BYTES_READ", c.get("MPIIO_BYTES_READ", 0.0))

    @property
    def bytes(self) -> float:
        return self.bytes_read + self.bytes_written

    @property
    def writes(self) -> float:
        if self.posix:
            return self.posix.get("POSIX_WRITES", 0.0)
        return mpiio_ops(self.mpiio, "WRITES")

    @property
    def reads(self) -> float:
        if self.posix:
            return self.posix.get("POSIX_READS", 0.0)
        return mpiio_ops(self.mpiio, "READS")

    @property
    def has_data(self) -> bool:
        """True when the file was read or written (not only opened or stat'ed)."""
        moved = self.reads + self.writes
        moved += mpiio_ops(self.mpiio, "WRITES") + mpiio_ops(self.mpiio, "READS")
        return moved + self.h5d.get("H5D_WRITES", 0.0) + self.h5d.get("H5D_READS", 0.0) > 0


def mpiio_ops(c: Mapping[str, float], kind: str) -> float:
    """All MPI-IO ``kind`` (``READS`` or ``WRITES``) calls: independent, collective, split, nb."""
    return sum(c.get(f"MPIIO_{mode}_{kind}", 0.0) for mode in ("INDEP", "COLL", "SPLIT", "NB"))


def merge_counters(rows: Iterable[Mapping[str, float]], bytes_key: str) -> Counters:
    """Counters of several records of one file (or several datasets) as one record.

    Counts and times add up; ``MAX_*`` take the maximum; start timestamps the minimum and
    end timestamps the maximum; pattern descriptors (common accesses, strides, alignment,
    fastest/slowest rank, dataspace...) come from the record with the most ``bytes_key``.
    """
    records = [dict(r) for r in rows]
    if not records:
        return {}
    if len(records) == 1:
        return {k: float(v) for k, v in records[0].items() if k not in ("rank", "id")}
    dominant = max(records, key=lambda r: r.get(bytes_key, 0.0))
    merged: Counters = {}
    for name in dominant:
        if name in ("rank", "id"):
            continue
        rule = _merge_rule(name)
        if rule == "pick":
            merged[name] = float(dominant[name])
            continue
        values = [float(r.get(name, 0.0)) for r in records]
        merged[name] = min(values) if rule == "min" else max(values) if rule == "max" \
            else sum(values)
    return merged


@cache
def _merge_rule(name: str) -> str:
    """How :func:`merge_counters` combines counter ``name``: pick, min, max or sum."""
    if any(tag in name for tag in _PICK_FROM_DOMINANT) or "VARIANCE" in name:
        return "pick"
    if "START_TIMESTAMP" in name:
        return "min"
    if "MAX_" in name or "END_TIMESTAMP" in name:
        return "max"
    return "sum"


def file_counters(log: DarshanLog) -> list[FileCounters]:
    """One :class:`FileCounters` per file the log's POSIX, MPI-IO or HDF5 modules saw.

    Files are ordered by bytes moved, largest first. Standard streams are left out.
    """
    by_file: dict[str, dict[str, list[dict[str, float]]]] = {}
    ranks: dict[str, set[int]] = {}
    datasets: dict[str, set[str]] = {}
    for module, frame in log.counters.items():
        if frame.empty:
            continue
        for row in frame.to_dict("records"):
            name = log.names.get(int(row["id"]), f"<record {int(row['id'])}>")
            if module == "H5D":
                file_name, _, dataset = name.partition(":/")
                datasets.setdefault(file_name, set()).add(dataset)
                name = file_name
            if name.startswith("<") and name.endswith(">"):
                continue
            by_file.setdefault(name, {}).setdefault(module, []).append(
                {str(k): float(v) for k, v in row.items()})
            ranks.setdefault(name, set()).add(int(row["rank"]))
    files = []
    for name, modules in by_file.items():
        seen = ranks[name]
        count = log.nprocs if -1 in seen else len(seen)
        files.append(FileCounters(
            name=name,
            ranks=max(count, 1),
            nprocs=log.nprocs,
            posix=merge_counters(modules.get("POSIX", []), "POSIX_BYTES_WRITTEN"),
            mpiio=merge_counters(modules.get("MPI-IO", []), "MPIIO_BYTES_WRITTEN"),
            h5f=merge_counters(modules.get("H5F", []), "H5F_OPENS"),
            h5d=merge_counters(modules.get("H5D", []), "H5D_BYTES_WRITTEN"),
            datasets=len(datasets.get(name, ())),
        ))
    files.sort(key=lambda f: (-f.bytes, f.name))
    return files


def read_counters(path: str | os.PathLike[str],
                  purpose: str) -> tuple[DarshanLog, list[FileCounters]]:
    """The log at ``path`` (without DXT records) and its :func:`file_counters`.

    DataError when the log cannot be read or has no record of :data:`COUNTER_MODULES`;
    ``purpose`` (e.g. ``"a profile"``) says in that message what needed them.
    """
    log = read_log(path, dxt=False)
    log.require(COUNTER_MODULES, purpose)
    return log, file_counters(log)
