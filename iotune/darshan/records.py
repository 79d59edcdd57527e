"""Per-file counters: the POSIX, MPI-IO and HDF5 records of one file, merged.

Darshan keeps one record per file and module (``rank`` -1 when every rank opened the file,
otherwise one record per rank), and one H5D record per HDF5 dataset, named
``file:/dataset``. :func:`file_counters` folds them into one :class:`FileCounters` per file
name: a file's signature combines its POSIX, MPI-IO and HDF5 counters, as in the paper.
The structure itself, :class:`~iotune.workload.counters.FileCounters`, lives below the
kernel specs in :mod:`iotune.workload.counters`, because the analytic kernel model
(:mod:`iotune.workload.modelled`) produces it too.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from functools import cache

from iotune.darshan.logfile import DarshanLog, read_log
from iotune.workload.counters import Counters, FileCounters

#: The Darshan modules whose records :func:`file_counters` merges.
COUNTER_MODULES = ("POSIX", "MPI-IO", "H5F", "H5D")

#: Counters describing one access pattern: taken from the record that moved the most bytes.
_PICK_FROM_DOMINANT = ("ACCESS", "STRIDE", "ALIGNMENT", "_MODE", "RANK", "DATASPACE",
                       "DATATYPE", "CHUNK", "USE_", "MEM_ALIGNMENT")


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
