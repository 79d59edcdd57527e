"""IOR-style write kernel: blocks of transfers through POSIX, MPI-IO or HDF5.

Each rank writes ``segments`` blocks of ``block_size`` bytes, each block in
``block_size / transfer_size`` write calls of ``transfer_size`` bytes. Offsets follow IOR:

* shared file:        (segment * ranks + rank) * block_size + i * transfer_size
* file per process:   segment * block_size + i * transfer_size, in the rank's own file

With ``--api hdf5`` each file holds one 1-D uint8 dataset ``data`` and the offsets above are
element offsets in it. Data is deterministic and cheap to make (no vector arithmetic per
transfer, so a POSIX or MPI-IO write needs no numpy). Every transfer starts at a multiple
of the transfer size ``T`` and its ``T`` bytes are the first ``T`` bytes of the little-endian
64-bit words ``W0, W1, ...`` with

* ``W0 = (s + (tag << 48)) mod 2**64``, ``s`` the transfer's byte offset in the file (its
  *header word*, set per transfer), and
* ``Wk = 8 * k + ((tag mod 2**16) << 48)`` for ``k >= 1`` (a ramp, the same in every
  transfer of the file: built once),

where ``tag`` is 0 for the shared file and ``rank + 1`` for a rank's own file. So any byte
can be checked knowing only its offset, the file and ``T``: a transfer written at the wrong
offset has the wrong header word, another rank's own file has the wrong tag in every word,
and garbage breaks the ramp. (With ``T < 8`` a transfer holds only the low ``T`` bytes of its
header word.) :func:`pattern_bytes` and :func:`pattern_bytes_at` are the definition;
:class:`Filler` and ``benchmarks/c/bare_writer.c`` produce the same bytes.

With ``--access read`` or ``both`` each rank reads back its own transfers, with the same
api, transfer size and collective setting as the write (see :mod:`kit.readback`).

Run ``mpiexec -n 4 python ior.py --help`` for the command line.
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # numpy is imported where used: a POSIX or MPI-IO write needs none
    import numpy as np

try:
    from kit import arguments, harness, hdf5, mpi, mpiio, readback
except ImportError:  # imported as iotune_kernels.ior
    from iotune_kernels.kit import arguments, harness, hdf5, mpi, mpiio, readback

from iotune.kernel_args import IOR_PARAMS, own_params

KERNEL = "ior"
DATASET = "data"
POSIX_HINTS_SOURCE = "not applicable: the posix api does not use MPI-IO, hints are not passed"
#: Bytes at the start of each transfer that hold its offset (the header word, see above).
HEADER_BYTES = 8
_WORD_MASK = (1 << 64) - 1


@dataclass(frozen=True)
class Pattern:
    """The access pattern of one rank."""

    rank: int
    ranks: int
    block_size: int
    transfer_size: int
    segments: int
    file_per_process: bool

    @property
    def transfers_per_block(self) -> int:
        """Write calls per block."""
        return self.block_size // self.transfer_size

    @property
    def bytes_per_rank(self) -> int:
        """Bytes this rank writes."""
        return self.segments * self.block_size

    @property
    def file_length(self) -> int:
        """Length in bytes of the file this rank writes to."""
        ranks = 1 if self.file_per_process else self.ranks
        return self.segments * ranks * self.block_size

    @property
    def tag(self) -> int:
        """Data tag of this rank's file: 0 for the shared file, rank + 1 for its own."""
        return self.rank + 1 if self.file_per_process else 0

    def file_name(self, api: str) -> str:
        """Name of this rank's file inside the run directory."""
        suffix = "h5" if api == "hdf5" else "dat"
        return f"ior.{self.rank:08d}.{suffix}" if self.file_per_process else f"ior.{suffix}"

    def offsets(self) -> Iterator[int]:
        """Offsets of this rank's transfers, in write order."""
        slot = 0 if self.file_per_process else self.rank
        ranks = 1 if self.file_per_process else self.ranks
        for segment in range(self.segments):
            base = (segment * ranks + slot) * self.block_size
            for i in range(self.transfers_per_block):
                yield base + i * self.transfer_size


