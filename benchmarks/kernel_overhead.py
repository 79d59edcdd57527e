"""How much does the VPIC-IO kernel cost over a bare MPI-IO write of the same bytes?

In one MPI run, in turn:

(a) the vpic kernel's timed write path (``vpicio.write_particles``: HDF5 file, one group,
    eight datasets, each rank its slab of each; collective unless ``--collective no``),
(b) a bare ``MPI_File_write_at_all`` of the same number of bytes per rank, each rank at
    ``rank * bytes_per_rank`` of one shared file, and
(c) for reference, bare MPI-IO with the kernel's file layout: eight ``Write_at_all`` per
    rank, each at its slab of one dataset's region (what HDF5 asks MPI-IO to do, minus
    HDF5 and Python),

with default hints, fsync inside the timed region and timed the same way
(barrier, open + write + fsync + close per rank, maximum over ranks). Each repetition
writes fresh files, all removed at the end (deleting large files between measurements
disturbs the next one, e.g. on file systems mounted with online discard). Before every
measurement the page cache is synced and the run pauses (``--pause``), and the order of
the variants rotates between repetitions; one untimed round of each comes first (the
first HDF5 and MPI-IO calls of a process pay one-off start-up costs). Prints every
repetition, the median bandwidths and the median of the per-repetition ratios
kernel_bw / bare_bw (the headline figure) and kernel_bw / bare_layout_bw. Last, the fixed
cost per file: the median time of each variant writing only 16 particles per rank, which
storage noise hardly affects.

Usage (launches itself with mpiexec when not already under a launcher)::

    python benchmarks/kernel_overhead.py --ranks 2 --mib-per-rank 64 --reps 5
    mpiexec -n 2 python benchmarks/kernel_overhead.py --mib-per-rank 64 --reps 5
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

KERNELS = Path(__file__).resolve().parent.parent / "kernels"
if str(KERNELS) not in sys.path:
    sys.path.insert(0, str(KERNELS))

import vpicio  # noqa: E402  (needs the kernels directory on sys.path)
from kit import hdf5, mpi, rundir  # noqa: E402

from iotune.settings.units import MIB  # noqa: E402

LAUNCHER_VARIABLES = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK")
TARGET_RATIO = 0.9
FIXED_COST_PARTICLES = 16
FIXED_COST_REPS = 21


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line of the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2, help="ranks when self-launching")
    parser.add_argument("--mib-per-rank", type=int, default=64, help="MiB written per rank")
    parser.add_argument("--reps", type=int, default=5, help="repetitions of each variant")
    parser.add_argument(
        "--scratch",
        default=tempfile.gettempdir(),
        help="directory for the files (a fresh subdirectory is made and removed); it needs "
        "3 x (reps + 1) x ranks x mib-per-rank MiB free",
    )
    parser.add_argument(
        "--collective",
        choices=("yes", "no"),
        default="yes",
        help="kernel data writes collective (yes, the kernel's default) or independent; the "
        "bare write is always Write_at_all",
    )
    parser.add_argument(
        "--pause",
        type=float,
        default=1.0,
        help="seconds to wait (after a sync) before each measurement (default 1)",
    )
    parser.add_argument("--mpiexec", default="mpiexec", help="launcher used when self-launching")
    args = parser.parse_args(argv)
    if args.mib_per_rank < 1 or args.reps < 1 or args.ranks < 1 or args.pause < 0:
        parser.error("--ranks, --mib-per-rank and --reps must be positive, --pause >= 0")
    return args


def under_launcher() -> bool:
    """True when an MPI launcher started this process."""
    return any(name in os.environ for name in LAUNCHER_VARIABLES)


def bare_write(comm: Any, path: Path, pieces: Sequence[tuple[int, np.ndarray]]) -> mpi.Phases:
    """Barrier, open, one ``Write_at_all`` per (offset, buffer) piece, Sync and Close."""
    MPI = mpi.mpi()
    watch = mpi.Stopwatch()
    comm.Barrier()
    with watch.phase("open"):
        fh = MPI.File.Open(comm, os.fspath(path), MPI.MODE_CREATE | MPI.MODE_WRONLY)
    with watch.phase("write"):
        for offset, buf in pieces:
            fh.Write_at_all(offset, buf)
    with watch.phase("close"):
        fh.Sync()
        fh.Close()
    return watch.phases


def settle(comm: Any, pause: float) -> None:
    """Let storage reach the same state before every measurement: sync, wait, barrier.

    Storage with write-back caches or burst credits (common on virtual machines) makes the
    n-th write of a series faster or slower depending on what came just before; without
    this, the rotation order of the variants leaks into their figures.
    """
    if comm.rank == 0:
        os.sync()
        time.sleep(pause)
    comm.Barrier()


def bandwidth(comm: Any, phases: mpi.Phases, total_bytes: int) -> tuple[float, float]:
    """(MiB/s, seconds) from the maximum total time over ranks."""
    seconds = mpi.max_phases(comm, phases)["total"]
    return total_bytes / seconds / MIB, seconds


class Variants:
    """The three writes of the same bytes, each a function of a file path."""

    NAMES = ("kernel", "bare", "bare_layout")

    def __init__(self, comm: Any, particles: int, collective: bool) -> None:
        self.comm = comm
        self.collective = collective
        self.layout = vpicio.compute_layout(comm, particles)
        self.steps = [vpicio.make_step_data(self.layout, 0)]
        data = self.steps[0]
        whole = np.concatenate([data[name].view(np.uint8) for name, _ in vpicio.DATASETS])
        self.bytes_per_rank = whole.nbytes
        self.bare_pieces = [(comm.rank * whole.nbytes, whole)]
        self.layout_pieces = []
        for index, (name, dtype) in enumerate(vpicio.DATASETS):
            start = (index * self.layout.total + self.layout.offset) * dtype.itemsize
            self.layout_pieces.append((start, data[name]))

    def write(self, name: str, path: Path) -> mpi.Phases:
        """Run variant ``name`` writing to ``path``; returns this rank's phases."""
        if name == "kernel":
            return vpicio.write_particles(
                self.comm, path, mpi.mpi().INFO_NULL, hdf5.Hdf5Options(), self.steps,
                self.layout, collective=self.collective, fsync=True,
            )  # fmt: skip
        pieces = self.bare_pieces if name == "bare" else self.layout_pieces
        return bare_write(self.comm, path, pieces)


