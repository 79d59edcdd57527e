"""Read phases: what the kernels' ``--access`` means, the timed read-back and its checks.

``--access write`` (the default) times the write only. ``--access read`` writes the file
first without timing it (the *prepare*: always flushed with fsync and closed), then times
reading it back; ``--access both`` times the write, then the read. Between the write and
the timed read every rank meets at a barrier after :func:`settle`: the data is on storage
(fsync, close) and each rank asks the kernel to drop the file's cached pages
(``posix_fadvise(POSIX_FADV_DONTNEED)``), then the file is opened again for the read.

What cannot be done without root: ``/proc/sys/vm/drop_caches``. ``POSIX_FADV_DONTNEED``
drops the clean cached pages of one file on local file systems such as ext4 and xfs; it is
advice, and some file systems (tmpfs, some network clients) keep the pages, so on them a
read may be served from memory. The result records what was done (``read_cache``).

Each read call's data is checked against the values the kernel wrote: up to
:data:`SAMPLES_PER_READ` evenly spaced values of every buffer read (first and last always),
plus the first values a kernel names (``head``: ior's per-transfer header word), outside the
timed region. A mismatch on any rank ends the run with exit code 1 and one line
naming the first bad value, so a read that returns garbage can never be reported as fast.

The read phases are timed like the write (``MPI.Wtime`` per rank, maximum over ranks) and
reported in ``times_s`` as ``read_open``, ``read``, ``read_close`` and ``read_total``; with
``--access read`` the write keys (``open``, ``write``, ``close``, ``total``) are absent.

numpy is imported inside the functions that use it: importing this module loads none, so
a write-only POSIX or MPI-IO run of ior loads none.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.settings.units import MIB

from . import harness, hdf5, mpiio
from .errors import EXIT_FAILED, KernelError
from .mpi import Phases, Stopwatch, max_over_ranks, max_phases, mpi

if TYPE_CHECKING:
    import numpy as np

#: Values checked per read call (see the module docstring).
SAMPLES_PER_READ = 1024

READ_EPILOG = """\
reads (--access read|both):
  read: the file is written first without timing (flushed with fsync and closed), then read
  back and timed; both: the write is timed, then the read. Before the timed read every rank
  meets at a barrier after each rank called posix_fadvise(POSIX_FADV_DONTNEED) on the file
  (dropping its clean cached pages where the file system honours it; dropping the whole
  page cache needs root, so on some file systems the read may come from memory). times_s
  then holds read_open, read, read_close and read_total; bytes_read and read_bandwidth_mib_s
  (all bytes read / max read_total) are reported beside the write's figures. Up to 1024
  evenly spaced values of every read call (for ior also the first 8 bytes of every
  transfer, which hold its offset) are compared with what was written; a mismatch
  exits with code 1. Data sieving and collective buffering for reads follow
  --romio-ds-read and --romio-cb-read.