def _tag_bits(tag: int) -> int:
    """``tag << 48`` as it lands in a 64-bit word."""
    return (tag << 48) & _WORD_MASK


def pattern_bytes(offset: int, length: int, tag: int, transfer_size: int) -> np.ndarray:
    """The ``length`` bytes at ``offset`` of a file with data tag ``tag`` written in
    transfers of ``transfer_size`` bytes (see the module doc); a uint8 array."""
    import numpy as np

    first = offset - offset % transfer_size
    end = offset + length
    last = end + (-end) % transfer_size
    count = (last - first) // transfer_size
    words = (transfer_size + 7) // 8
    high = np.uint64(_tag_bits(tag))
    grid = np.empty((count, words), dtype="<u8")
    grid[:] = np.arange(words, dtype="<u8") * np.uint64(8) + high
    grid[:, 0] = np.arange(first, last, transfer_size, dtype="<u8") + high
    data = grid.view(np.uint8).reshape(count, words * 8)[:, :transfer_size].reshape(-1)
    return data[offset - first : end - first]


def pattern_bytes_at(offsets: np.ndarray, tag: int, transfer_size: int) -> np.ndarray:
    """The bytes at byte ``offsets`` (int64 array) of a file with data tag ``tag`` written
    in transfers of ``transfer_size`` bytes; a uint8 array."""
    import numpy as np

    offsets = np.asarray(offsets, dtype=np.int64)
    within = offsets % transfer_size
    word_start = np.where(within < 8, offsets - within, within - within % 8)
    words = word_start.astype(np.uint64) + np.uint64(_tag_bits(tag))
    shift = ((within % 8) * 8).astype(np.uint64)
    return ((words >> shift) & np.uint64(0xFF)).astype(np.uint8)


class Filler:
    """One reusable transfer buffer: the ramp built once, the header word set per transfer.

    No numpy: the buffer is a ``bytearray`` and :meth:`fill` rewrites its first 8 bytes in
    place with ``struct.pack_into``, so a transfer costs no copy and no vector arithmetic.
    """

    def __init__(self, transfer_size: int, tag: int) -> None:
        self.transfer_size = transfer_size
        self.tag = tag
        words = (transfer_size + 7) // 8
        high = _tag_bits(tag)
        ramp = array("Q", range(high, high + 8 * words, 8))  # 8k < 2**48: no carry
        if sys.byteorder == "big":
            ramp.byteswap()
        # Whole words, so the header always fits; only the first transfer_size bytes are
        # written.
        self._data = bytearray(ramp)
        self.buffer = memoryview(self._data)[:transfer_size]

    def fill(self, offset: int) -> memoryview:
        """:attr:`buffer` holding the transfer at ``offset`` (valid until the next call)."""
        struct.pack_into("<Q", self._data, 0, (offset + _tag_bits(self.tag)) & _WORD_MASK)
        return self.buffer


class Writer(Protocol):
    """One open file of one api; ``write``, ``sync`` and ``close`` are timed by the caller."""

    def prepare(self, data: memoryview) -> Any:
        """What :meth:`write` takes for the bytes of ``data`` (untimed, once per buffer; it
        shares ``data``'s memory, so refilling ``data`` in place refills it)."""

    def write(self, offset: int, buf: Any) -> None:
        """Write ``buf`` (from :meth:`prepare`) at ``offset`` (collective where the api and
        settings say so)."""

    def sync(self) -> None:
        """Flush to storage (fsync or equivalent)."""

    def close(self) -> None:
        """Close the file."""

    def hints(self) -> tuple[dict[str, str], str]:
        """Hints in effect on the open file and how they were obtained."""

    def details(self) -> dict[str, Any]:
        """Extra result fields about the open file (e.g. HDF5 settings in effect)."""