def measure(args: argparse.Namespace) -> int:
    """The benchmark body, run on every rank."""
    comm = mpi.mpi().COMM_WORLD
    particles = args.mib_per_rank * MIB // vpicio.BYTES_PER_PARTICLE
    collective = args.collective == "yes"
    variants = Variants(comm, particles, collective)
    total_bytes = variants.bytes_per_rank * comm.size
    run_dir = Path(comm.bcast(_make_dir(args.scratch) if comm.rank == 0 else None, root=0))
    say = print if comm.rank == 0 else (lambda *_a, **_k: None)
    say(
        f"kernel_overhead: {comm.size} ranks x {args.mib_per_rank} MiB "
        f"({particles} particles/rank), kernel writes "
        f"{'collective' if collective else 'independent'}, fsync, default hints, {args.reps} reps"
    )
    say(f"files in {run_dir} ({rundir.detect_filesystem(run_dir)['type']})")
    say("kernel = vpicio.write_particles; bare = one Write_at_all per rank; "
        "bare_layout = 8 Write_at_all per rank at the VPIC dataset offsets")  # fmt: skip
    bws: dict[str, list[float]] = {name: [] for name in Variants.NAMES}

    def run(name: str, tag: str) -> tuple[float, float]:
        settle(comm, args.pause)
        path = run_dir / f"{name}-{tag}.{'h5' if name == 'kernel' else 'dat'}"
        return bandwidth(comm, variants.write(name, path), total_bytes)

    try:
        warm = {name: run(name, "warmup")[0] for name in Variants.NAMES}
        say("warm-up (not counted): " + ", ".join(f"{k} {v:.1f} MiB/s" for k, v in warm.items()))
        for rep in range(args.reps):
            shift = rep % len(Variants.NAMES)
            order = Variants.NAMES[shift:] + Variants.NAMES[:shift]
            figures = {name: run(name, str(rep)) for name in order}
            for name, (bw, _) in figures.items():
                bws[name].append(bw)
            cells = [
                f"{n} {figures[n][0]:7.1f} MiB/s ({figures[n][1]:.3f} s)" for n in Variants.NAMES
            ]
            ratio = figures["kernel"][0] / figures["bare"][0]
            say(f"rep {rep + 1}: " + "   ".join(cells) + f"   kernel/bare {ratio:.3f}")
        fixed = fixed_costs(comm, run_dir, collective, FIXED_COST_REPS)
    finally:
        comm.Barrier()
        if comm.rank == 0:
            rundir.remove_run_dir(run_dir, args.scratch, "overhead")
    report(say, bws)
    say(
        f"fixed cost per file ({FIXED_COST_PARTICLES} particles/rank, median of "
        f"{FIXED_COST_REPS}): kernel {fixed['kernel'] * 1e3:.2f} ms, bare "
        f"{fixed['bare'] * 1e3:.2f} ms, bare_layout {fixed['bare_layout'] * 1e3:.2f} ms"
    )
    return 0


def fixed_costs(comm: Any, run_dir: Path, collective: bool, reps: int) -> dict[str, float]:
    """Median total seconds per variant for a tiny write: the cost that is not data movement.

    Storage noise hardly touches these figures, so they show the kernel's own overhead
    (HDF5 file, groups, datasets, metadata flush, Python) even when bandwidths scatter.
    """
    tiny = Variants(comm, FIXED_COST_PARTICLES, collective)
    seconds: dict[str, list[float]] = {name: [] for name in Variants.NAMES}
    for rep in range(reps + 1):
        for name in Variants.NAMES:
            path = run_dir / f"tiny-{name}-{rep}"
            total = mpi.max_phases(comm, tiny.write(name, path))["total"]
            if rep:  # the first round is a warm-up
                seconds[name].append(total)
    return {name: statistics.median(values) for name, values in seconds.items()}


def report(say: Any, bws: dict[str, list[float]]) -> None:
    """Print medians and the median per-repetition ratios."""
    for name, values in bws.items():
        say(f"median {name} bandwidth: {statistics.median(values):.1f} MiB/s")
    vs_layout = statistics.median(
        k / b for k, b in zip(bws["kernel"], bws["bare_layout"], strict=True)
    )
    say(f"median ratio kernel_bw / bare_layout_bw: {vs_layout:.3f} (HDF5 + Python cost alone)")
    ratio = statistics.median(k / b for k, b in zip(bws["kernel"], bws["bare"], strict=True))
    verdict = "meets" if ratio >= TARGET_RATIO else "misses"
    say(f"median ratio kernel_bw / bare_bw: {ratio:.3f} ({verdict} target >= {TARGET_RATIO})")


def _make_dir(scratch: str) -> str:
    return str(rundir.create_run_dir(scratch, "overhead", None))


def main(argv: Sequence[str] | None = None) -> int:
    """Run under the current launcher, or start ``mpiexec -n RANKS`` on this script."""
    args = parse_args(argv)
    if under_launcher():
        return measure(args)
    command = [args.mpiexec, "-n", str(args.ranks), sys.executable, os.fspath(__file__)]
    command += list(sys.argv[1:] if argv is None else argv)
    return subprocess.run(command, check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
