"""The I/O summary of an application: what ``iotune profile`` reports.

Totals come from the lowest instrumented layer of each file (POSIX, else MPI-IO), the
request-size histograms from both layers, collective versus independent from MPI-IO, and
HDF5 datasets from H5D. A file is *shared* when more than one rank accessed it and
*per-process* when exactly one did in a job of several ranks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from iotune.darshan.classes import DEFAULT_THRESHOLD, SignatureClass, equivalence_classes
from iotune.darshan.logfile import DarshanLog
from iotune.darshan.records import read_counters
from iotune.darshan.signature import describe
from iotune.workload.counters import SIZE_BINS, FileCounters


def _hist(files: Sequence[FileCounters], layer: str, op: str) -> dict[str, int]:
    prefix, suffix = ("POSIX_SIZE", "") if layer == "posix" else ("MPIIO_SIZE", "_AGG")
    out = {}
    for name, _ in SIZE_BINS:
        key = f"{prefix}_{op}{suffix}_{name}"
        out[name] = int(sum((f.posix if layer == "posix" else f.mpiio).get(key, 0)
                            for f in files))
    return out


def _sum(files: Sequence[FileCounters], layer: str, key: str) -> float:
    return float(sum(getattr(f, layer).get(key, 0.0) for f in files))


def profile_log(path: str | os.PathLike[str],
                threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """The ``iotune profile`` document: :func:`io_summary` of the log at ``path``, with its
    files in signature classes of cosine similarity ``threshold``, and its HDF5 datasets
    as records of their own, in classes by the same rule (:mod:`iotune.darshan.datasets`).
    DataError when the log cannot be read or has no POSIX, MPI-IO or HDF5 records."""
    from iotune.darshan.datasets import dataset_document, dataset_records

    log, files = read_counters(path, "a profile")
    summary = io_summary(log, files, equivalence_classes(files, threshold))
    summary["datasets"] = dataset_document(dataset_records(log), threshold)
    return summary


def io_summary(log: DarshanLog, files: Sequence[FileCounters],
               classes: Sequence[SignatureClass]) -> dict[str, Any]:
    """A nested mapping of the figures a user needs to understand the application's I/O."""
    data = [f for f in files if f.has_data]
    shared = [f for f in data if f.shared]
    per_process = [f for f in data if not f.shared and log.nprocs > 1]
    io_time = sum(_sum(files, "posix", f"POSIX_F_{k}_TIME") for k in ("READ", "WRITE", "META"))
    summary: dict[str, Any] = {
        "log": str(log.path),
        "job": {
            "exe": log.exe.split(" ")[0] if log.exe else "",
            "nprocs": log.nprocs,
            "run_time_s": log.run_time,
            "darshan": log.lib_version,
            "modules": list(log.modules),
        },
        "totals": {
            "bytes_written": int(sum(f.bytes_written for f in data)),
            "bytes_read": int(sum(f.bytes_read for f in data)),
            "writes": int(sum(f.writes for f in data)),
            "reads": int(sum(f.reads for f in data)),
            "files": len(files),
            "files_with_data": len(data),
            "shared_files": len(shared),
            "per_process_files": len(per_process),
            "posix_io_time_s": round(io_time, 6),
        },
        "request_sizes": {
            "posix_write": _hist(files, "posix", "WRITE"),
            "posix_read": _hist(files, "posix", "READ"),
            "mpiio_write": _hist(files, "mpiio", "WRITE"),
            "mpiio_read": _hist(files, "mpiio", "READ"),
        },
        "mpiio": {
            "files": sum(1 for f in files if f.mpiio),
            "collective_writes": int(_sum(files, "mpiio", "MPIIO_COLL_WRITES")),
            "independent_writes": int(_sum(files, "mpiio", "MPIIO_INDEP_WRITES")),
            "collective_reads": int(_sum(files, "mpiio", "MPIIO_COLL_READS")),
            "independent_reads": int(_sum(files, "mpiio", "MPIIO_INDEP_READS")),
            "collective_opens": int(_sum(files, "mpiio", "MPIIO_COLL_OPENS")),
            "independent_opens": int(_sum(files, "mpiio", "MPIIO_INDEP_OPENS")),
        },
        "hdf5": {
            "files": sum(1 for f in files if f.h5f or f.h5d),
            "datasets": sum(f.datasets for f in files),
            "collective_datasets": sum(1 for f in files
                                       if f.h5d.get("H5D_USE_MPIIO_COLLECTIVE", 0) > 0),
        },
        "classes": [class_row(c) for c in classes],
    }
    return summary


def class_row(c: SignatureClass, top: int | None = None) -> dict[str, Any]:
    """One equivalence class as a report row (its non-zero features, or the ``top`` largest)."""
    return {
        "class": c.index,
        "files": c.files,
        "bytes_share": round(c.share, 4),
        "representative": c.representative.name,
        "ranks": c.representative.ranks,
        "features": {k: round(v, 3) for k, v in describe(c.vector, top).items()},
    }


def nonzero_bins(hist: dict[str, int]) -> str:
    """``"100K_1M:16 0_100:3"``: the non-empty bins of a histogram, for tables."""
    return " ".join(f"{k}:{v}" for k, v in hist.items() if v) or "-"


def human_bytes(n: float) -> str:
    """``4194304 -> '4 MiB'``: bytes in the largest binary unit, 3 significant digits."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(value) < 1024 or unit == "TiB":
            return f"{value:.3g} {unit}" if unit != "B" else f"{int(value)} B"
        value /= 1024
    return f"{value:.3g} TiB"