class PosixWriter:
    """``os.open`` / ``os.pwrite`` / ``os.fsync``; ignores hints and collective."""

    def __init__(self, path: Path) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)

    def prepare(self, data: memoryview) -> memoryview:
        return data

    def write(self, offset: int, buf: memoryview) -> None:
        done = 0
        while done < len(buf):
            done += os.pwrite(self.fd, buf[done:], offset + done)

    def sync(self) -> None:
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)

    def hints(self) -> tuple[dict[str, str], str]:
        return {}, POSIX_HINTS_SOURCE

    def details(self) -> dict[str, Any]:
        return {}


class MpiioWriter:
    """``MPI_File_open`` with the hints; ``Write_at_all`` or ``Write_at``; ``Sync``."""

    def __init__(self, path: Path, comm: Any, info: Any, collective: bool) -> None:
        MPI = mpi.mpi()
        self.fh = MPI.File.Open(comm, os.fspath(path), MPI.MODE_CREATE | MPI.MODE_WRONLY, info)
        self.collective = collective

    def prepare(self, data: memoryview) -> list[Any]:
        return [data, mpi.mpi().BYTE]

    def write(self, offset: int, buf: list[Any]) -> None:
        if self.collective:
            self.fh.Write_at_all(offset, buf)
        else:
            self.fh.Write_at(offset, buf)

    def sync(self) -> None:
        self.fh.Sync()

    def close(self) -> None:
        self.fh.Close()

    def hints(self) -> tuple[dict[str, str], str]:
        return mpiio.file_hints(self.fh), "MPI_File_get_info on the open file"

    def details(self) -> dict[str, Any]:
        return {}


class Hdf5Writer:
    """One uint8 dataset per file, written by hyperslabs of one transfer each."""

    def __init__(
        self,
        path: Path,
        comm: Any,
        info: Any,
        options: hdf5.Hdf5Options,
        length: int,
        collective: bool,
    ) -> None:
        import h5py

        self.path, self.comm, self.info, self.options = path, comm, info, options
        self.file = hdf5.create_h5file(path, comm, info, options)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
        space = h5py.h5s.create_simple((length,))
        self.dset = h5py.h5d.create(
            self.file.id, DATASET.encode(), h5py.h5t.STD_U8LE, space, dcpl=dcpl
        )
        self.slabs = hdf5.Slabs(self.dset, collective)

    def prepare(self, data: memoryview) -> np.ndarray:
        import numpy as np

        return np.frombuffer(data, dtype=np.uint8)

    def write(self, offset: int, buf: np.ndarray) -> None:
        self.slabs.write(offset, buf)

    def sync(self) -> None:
        self.file.flush()

    def close(self) -> None:
        self.dset.close()
        self.file.close()

    def hints(self) -> tuple[dict[str, str], str]:
        return hdf5.h5file_hints(self.file, self.path, self.comm, self.info)

    def details(self) -> dict[str, Any]:
        return {
            "hdf5_version": hdf5.hdf5_version(),
            "hdf5_settings_in_effect": hdf5.hdf5_in_effect(self.file, self.options),
        }


def open_writer(ctx: harness.RunContext, pattern: Pattern, path: Path, comm: Any) -> Writer:
    """Open (create) this rank's file with the chosen api."""
    api = ctx.args.api
    if api == "posix":
        return PosixWriter(path)
    if api == "mpiio":
        return MpiioWriter(path, comm, ctx.info, ctx.collective)
    options = hdf5.Hdf5Options.from_args(ctx.args)
    return Hdf5Writer(path, comm, ctx.info, options, pattern.file_length, ctx.collective)