"""


def writes_timed(access: str) -> bool:
    """Whether ``access`` times the write."""
    return access in ("write", "both")


def reads(access: str) -> bool:
    """Whether ``access`` has a read phase."""
    return access in ("read", "both")


# -- timing ----------------------------------------------------------------------------------


@dataclass
class ReadPhases:
    """Seconds one rank spent opening, reading and closing the file(s) it reads."""

    open: float = 0.0
    read: float = 0.0
    close: float = 0.0

    @property
    def total(self) -> float:
        """open + read + close."""
        return self.open + self.read + self.close


READ_KEYS = ("read_open", "read", "read_close", "read_total")


def max_read_phases(comm: Any, phases: ReadPhases) -> dict[str, float]:
    """Maximum over ranks of each read phase and of the read total (collective)."""
    values = (phases.open, phases.read, phases.close, phases.total)
    return max_over_ranks(comm, dict(zip(READ_KEYS, values, strict=True)))


# -- between the write and the read ----------------------------------------------------------

CACHE_ADVICE = "fsync, then posix_fadvise(POSIX_FADV_DONTNEED), on every rank after close"


def settle(comm: Any, paths: Sequence[Path]) -> dict[str, Any]:
    """Sync ``paths`` and drop what this process can of their cached pages, then meet at a
    barrier.

    Collective. The files must be closed. Returns the ``read_cache`` field of
    the result: what was done, and on how many ranks the advice was refused.
    """
    refused = 0
    for path in paths:
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            refused += 1
            continue
        try:
            os.fsync(fd)  # a write timed without --fsync may have left dirty pages
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        except OSError:
            refused += 1
        finally:
            os.close(fd)
    refused_ranks = int(comm.allreduce(1 if refused else 0))
    comm.Barrier()
    return {
        "synced_and_closed": True,
        "advice": CACHE_ADVICE,
        "advice_refused_ranks": refused_ranks,
        "page_cache_dropped": False,
        "note": "dropping the whole page cache needs root; file systems that ignore the "
        "advice may serve the read from memory",
    }


# -- checking what was read ------------------------------------------------------------------


def sample_positions(count: int, samples: int = SAMPLES_PER_READ, head: int = 0) -> np.ndarray:
    """Up to ``samples`` evenly spaced positions in ``range(count)``, first and last included,
    plus the first ``head`` positions; sorted, each once."""
    import numpy as np

    if count <= samples:
        return np.arange(count, dtype=np.int64)
    spread = np.linspace(0, count - 1, samples).round().astype(np.int64)
    return np.union1d(spread, np.arange(min(head, count), dtype=np.int64))


class ReadCheck:
    """Sampled comparison of what this rank read with what the kernel wrote."""

    def __init__(self, rank: int) -> None:
        self.rank = rank
        self.checked = 0
        self.bad = 0
        self.first: dict[str, Any] | None = None
        self._calls = 0

    def compare(self, where: str, found: np.ndarray, base: int,
                expected_at: Callable[[np.ndarray], np.ndarray], head: int = 0) -> None:
        """Compare sampled elements of ``found`` (element ``i`` is number ``base + i`` of
        ``where``; the first ``head`` always among them) bit for bit with
        ``expected_at(numbers)``."""
        import numpy as np

        self._calls += 1
        picks = sample_positions(found.shape[0], head=head)
        got = np.ascontiguousarray(found[picks])
        want = np.ascontiguousarray(expected_at(picks + base)).astype(found.dtype, copy=False)
        size = found.dtype.itemsize
        differ = (got.view(np.uint8).reshape(-1, size)
                  != want.view(np.uint8).reshape(-1, size)).any(axis=1)
        self.checked += int(picks.shape[0])
        bad = np.flatnonzero(differ)
        if bad.size == 0:
            return
        self.bad += int(bad.size)
        if self.first is None:
            i = int(bad[0])
            self.first = {"where": where, "index": int(base + picks[i]), "rank": self.rank,
                          "expected": want[i].item(), "found": got[i].item(),
                          "_order": [self.rank, self._calls]}

    def finish(self, comm: Any) -> dict[str, Any]:
        """Combine the ranks' checks (collective); KernelError (exit 1) on any mismatch.

        Returns ``{"ok", "checked_values", "mismatched_values", "first_mismatch"}``.
        """
        report = harness.verify_report(comm, self.checked, self.bad, self.first)
        if not report["ok"]:
            raise KernelError(
                f"read-back check failed: {report['mismatched_values']} of "
                f"{report['checked_values']} sampled values differ from what was written; "
                f"first: {report['first_mismatch']}", EXIT_FAILED)
        return report


# -- readers ---------------------------------------------------------------------------------


def open_h5file_for_read(path: Path, comm: Any, info: Any, options: hdf5.Hdf5Options) -> Any:
    """Open an HDF5 file read-only with the MPI-IO driver, the hints in ``info`` and the
    HDF5 file-access settings; returns an ``h5py.File``."""
    import h5py

    fapl = hdf5.make_fapl(comm, info, options)
    fid = h5py.h5f.open(os.fsencode(path), h5py.h5f.ACC_RDONLY, fapl=fapl)
    return h5py.File(fid)


@dataclass(frozen=True)
class Slab:
    """This rank's ``count`` elements at ``offset`` of each 1-D dataset of ``total``."""

    offset: int
    count: int
    total: int


def read_datasets(
    comm: Any,
    path: Path,
    info: Any,
    options: hdf5.Hdf5Options,
    names: Sequence[tuple[str, np.dtype]],
    slab: Slab,
    check: ReadCheck,
    expected: Callable[[str, np.ndarray], np.ndarray],
    *,
    collective: bool,
    on_open: Callable[[Any], None] | None = None,
) -> ReadPhases:
    """Timed read of this rank's slab of every dataset ``names`` (paths in the file, in
    order) of an HDF5 file; collective over ``comm``.

    The h5bench / BD-CATS read pattern: per dataset one read call of one contiguous
    hyperslab per rank. Open = file open; read = dataset opens and reads; close = file
    close. ``expected(name, numbers)`` gives the values written at element ``numbers`` of
    dataset ``name``; a sample of each read is checked with it (untimed).
    """
    import h5py
    import numpy as np

    watch = Stopwatch(ReadPhases())
    memory_space = h5py.h5s.create_simple((slab.count,))
    selection = h5py.h5s.create_simple((slab.total,))
    selection.select_hyperslab((slab.offset,), (slab.count,))
    dxpl = hdf5.transfer_plist(collective)
    buffers = {dtype.str: np.empty(slab.count, dtype=dtype) for _, dtype in names}
    comm.Barrier()
    with watch.phase("open"):
        h5file = open_h5file_for_read(path, comm, info, options)
    if on_open is not None:
        on_open(h5file)
    for name, dtype in names:
        buffer = buffers[dtype.str]
        with watch.phase("read"):
            dset = h5py.h5d.open(h5file.id, name.encode())
            dset.read(memory_space, selection, buffer, dxpl=dxpl)
            dset.close()
        check.compare(name, buffer, slab.offset, _bound(expected, name))
    with watch.phase("close"):
        h5file.close()
    return watch.phases


def _bound(expected: Callable[[str, np.ndarray], np.ndarray], name: str
           ) -> Callable[[np.ndarray], np.ndarray]:
    """``expected`` for dataset ``name``."""
    return lambda numbers: expected(name, numbers)


