"""The signature of a file: a fixed, named feature vector built from its Darshan counters.

Every vector has the features of :data:`FEATURES` in that order, so index ``i`` means the
same thing for every application and kernel (the paper's "consistent feature vectors").
The features are chosen to describe the *pattern* rather than the scale: shares of bytes,
shares of requests per size bin, shares of collective, consecutive and sequential
requests, flags for the layers used, and log2 of sizes per request and per rank. So an
application and a kernel run at another rank count can still be compared.

A feature that is not defined (no reads, no MPI-IO record...) is 0.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np

from iotune.workload.counters import SIZE_BINS, FileCounters, mpiio_ops

#: The request-size bins of Darshan's size histograms, in order.
BIN_NAMES = tuple(name for name, _ in SIZE_BINS)


def _feature_list() -> tuple[tuple[str, str], ...]:
    features: list[tuple[str, str]] = [
        ("write_share", "bytes written / bytes moved"),
        ("read_share", "bytes read / bytes moved"),
    ]
    for layer, prefix in (("posix", "POSIX_SIZE"), ("mpiio", "MPIIO_SIZE")):
        for op in ("write", "read"):
            for name in BIN_NAMES:
                features.append((f"{layer}_{op}_{name}",
                                 f"share of {layer} {op}s in the {name} byte bin "
                                 f"({prefix}_{op.upper()}_*)"))
    features += [
        ("shared_file", "1 if more than one rank accessed the file"),
        ("mpiio", "1 if the file was accessed through MPI-IO"),
        ("collective_writes", "collective MPI-IO writes / MPI-IO writes"),
        ("independent_writes", "independent MPI-IO writes / MPI-IO writes"),
        ("collective_reads", "collective MPI-IO reads / MPI-IO reads"),
        ("hdf5", "1 if the file is an HDF5 file (H5F or H5D records)"),
        ("hdf5_collective", "1 if HDF5 used collective MPI-IO transfers for its datasets"),
        ("log2_datasets", "log2(1 + HDF5 datasets in the file)"),
        ("consecutive_writes", "POSIX consecutive writes / writes"),
        ("sequential_writes", "POSIX sequential (increasing offset) writes / writes"),
        ("consecutive_reads", "POSIX consecutive reads / reads"),
        ("sequential_reads", "POSIX sequential reads / reads"),
        ("rw_switches", "POSIX read/write switches / requests"),
        ("log2_write_size", "log2(1 + mean write request in bytes)"),
        ("log2_read_size", "log2(1 + mean read request in bytes)"),
        ("log2_rank_bytes", "log2(1 + bytes moved per accessing rank)"),
        ("log2_rank_requests", "log2(1 + requests per accessing rank)"),
        ("log2_common_access", "log2(1 + most common request size)"),
        ("common_access_share", "requests of the most common size / requests"),
        ("sync", "1 if the file was synced (fsync, MPI_File_sync or H5Fflush)"),
    ]
    return tuple(features)


#: ``(name, definition)`` of every feature, in vector order.
FEATURES: tuple[tuple[str, str], ...] = _feature_list()
FEATURE_NAMES: tuple[str, ...] = tuple(name for name, _ in FEATURES)
FEATURE_INDEX: dict[str, int] = {name: i for i, name in enumerate(FEATURE_NAMES)}


def share(part: float, whole: float) -> float:
    """``part / whole``, 0 when there is no whole."""
    return part / whole if whole > 0 else 0.0


def log2p(value: float) -> float:
    """``log2(1 + value)``, 0 for a negative value."""
    return math.log2(1.0 + max(value, 0.0))


def histogram(c: Mapping[str, float], prefix: str, op: str) -> list[float]:
    """The shares of the counters ``<prefix>_<op>_<bin>`` over :data:`BIN_NAMES`."""
    counts = [c.get(f"{prefix}_{op}_{name}", 0.0) for name in BIN_NAMES]
    total = sum(counts)
    return [share(n, total) for n in counts]


def signature(fc: FileCounters) -> np.ndarray:
    """The feature vector of one file (see :data:`FEATURES`)."""
    p, m = fc.posix, fc.mpiio
    values: dict[str, float] = {
        "write_share": share(fc.bytes_written, fc.bytes),
        "read_share": share(fc.bytes_read, fc.bytes),
    }
    for layer, c, prefix, suffix in (("posix", p, "POSIX_SIZE", ""),
                                     ("mpiio", m, "MPIIO_SIZE", "_AGG")):
        for op in ("write", "read"):
            bins = histogram(c, prefix, op.upper() + suffix)
            for name, part in zip(BIN_NAMES, bins, strict=True):
                values[f"{layer}_{op}_{name}"] = part
    mpi_writes, mpi_reads = mpiio_ops(m, "WRITES"), mpiio_ops(m, "READS")
    writes, reads = fc.writes, fc.reads
    requests = writes + reads
    values.update({
        "shared_file": 1.0 if fc.shared else 0.0,
        "mpiio": 1.0 if m else 0.0,
        "collective_writes": share(m.get("MPIIO_COLL_WRITES", 0.0), mpi_writes),
        "independent_writes": share(m.get("MPIIO_INDEP_WRITES", 0.0), mpi_writes),
        "collective_reads": share(m.get("MPIIO_COLL_READS", 0.0), mpi_reads),
        "hdf5": 1.0 if (fc.h5f or fc.h5d) else 0.0,
        "hdf5_collective": 1.0 if fc.h5d.get("H5D_USE_MPIIO_COLLECTIVE", 0.0) > 0 else 0.0,
        "log2_datasets": log2p(fc.datasets),
        "consecutive_writes": share(p.get("POSIX_CONSEC_WRITES", 0.0), writes),
        "sequential_writes": share(p.get("POSIX_SEQ_WRITES", 0.0), writes),
        "consecutive_reads": share(p.get("POSIX_CONSEC_READS", 0.0), reads),
        "sequential_reads": share(p.get("POSIX_SEQ_READS", 0.0), reads),
        "rw_switches": share(p.get("POSIX_RW_SWITCHES", 0.0), requests),
        "log2_write_size": log2p(share(fc.bytes_written, writes)),
        "log2_read_size": log2p(share(fc.bytes_read, reads)),
        "log2_rank_bytes": log2p(fc.bytes / max(fc.ranks, 1)),
        "log2_rank_requests": log2p(requests / max(fc.ranks, 1)),
    })
    access = p or m
    key = "POSIX" if p else "MPIIO"
    values["log2_common_access"] = log2p(access.get(f"{key}_ACCESS1_ACCESS", 0.0))
    values["common_access_share"] = share(access.get(f"{key}_ACCESS1_COUNT", 0.0), requests)
    synced = (p.get("POSIX_FSYNCS", 0.0) + p.get("POSIX_FDSYNCS", 0.0)
              + m.get("MPIIO_SYNCS", 0.0) + fc.h5f.get("H5F_FLUSHES", 0.0))
    values["sync"] = 1.0 if synced > 0 else 0.0
    return np.array([values[name] for name in FEATURE_NAMES], dtype=float)


def describe(vector: np.ndarray, top: int | None = None) -> dict[str, float]:
    """The non-zero features of ``vector`` by name (the ``top`` largest when given)."""
    pairs = [(FEATURE_NAMES[i], float(v)) for i, v in enumerate(vector) if v != 0]
    if top is not None:
        pairs = sorted(pairs, key=lambda kv: -abs(kv[1]))[:top]
    return dict(pairs)


#: Features recorded by Darshan's HDF5 modules (H5F, H5D), which exist from Darshan 3.2.
HDF5_FEATURES = ("hdf5", "hdf5_collective", "log2_datasets")


def unobservable(lib_version: str) -> tuple[str, ...]:
    """Features a log written by Darshan ``lib_version`` cannot show, so must not compare.

    Darshan before 3.2 had no HDF5 modules: a 0 there means "not recorded", not "no HDF5".
    An unparsable version is taken as recent.
    """
    parts = []
    for piece in lib_version.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        if not digits:
            return ()
        parts.append(int(digits))
    return HDF5_FEATURES if len(parts) == 2 and tuple(parts) < (3, 2) else ()


def feature_mask(ignored: tuple[str, ...] | list[str]) -> np.ndarray:
    """A 0/1 vector that zeroes the ``ignored`` features; ValueError names unknown ones."""
    unknown = [name for name in ignored if name not in FEATURE_INDEX]
    if unknown:
        raise ValueError(f"unknown feature {unknown[0]!r}; known features: "
                         f"{', '.join(FEATURE_NAMES)}")
    mask = np.ones(len(FEATURE_NAMES))
    for name in ignored:
        mask[FEATURE_INDEX[name]] = 0.0
    return mask