def write_pattern(
    ctx: harness.RunContext, pattern: Pattern, path: Path, comm: Any
) -> tuple[mpi.Phases, dict[str, str], str, dict[str, Any]]:
    """Timed write of this rank's pattern.

    Returns the phases, the hints in effect, how they were read, and extra result fields.

    The write phase counts only the write calls: filling each transfer buffer is untimed.
    """
    watch = mpi.Stopwatch(mpi.Phases())
    filler = Filler(pattern.transfer_size, pattern.tag)
    if ctx.args.api == "hdf5":
        hdf5.load()  # importing h5py is start-up, not part of opening the file
    ctx.comm.Barrier()
    with watch.phase("open"):
        writer = open_writer(ctx, pattern, path, comm)
    hints, source = writer.hints()
    details = writer.details()
    buf = writer.prepare(filler.buffer)
    for offset in pattern.offsets():
        filler.fill(offset)  # refills buf in place
        with watch.phase("write"):
            writer.write(offset, buf)
    with watch.phase("close"):
        if ctx.fsync:
            writer.sync()
        writer.close()
    return watch.phases, hints, source, details


def read_pattern(
    ctx: harness.RunContext, pattern: Pattern, path: Path, comm: Any
) -> tuple[readback.ReadPhases, dict[str, str], str, dict[str, Any]]:
    """Timed read of this rank's transfers with the write's api, transfer size and
    collective setting; the file must be settled (:func:`kit.readback.settle`).

    Returns the phases, the hints in effect on the file opened for reading, how they were
    read, and the ``read_check`` report (KernelError, exit 1, on a mismatch on any rank).
    """
    api = ctx.args.api

    def open_reader() -> readback.Reader:
        if api == "posix":
            return readback.PosixReader(path)
        if api == "mpiio":
            return readback.MpiioReader(path, comm, ctx.info, ctx.collective)
        return readback.Hdf5Reader(path, comm, ctx.info, hdf5.Hdf5Options.from_args(ctx.args),
                                   DATASET, ctx.collective)

    if api == "hdf5":
        hdf5.load()
    check = readback.ReadCheck(pattern.rank)
    phases, hints, source = readback.read_transfers(
        open_reader, ctx.comm, pattern.offsets(), pattern.transfer_size, check, path.name,
        lambda offsets: pattern_bytes_at(offsets, pattern.tag, pattern.transfer_size),
        head=HEADER_BYTES)
    return phases, hints, source, check.finish(ctx.comm)


def verify_pattern(
    ctx: harness.RunContext, pattern: Pattern, path: Path, comm: Any
) -> dict[str, Any]:
    """Read back this rank's transfers on every rank and compare with the pattern.

    Collective over the world communicator. Every byte is checked; the first mismatch
    reported is the one with the lowest (rank, offset).
    """
    checked = bad_total = 0
    mismatch: dict[str, Any] | None = None
    with _reader(ctx.args.api, path, comm) as read:
        for offset in pattern.offsets():
            got = read(offset, pattern.transfer_size)
            expected = pattern_bytes(offset, pattern.transfer_size, pattern.tag,
                                     pattern.transfer_size)
            checked += pattern.transfer_size
            problem = _compare_transfer(got, expected, offset)
            if problem is None:
                continue
            bad_total += problem.pop("bad")
            if mismatch is None:
                mismatch = {**problem, "file": path.name, "rank": pattern.rank}
                mismatch["_order"] = [pattern.rank, mismatch["offset"]]
    return harness.verify_report(ctx.comm, checked, bad_total, mismatch)


def _compare_transfer(got: np.ndarray, expected: np.ndarray, offset: int) -> dict[str, Any] | None:
    """The first differing byte of one transfer (with ``bad`` = how many), or ``None``."""
    import numpy as np

    if got.shape != expected.shape:
        return {"offset": offset, "problem": f"short read of {got.shape[0]} bytes",
                "bad": expected.shape[0]}  # fmt: skip
    bad = np.flatnonzero(got != expected)
    if bad.size == 0:
        return None
    i = int(bad[0])
    return {"offset": offset + i, "expected": int(expected[i]), "found": int(got[i]),
            "bad": int(bad.size)}  # fmt: skip


