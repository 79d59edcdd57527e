"""A small multi-phase MPI application that traces its own I/O as Darshan's DXT would.

Run under a launcher (``mpiexec -n 2 python phased_app.py --dir D --trace T --phases ...``).
Each phase is ``op:request_size:requests_per_rank[:shared|fpp]``, e.g.
``write:1048576:256:shared``. In order, every phase:

1. meets at a barrier, then each rank issues its requests back to back through POSIX
   (``pwrite``/``pread``), rank ``r`` at offsets ``r * block + i * request`` of one shared
   file, or at ``i * request`` of its own file (``fpp``), ``block = request x requests``;
2. meets at a barrier again and pauses ``--pause`` seconds (the application's compute).

A write phase writes a new file; a read phase reads an input file that was written, synced
and evicted from the page cache before the first phase (data left by an earlier job, such
as a restart file), so its reads come from storage. With ``--direct yes`` every file is
opened with ``O_DIRECT`` (request sizes must be multiples of 4096 bytes).

Every request's start and end are taken relative to the barrier all ranks leave together
at the start, and rank 0 writes them in darshan-dxt-parser's text layout (``X_POSIX``
lines) to ``--trace``. The measured time of a phase is the span of its requests over all
ranks (earliest start to latest end), which is also what the trace shows; rank 0 prints
one JSON object: ``{"phases": [{"op", "request_size", "shared", "bytes", "measured_s",
"wall_s"}, ...]}`` where ``wall_s`` is barrier to barrier (opens and closes included).
"""

from __future__ import annotations

import argparse
import json
import mmap
import os
import sys
import time
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

DIRECT_ALIGNMENT = 4096


@dataclass(frozen=True)
class PhaseSpec:
    op: str
    request_size: int
    requests: int
    shared: bool

    @property
    def block(self) -> int:
        return self.request_size * self.requests


def parse_phase(text: str) -> PhaseSpec:
    parts = text.split(":")
    if len(parts) not in (3, 4) or parts[0] not in ("write", "read"):
        raise argparse.ArgumentTypeError(
            f"phase {text!r}: expected op:request_size:requests[:shared|fpp], op write|read")
    sharing = parts[3] if len(parts) == 4 else "shared"
    if sharing not in ("shared", "fpp"):
        raise argparse.ArgumentTypeError(f"phase {text!r}: sharing must be shared or fpp")
    try:
        size, count = int(parts[1]), int(parts[2])
    except ValueError:
        raise argparse.ArgumentTypeError(f"phase {text!r}: sizes must be integers") from None
    if size < 1 or count < 1:
        raise argparse.ArgumentTypeError(f"phase {text!r}: sizes must be positive")
    return PhaseSpec(parts[0], size, count, sharing == "shared")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="phased_app.py", description=__doc__.split("\n")[0])
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--trace", type=Path, required=True)
    parser.add_argument("--phases", type=lambda t: [parse_phase(p) for p in t.split(",")],
                        required=True)
    parser.add_argument("--pause", type=float, default=0.1, metavar="SECONDS")
    parser.add_argument("--direct", choices=("yes", "no"), default="no")
    args = parser.parse_args(argv)
    if args.direct == "yes":
        for p in args.phases:
            if p.request_size % DIRECT_ALIGNMENT:
                parser.error(f"--direct yes needs request sizes that are multiples of "
                             f"{DIRECT_ALIGNMENT} (got {p.request_size})")
    return args


def file_path(directory: Path, index: int, phase: PhaseSpec, rank: int) -> Path:
    name = f"phase{index}" + ("" if phase.shared else f".{rank:08d}") + ".dat"
    return directory / name


