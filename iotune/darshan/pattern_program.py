"""The MPI program ``iotune characterize`` runs: one phase pattern, written or read, timed.

Started by a launcher (``mpiexec -n RANKS python pattern_program.py ...``), never imported
by the driver. Every rank moves ``--block-size`` bytes in requests of ``--transfer-size``
bytes, rank ``r`` at offsets ``r * block + i * transfer`` of one shared file or at
``i * transfer`` of its own file, as IOR does with one segment. Requests go through POSIX
(``pwrite``/``pread``) or MPI-IO (``MPI_File_write_at``/``read_at``, independent).
With MPI-IO, ``--collective yes`` makes them collective (``MPI_File_write_at_all``) and
``--nonblocking yes`` non-blocking (``MPI_File_iwrite_at[_all]``: every request of the
rank is started, then all are waited for), as a traced phase's access mode was.

* ``--op write`` times the writes of a new file.
* ``--op read`` first writes the file (untimed), syncs it and evicts it from the page
  cache (``posix_fadvise(DONTNEED)``), so the timed reads come from storage: the file
  system, not the memory of this node, is characterised.
* ``--direct yes`` opens the POSIX files with ``O_DIRECT`` (the page cache is bypassed for
  writes and reads); transfer sizes must then be multiples of 4096 bytes.

The measured time is the span of the timed requests over all ranks, from the earliest
request's start to the latest request's end, each rank's times taken relative to the
barrier all ranks leave together: the quantity a DXT trace gives as a phase's wall time.
The files are removed at the end and the removal synced, so the next run does not pay
for freeing this one's blocks.
Rank 0 prints one JSON object on stdout::

    {"op": "read", "ranks": 2, "bytes_read": 134217728, "times_s": {"read": 0.091}, ...}

Errors are one line on stderr and exit status 2 (bad arguments) or 1 (I/O failure).
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

#: O_DIRECT needs buffers, offsets and lengths aligned to the device's logical block;
#: 4096 covers every common device (512-byte and 4 KiB sectors).
DIRECT_ALIGNMENT = 4096


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="pattern_program.py",
                                     description="Time one write or read pattern.")
    parser.add_argument("--dir", type=Path, required=True, help="existing directory for files")
    parser.add_argument("--op", choices=("write", "read"), required=True)
    parser.add_argument("--api", choices=("posix", "mpiio"), default="posix")
    parser.add_argument("--transfer-size", type=int, required=True, metavar="BYTES")
    parser.add_argument("--block-size", type=int, required=True, metavar="BYTES")
    parser.add_argument("--file-per-process", choices=("yes", "no"), default="no")
    parser.add_argument("--direct", choices=("yes", "no"), default="no")
    parser.add_argument("--collective", choices=("yes", "no"), default="no")
    parser.add_argument("--nonblocking", choices=("yes", "no"), default="no")
    args = parser.parse_args(argv)
    if args.api != "mpiio" and "yes" in (args.collective, args.nonblocking):
        parser.error("--collective yes and --nonblocking yes need --api mpiio")
    if args.transfer_size < 1 or args.block_size < args.transfer_size or \
            args.block_size % args.transfer_size:
        parser.error(f"--transfer-size {args.transfer_size} must be positive and divide "
                     f"--block-size {args.block_size}")
    if args.direct == "yes":
        if args.api != "posix":
            parser.error("--direct yes needs --api posix (MPI-IO has no O_DIRECT here)")
        if args.transfer_size % DIRECT_ALIGNMENT:
            parser.error(f"--direct yes needs --transfer-size a multiple of "
                         f"{DIRECT_ALIGNMENT} (got {args.transfer_size})")
    return args


def aligned_buffer(size: int, fill: int) -> memoryview:
    """A page-aligned buffer of ``size`` bytes (anonymous mmap), every byte ``fill``."""
    buf = mmap.mmap(-1, size)
    buf.write(bytes([fill]) * size)
    return memoryview(buf)


class PosixFile:
    def __init__(self, path: Path, write: bool, direct: bool) -> None:
        flags = (os.O_WRONLY | os.O_CREAT) if write else os.O_RDONLY
        if direct:
            flags |= os.O_DIRECT
        self.fd = os.open(path, flags, 0o644)

    def write(self, offset: int, buf: memoryview) -> None:
        done = 0
        while done < len(buf):
            done += os.pwrite(self.fd, buf[done:], offset + done)

    def read(self, offset: int, buf: memoryview) -> None:
        done = 0
        while done < len(buf):
            got = os.preadv(self.fd, [buf[done:]], offset + done)
            if got == 0:
                raise OSError(f"short read at offset {offset + done}")
            done += got

    def wait(self) -> None:
        """Nothing is pending: POSIX requests block."""

    def sync(self) -> None:
        os.fsync(self.fd)

    def close(self) -> None:
        os.close(self.fd)


class MpiioFile:
    def __init__(self, path: Path, write: bool, comm: Any, collective: bool = False,
                 nonblocking: bool = False) -> None:
        from mpi4py import MPI

        mode = (MPI.MODE_CREATE | MPI.MODE_WRONLY) if write else MPI.MODE_RDONLY
        self.fh = MPI.File.Open(comm, os.fspath(path), mode)
        self.collective = collective
        self.nonblocking = nonblocking
        self.pending: list[Any] = []
        self._write = self._call("write")
        self._read = self._call("read")

    def _call(self, kind: str) -> Any:
        """The file's MPI-IO function for ``kind`` (write or read) in this mode:
        ``Write_at``, ``Write_at_all``, ``Iwrite_at`` or ``Iwrite_at_all`` (reads alike)."""
        name = f"I{kind}" if self.nonblocking else kind.capitalize()
        return getattr(self.fh, name + ("_at_all" if self.collective else "_at"))

    def write(self, offset: int, buf: memoryview) -> None:
        self._started(self._write(offset, buf))

    def read(self, offset: int, buf: memoryview) -> None:
        self._started(self._read(offset, buf))

    def _started(self, request: Any) -> None:
        """Keep a non-blocking call's request for :meth:`wait` (a blocking one has none)."""
        if self.nonblocking:
            self.pending.append(request)

    def wait(self) -> None:
        """Complete the non-blocking requests started so far."""
        from mpi4py import MPI

        if self.pending:
            MPI.Request.Waitall(self.pending)
            self.pending = []

    def sync(self) -> None:
        self.wait()
        self.fh.Sync()

    def close(self) -> None:
        self.wait()
        self.fh.Close()