class PosixReader:
    """``os.open`` read-only and ``os.preadv`` into the caller's buffer."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_RDONLY)

    def read(self, offset: int, buf: np.ndarray) -> None:
        view = buf.data.cast("B")
        done = 0
        while done < len(view):
            got = os.preadv(self.fd, [view[done:]], offset + done)
            if got == 0:
                raise KernelError(f"short read at offset {offset + done}: end of file",
                                  EXIT_FAILED)
            done += got

    def close(self) -> None:
        os.close(self.fd)

    def hints(self) -> tuple[dict[str, str], str]:
        return {}, "not applicable: the posix api does not use MPI-IO, hints are not passed"


class MpiioReader:
    """``MPI_File_open`` read-only with the hints; ``Read_at_all`` or ``Read_at``."""

    def __init__(self, path: Path, comm: Any, info: Any, collective: bool) -> None:
        MPI = mpi()
        self.fh = MPI.File.Open(comm, os.fspath(path), MPI.MODE_RDONLY, info)
        self.collective = collective

    def read(self, offset: int, buf: np.ndarray) -> None:
        if self.collective:
            self.fh.Read_at_all(offset, buf)
        else:
            self.fh.Read_at(offset, buf)

    def close(self) -> None:
        self.fh.Close()

    def hints(self) -> tuple[dict[str, str], str]:
        return mpiio.file_hints(self.fh), "MPI_File_get_info on the open file (read phase)"


class Hdf5Reader:
    """One 1-D uint8 dataset read by hyperslabs of one transfer each."""

    def __init__(self, path: Path, comm: Any, info: Any, options: hdf5.Hdf5Options,
                 dataset: str, collective: bool) -> None:
        import h5py

        self.path, self.comm, self.info = path, comm, info
        self.file = open_h5file_for_read(path, comm, info, options)
        self.dset = h5py.h5d.open(self.file.id, dataset.encode())
        self.slabs = hdf5.Slabs(self.dset, collective)

    def read(self, offset: int, buf: np.ndarray) -> None:
        self.slabs.read(offset, buf)

    def close(self) -> None:
        self.dset.close()
        self.file.close()

    def hints(self) -> tuple[dict[str, str], str]:
        return hdf5.h5file_hints(self.file, self.path, self.comm, self.info)


Reader = PosixReader | MpiioReader | Hdf5Reader


def read_transfers(
    open_reader: Callable[[], Reader],
    comm: Any,
    offsets: Sequence[int] | Iterator[int],
    transfer_size: int,
    check: ReadCheck,
    where: str,
    expected_at: Callable[[np.ndarray], np.ndarray],
    head: int = 0,
) -> tuple[ReadPhases, dict[str, str], str]:
    """Timed read of one transfer of ``transfer_size`` bytes at each offset, into one
    reusable buffer; ``comm.Barrier()`` precedes the open (``comm`` is the world).

    ``expected_at(byte_offsets)`` gives the bytes written at those offsets of the file; a
    sample of every transfer, always including its first ``head`` bytes, is checked with it
    (untimed). Returns the phases and the hints in effect on the open file with how they
    were read.
    """
    import numpy as np

    watch = Stopwatch(ReadPhases())
    buffer = np.empty(transfer_size, dtype=np.uint8)
    comm.Barrier()
    with watch.phase("open"):
        reader = open_reader()
    hints, source = reader.hints()
    for offset in offsets:
        with watch.phase("read"):
            reader.read(offset, buffer)
        check.compare(where, buffer, offset, expected_at, head)
    with watch.phase("close"):
        reader.close()
    return watch.phases, hints, source


# -- the result ------------------------------------------------------------------------------


def result_fields(
    comm: Any,
    access: str,
    write: Phases | None,
    read: ReadPhases,
    bytes_read: int,
    cache: Mapping[str, Any],
    check: Mapping[str, Any],
) -> dict[str, Any]:
    """The result fields of a run with a read phase (collective), for ``Outcome.extra``.

    They replace the harness's ``times_s`` (which knows only the write) with the write's
    maxima (when ``access`` times it) plus the read's, and add ``bytes_read``,
    ``read_bandwidth_mib_s`` (bytes read / max ``read_total``), ``read_cache`` and
    ``read_check``. With ``--access read`` the write is the untimed prepare: its keys are
    absent and ``bandwidth_mib_s`` is null.
    """
    times: dict[str, float] = {}
    if write is not None and writes_timed(access):
        times.update(max_phases(comm, write))
    read_times = max_read_phases(comm, read)
    times.update(read_times)
    total = read_times["read_total"]
    fields: dict[str, Any] = {
        "access": access,
        "times_s": times,
        "bytes_read": bytes_read,
        "read_bandwidth_mib_s": bytes_read / total / MIB if total > 0 else None,
        "read_cache": dict(cache),
        "read_check": dict(check),
    }
    if not writes_timed(access):
        fields["bandwidth_mib_s"] = None
        fields["write_untimed"] = "the file was written beforehand without timing (prepare)"
    return fields
