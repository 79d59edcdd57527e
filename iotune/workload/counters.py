"""What one file's I/O looks like in Darshan's terms: its merged POSIX, MPI-IO and HDF5
counters.

A :class:`FileCounters` is the same structure whether it was read off a log
(:func:`iotune.darshan.records.file_counters`) or derived from a kernel's arguments
(:mod:`iotune.workload.modelled`), so application and kernel signatures come from the same
code. This module only describes counters: it reads no log and imports nothing of iotune.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

#: Darshan's request-size bins, as in the counter names, with their upper bounds in bytes.
SIZE_BINS: tuple[tuple[str, float], ...] = (
    ("0_100", 100), ("100_1K", 1024), ("1K_10K", 10 * 1024), ("10K_100K", 100 * 1024),
    ("100K_1M", 1024**2), ("1M_4M", 4 * 1024**2), ("4M_10M", 10 * 1024**2),
    ("10M_100M", 100 * 1024**2), ("100M_1G", 1024**3), ("1G_PLUS", float("inf")),
)
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
