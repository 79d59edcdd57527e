"""The Darshan counters iotune's kernels would produce, derived from their arguments.

No Darshan runtime is needed to know the signature of a kernel configuration: its I/O is
fully determined by its arguments. This module writes down, in closed form, the counters a
Darshan-instrumented run would record for the file a kernel writes, following Darshan's
own rules (request-size bins; a request is *sequential* when its offset is past the last
byte the rank accessed, *consecutive* when it starts right after it; the first offset is
compared with 0). The result is a :class:`~iotune.workload.counters.FileCounters`, so kernel
and application signatures come from the same code.

Each kernel's spec (:mod:`iotune.kernel_specs`) describes its requests with
:func:`request_pattern` and :func:`modelled_file` (``KernelSpec.darshan_file``); this
module holds the rules every kernel shares, and imports no kernel, so the specs build on it
(:mod:`iotune.darshan.analytic` signs a kernel configuration through its spec):

* POSIX requests are ``pwrite``/``pread`` (POSIX records only); MPI-IO adds
  ``MPI_File_write_at[_all]`` records; HDF5 adds H5F and H5D records. ``verify`` reads
  every request back after the write (through POSIX, and MPI-IO too under HDF5),
  ``fsync`` syncs once per rank.
* ``access: read|both`` reads every request back through the kernel's api, collectively
  when it writes collectively. With ``access: read`` the write that prepares the file is
  left out of the signature: it stands for the input file the application found on
  storage, whose writing its own log does not show either.
* Contiguous, non-interleaved accesses are passed through by ROMIO unchanged (no
  collective buffering or data sieving), so the POSIX requests equal the MPI-IO ones.
* HDF5 metadata is approximated from what a parallel HDF5 1.10+ file shows in Darshan:
  at close rank 0 writes 3 small (< 100 B, superblock) and ``3 + objects`` medium
  (100 B - 1 KiB, object headers) requests, independently; opening a file to read costs
  3 small reads on rank 0 and ``3 + objects`` medium reads per rank, plus one.
  HDF5 raw data starts after the first metadata block (2 KiB), so no rank starts at 0.

The model is checked against real logs of IOR and VPIC-IO in the tests.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from iotune.workload.counters import FileCounters, size_bin

_SMALL_META, _MEDIUM_META = 64, 400


@dataclass
class _Layer:
    """Requests of one layer (POSIX or MPI-IO) of one file, turned into counters."""

    prefix: str
    hist_suffix: str
    counters: dict[str, float] = field(default_factory=dict)
    sizes: Counter[int] = field(default_factory=Counter)

    def add(self, op: str, size: int, count: int) -> None:
        """``count`` requests of ``size`` bytes; ``op`` is ``WRITE`` or ``READ``."""
        if count <= 0:
            return
        c = self.counters
        key = f"{self.prefix}_SIZE_{op}{self.hist_suffix}_{size_bin(size)}"
        c[key] = c.get(key, 0.0) + count
        done = "WRITTEN" if op == "WRITE" else "READ"
        c[f"{self.prefix}_BYTES_{done}"] = c.get(f"{self.prefix}_BYTES_{done}", 0.0) + size * count
        self.sizes[size] += count

    def bump(self, name: str, count: float) -> None:
        self.counters[f"{self.prefix}_{name}"] = (
            self.counters.get(f"{self.prefix}_{name}", 0.0) + count)

    def finish(self) -> dict[str, float]:
        """The counters, with the most common request size (``ACCESS1``) filled in."""
        if self.sizes:
            size, count = max(self.sizes.items(), key=lambda kv: (kv[1], kv[0]))
            self.counters[f"{self.prefix}_ACCESS1_ACCESS"] = float(size)
            self.counters[f"{self.prefix}_ACCESS1_COUNT"] = float(count)
        return self.counters


@dataclass(frozen=True)
class RequestPattern:
    """The data requests of one file: ``per_rank`` requests of ``size`` on ``ranks`` ranks."""

    ranks: int
    per_rank: int
    size: int
    consecutive: int  # over all ranks
    sequential: int   # over all ranks


def request_pattern(ranks: int, per_rank: int, size: int, runs_per_rank: int,
                    zero_start_ranks: int) -> RequestPattern:
    """Requests in ``runs_per_rank`` contiguous runs per rank, runs in increasing offset.

    Within a run every request after the first is consecutive; every request after a
    rank's first one is sequential, and so is the first one unless it is at offset 0.
    """
    consecutive = ranks * (per_rank - runs_per_rank)
    sequential = ranks * (per_rank - 1) + (ranks - zero_start_ranks)
    return RequestPattern(ranks, per_rank, size, consecutive, sequential)


def _posix_requests(layer: _Layer, data: RequestPattern, op: str, meta_small: int,
                    meta_medium: int, extra_sequential: int = 0) -> None:
    layer.add(op, data.size, data.ranks * data.per_rank)
    layer.add(op, _SMALL_META, meta_small)
    layer.add(op, _MEDIUM_META, meta_medium)
    layer.bump(f"{op}S", data.ranks * data.per_rank + meta_small + meta_medium)
    layer.bump(f"CONSEC_{op}S", data.consecutive)
    layer.bump(f"SEQ_{op}S", data.sequential + extra_sequential)


def _mpiio_requests(layer: _Layer, data: RequestPattern, op: str, collective: bool,
                    meta: int) -> None:
    layer.add(op, data.size, data.ranks * data.per_rank)
    layer.add(op, _SMALL_META, min(meta, 3))
    layer.add(op, _MEDIUM_META, max(meta - 3, 0))
    mode = "COLL" if collective else "INDEP"
    layer.bump(f"{mode}_{op}S", data.ranks * data.per_rank)
    layer.bump(f"INDEP_{op}S", meta)


def modelled_file(name: str, ranks: int, nprocs: int, *, api: str,
                  write: RequestPattern | None, read: RequestPattern | None, collective: bool,
                  fsync: bool, objects: int, datasets: int,
                  timed_read: RequestPattern | None = None) -> FileCounters:
    """The counters of one file written (and maybe read back) as described.

    ``ranks`` access the file out of ``nprocs`` in the job; ``api`` (posix, mpiio or hdf5)
    is the layer the kernel writes through; ``objects`` is the HDF5 objects (groups and
    datasets) whose headers rank 0 writes, ``datasets`` the H5D records. ``write`` None
    leaves the writing out (a file the run only reads); ``read`` is the ``verify``
    read-back, ``timed_read`` the kernel's own read (``access: read|both``), which goes
    through ``api`` with the ``collective`` setting, after the write and before ``verify``.
    """
    hdf5 = api == "hdf5"
    through_mpiio = api in ("mpiio", "hdf5")
    posix = _Layer("POSIX", "")
    mpiio = _Layer("MPIIO", "_AGG")
    meta_w = (3, 3 + objects) if hdf5 else (0, 0)
    opens = 0
    if write is not None:
        _posix_requests(posix, write, "WRITE", *meta_w)
        _mpiio_requests(mpiio, write, "WRITE", collective, sum(meta_w))
        opens += write.ranks
    # (requests, collective, through the api): the kernel's read, then verify's.
    passes = [(p, coll, via) for p, coll, via in ((timed_read, collective, through_mpiio),
                                                  (read, False, hdf5)) if p is not None]
    for n, (data, coll, via_api) in enumerate(passes):
        meta_small, meta_medium = (3, data.ranks * (3 + objects) + 1) if hdf5 else (0, 0)
        if n > 0:  # a second pass starts again from each rank's first offset
            data = RequestPattern(data.ranks, data.per_rank, data.size, data.consecutive,
                                  data.ranks * (data.per_rank - 1))
        _posix_requests(posix, data, "READ", meta_small, meta_medium,
                        (meta_small + meta_medium) // 2)
        if via_api:
            _mpiio_requests(mpiio, data, "READ", coll, meta_small + meta_medium)
        opens += data.ranks
    if write is not None and passes:
        posix.bump("RW_SWITCHES", passes[0][0].ranks)
    syncs = write.ranks if fsync and write is not None else 0
    posix.bump("FSYNCS", syncs)
    fc = FileCounters(name=name, ranks=ranks, nprocs=nprocs, posix=posix.finish())
    if through_mpiio:
        mpiio.bump("SYNCS", syncs)
        fc.mpiio = mpiio.finish()
    if hdf5:
        written = write.ranks * write.per_rank if write is not None else 0
        size = write.size if write is not None else 0
        reads = sum(p.ranks * p.per_rank for p, _, _ in passes)
        fc.h5f = {"H5F_OPENS": float(opens), "H5F_FLUSHES": float(syncs), "H5F_USE_MPIIO": 1.0}
        fc.h5d = {"H5D_WRITES": float(written), "H5D_READS": float(reads),
                  "H5D_BYTES_WRITTEN": float(written * size),
                  "H5D_USE_MPIIO_COLLECTIVE": 1.0 if collective else 0.0}
        fc.datasets = datasets
    return fc