class _reader:
    """Context manager yielding ``read(offset, length) -> uint8 array`` for one file."""

    def __init__(self, api: str, path: Path, comm: Any) -> None:
        self.api, self.path, self.comm = api, path, comm
        self._close: Any = None

    def __enter__(self) -> Any:
        if self.api == "hdf5":
            h5file = hdf5.open_h5file_readonly(self.path, self.comm)
            dset = h5file[DATASET]
            self._close = h5file.close
            return lambda offset, length: dset[offset : offset + length]
        import numpy as np

        fd = os.open(self.path, os.O_RDONLY)
        self._close = lambda: os.close(fd)
        return lambda offset, length: np.frombuffer(os.pread(fd, length, offset), np.uint8)

    def __exit__(self, *exc: object) -> None:
        self._close()


def build_parser() -> arguments.KernelArgumentParser:
    """The ior command line (common flags plus the access pattern)."""
    parser = arguments.KernelArgumentParser(
        prog="ior.py",
        description=(
            "IOR-style write: each rank writes SEGMENTS blocks of BLOCK bytes in write calls "
            "of TRANSFER bytes, to one shared file or one file per rank, through POSIX, "
            "MPI-IO or HDF5. Total bytes = ranks x segments x block size. With --access read "
            "or both, each rank reads its transfers back with the same api and size."
        ),
        epilog=harness.COMMON_EPILOG + readback.READ_EPILOG
        + "\napi notes:\n  posix ignores --collective and MPI-IO hints (they are still "
        "recorded); HDF5 settings\n  (--alignment ...) need --api hdf5.\n",
    )
    arguments.add_params(parser.add_argument_group("access pattern"), own_params(IOR_PARAMS))
    harness.add_common_arguments(parser, collective_default=False)
    return parser


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Parse and cross-check the arguments (exit 2 with one line on a broken rule)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    harness.check_arguments(parser, args)
    if args.block_size % args.transfer_size:
        parser.error(
            f"--transfer-size {args.transfer_size} does not divide --block-size "
            f"{args.block_size} (each block is written in whole transfers)"
        )
    if args.api != "hdf5":
        for setting in hdf5.SETTINGS:
            if getattr(args, setting.name) is not None:
                parser.error(f"{setting.flag} applies only to --api hdf5 (got --api {args.api})")
    return args


def run(ctx: harness.RunContext) -> harness.Outcome:
    """The ior kernel body: write (timed unless ``--access read``), read back (timed, with
    ``--access read|both``), then optional verification."""
    args = ctx.args
    pattern = Pattern(
        rank=ctx.rank,
        ranks=ctx.size,
        block_size=args.block_size,
        transfer_size=args.transfer_size,
        segments=args.segments,
        file_per_process=args.file_per_process,
    )
    comm = mpi.mpi().COMM_SELF if args.file_per_process else ctx.comm
    path = ctx.run_dir / pattern.file_name(args.api)
    phases, hints, source, extra = write_pattern(ctx, pattern, path, comm)
    if readback.reads(args.access):
        cache = readback.settle(ctx.comm, [path])
        read, read_hints, read_source, check = read_pattern(ctx, pattern, path, comm)
        extra.update(readback.result_fields(ctx.comm, args.access, phases, read,
                                            pattern.bytes_per_rank * ctx.size, cache, check))
        if not readback.writes_timed(args.access):
            phases, hints, source = mpi.Phases(), read_hints, read_source
    verify = verify_pattern(ctx, pattern, path, comm) if args.verify else None
    return harness.Outcome(
        bytes_written=pattern.bytes_per_rank * ctx.size,
        phases=phases,
        params={
            "api": args.api,
            "block_size": args.block_size,
            "transfer_size": args.transfer_size,
            "segments": args.segments,
            "file_per_process": args.file_per_process,
            "files": ctx.size if args.file_per_process else 1,
            "access": args.access,
        },
        hints_in_effect=hints,
        hints_source=source + (" (rank 0's file)" if args.file_per_process else ""),
        verify=verify,
        extra=extra,
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the kernel, return the exit code."""
    args = parse_args(argv)
    return harness.run_kernel(KERNEL, args, run, collective_default=False)


if __name__ == "__main__":
    sys.exit(main())