def write_file(path: Path, offsets: list[int], buf: memoryview, direct: bool) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | (os.O_DIRECT if direct else 0), 0o644)
    try:
        for offset in offsets:
            os.pwrite(fd, buf, offset)
        os.fsync(fd)
    finally:
        os.close(fd)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    rank, ranks = world.rank, world.size
    direct = args.direct == "yes"
    flag = os.O_DIRECT if direct else 0
    buffers: dict[int, memoryview] = {}
    for p in args.phases:
        if p.request_size not in buffers:
            buffers[p.request_size] = memoryview(mmap.mmap(-1, p.request_size))

    def offsets(p: PhaseSpec) -> list[int]:
        base = rank * p.block if p.shared else 0
        return [base + i * p.request_size for i in range(p.requests)]

    # Input files of the read phases, left by "an earlier job": synced and evicted.
    for i, p in enumerate(args.phases):
        if p.op == "read":
            write_file(file_path(args.dir, i, p, rank), offsets(p), buffers[p.request_size],
                       direct)
    world.Barrier()
    for i, p in enumerate(args.phases):
        if p.op == "read" and (rank == 0 or not p.shared):
            fd = os.open(file_path(args.dir, i, p, rank), os.O_RDONLY)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            os.close(fd)

    records: list[tuple[int, str, int, int, float, float]] = []  # phase, op, offset, len, s, e
    walls: list[float] = []
    world.Barrier()
    zero = time.perf_counter()
    for i, p in enumerate(args.phases):
        buf = buffers[p.request_size]
        path = file_path(args.dir, i, p, rank)
        world.Barrier()
        wall0 = time.perf_counter()
        if p.op == "write":
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | flag, 0o644)
        else:
            fd = os.open(path, os.O_RDONLY | flag)
        for offset in offsets(p):
            start = time.perf_counter() - zero
            if p.op == "write":
                os.pwrite(fd, buf, offset)
            else:
                os.preadv(fd, [buf], offset)
            records.append((i, p.op, offset, p.request_size, start,
                            time.perf_counter() - zero))
        os.close(fd)
        world.Barrier()
        walls.append(time.perf_counter() - wall0)
        time.sleep(args.pause)

    gathered = world.gather(records, root=0)
    if rank == 0:
        assert gathered is not None
        write_trace(args.trace, args.dir, args.phases, gathered)
        rows = []
        for i, p in enumerate(args.phases):
            mine = [r for recs in gathered for r in recs if r[0] == i]
            rows.append({"op": p.op, "request_size": p.request_size, "shared": p.shared,
                         "bytes": sum(r[3] for r in mine),
                         "measured_s": max(r[5] for r in mine) - min(r[4] for r in mine),
                         "wall_s": walls[i]})
        print(json.dumps({"ranks": ranks, "direct": direct, "phases": rows}))
    world.Barrier()
    for i, p in enumerate(args.phases):
        if rank == 0 or not p.shared:
            file_path(args.dir, i, p, rank).unlink(missing_ok=True)
    world.Barrier()
    if rank == 0:
        os.sync()  # pay for freeing the blocks here, not in the next program's I/O
    return 0


def write_trace(path: Path, directory: Path, phases: list[PhaseSpec],
                gathered: list[list[tuple[int, str, int, int, float, float]]]) -> None:
    """darshan-dxt-parser's text layout: a header per file and rank, one line per request."""
    lines = ["# darshan log version: 3.41 (traced by phased_app.py)"]
    for rank, recs in enumerate(gathered):
        for i, p in enumerate(phases):
            mine = [r for r in recs if r[0] == i]
            name = str(file_path(directory, i, p, rank))
            file_id = zlib.crc32(name.encode())
            lines += ["", f"# DXT, file_id: {file_id}, file_name: {name}",
                      f"# DXT, rank: {rank}, hostname: localhost",
                      "# Module    Rank  Wt/Rd  Segment          Offset       Length    "
                      "Start(s)      End(s)"]
            for seg, (_, op, offset, length, start, end) in enumerate(mine):
                lines.append(f" X_POSIX {rank:7d} {op:>6} {seg:8d} {offset:15d} {length:15d} "
                             f"{start:11.6f} {end:11.6f}")
    path.write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