def evict(path: Path) -> None:
    """Drop the file's (clean) pages from the page cache."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank, ranks = world.rank, world.size
    fpp = args.file_per_process == "yes"
    direct = args.direct == "yes"
    comm = MPI.COMM_SELF if fpp else world
    path = args.dir / (f"pattern.{rank:08d}.dat" if fpp else "pattern.dat")
    base = 0 if fpp else rank * args.block_size
    offsets = [base + i * args.transfer_size
               for i in range(args.block_size // args.transfer_size)]
    buf = aligned_buffer(args.transfer_size, 0x5A)

    def open_file(write: bool) -> PosixFile | MpiioFile:
        if args.api == "mpiio":
            return MpiioFile(path, write, comm, args.collective == "yes",
                             args.nonblocking == "yes")
        return PosixFile(path, write, direct)

    try:
        if args.op == "read":
            f = open_file(True)
            for offset in offsets:
                f.write(offset, buf)
            f.sync()
            f.close()
            world.Barrier()
            if fpp or rank == 0:
                evict(path)
        f = open_file(args.op == "write")
        world.Barrier()
        zero = time.perf_counter()
        first = time.perf_counter() - zero
        for offset in offsets:
            if args.op == "write":
                f.write(offset, buf)
            else:
                f.read(offset, buf)
        f.wait()
        last = time.perf_counter() - zero
        f.close()
    except OSError as exc:
        sys.stderr.write(f"pattern_program: rank {rank}: {exc}\n")
        world.Abort(1)
        return 1
    spans = world.gather((first, last), root=0)
    if rank == 0:
        assert spans is not None
        span = max(e for _, e in spans) - min(s for s, _ in spans)
        moved = ranks * args.block_size
        for p in ([args.dir / f"pattern.{r:08d}.dat" for r in range(ranks)] if fpp
                  else [path]):
            p.unlink(missing_ok=True)
        # Freeing the blocks (discards, on file systems mounted with online discard) is
        # paid here, outside any timed region, not by the next measurement.
        os.sync()
        print(json.dumps({
            "op": args.op, "api": args.api, "ranks": ranks, "direct": direct,
            "transfer_size": args.transfer_size, "block_size": args.block_size,
            "file_per_process": fpp, "collective": args.collective == "yes",
            "nonblocking": args.nonblocking == "yes",
            f"bytes_{'written' if args.op == 'write' else 'read'}": moved,
            "times_s": {args.op: span}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
