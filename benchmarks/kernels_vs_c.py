"""How close is the IOR-style kernel to a bare C writer, inside the timed region and around it?

Builds ``benchmarks/c/bare_writer.c`` with ``mpicc`` (POSIX and MPI-IO) and with
``h5pcc -shlib`` (HDF5, the shared library h5py uses too) into a temporary directory, then
for each repetition, size and api runs, in an order that alternates between repetitions,

(a) ``mpiexec -n RANKS bare_writer --api API ...``   the physical reference, and
(b) ``mpiexec -n RANKS python kernels/ior.py --api API ...``   our kernel,

at equal bytes and settings: one shared file, each rank one block of ``--mib-per-rank`` MiB
in 1 MiB write calls, fsync inside the timed region, default hints. Both programs time the
same region (barrier; open, write calls, fsync and close per rank; maximum over ranks) and
print it as JSON; this driver also times each whole process (``mpiexec`` start to exit).
Before every process the page cache is synced and the driver pauses (``--pause``), as in
``kernel_overhead.py``: write-back caches otherwise let one run's data slow the next.

Prints every repetition, then per api and size the median in-region bandwidth of C and of
the kernel, the median of the per-repetition ratios kernel / C, and the start-up overhead
(process wall time minus in-region time) of each. Last, what the Python start-up is made
of, from a probe process run under the same launcher: the launcher plus ``MPI_Init`` alone
(the C writer with ``--init-only``), the interpreter alone (``python -c pass``), and inside
the probe the import of the kernel module and the import of ``mpi4py.MPI`` (which runs
``MPI_Init``) timed separately, plus whether h5py got imported.

Usage::

    python benchmarks/kernels_vs_c.py --ranks 2 --mib-per-rank 64,256 --reps 9
    python benchmarks/kernels_vs_c.py --apis mpiio-coll,hdf5 --mib-per-rank 64 --reps 3
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from quick_mode import add_quick, apply_quick

from iotune.settings.units import MIB

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"kernel start-up over C, median of all runs\s+[0-9.]+ s \((meets|misses) the target"

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "benchmarks" / "c" / "bare_writer.c"
KERNEL = ROOT / "kernels" / "ior.py"
TARGET_RATIO = 0.95
TARGET_STARTUP_S = 0.15

#: Benchmark api name -> (--api value, collective).
CASES = {
    "posix": ("posix", False),
    "mpiio-indep": ("mpiio", False),
    "mpiio-coll": ("mpiio", True),
    "hdf5": ("hdf5", False),
    "hdf5-coll": ("hdf5", True),
}
DEFAULT_APIS = "posix,mpiio-indep,mpiio-coll,hdf5"

PROBE = """\
import json, sys, time
t0 = time.perf_counter()
sys.path.insert(0, {kernels!r})
import ior
t1 = time.perf_counter()
from mpi4py import MPI
t2 = time.perf_counter()
if MPI.COMM_WORLD.rank == 0:
    print(json.dumps({{"import_kernel_s": t1 - t0, "import_mpi4py_s": t2 - t1,
                      "h5py_imported": "h5py" in sys.modules,
                      "numpy_imported": "numpy" in sys.modules}}))
"""


def csv_of(kind: type, text: str) -> list[Any]:
    """argparse helper: a comma-separated list of ``kind``."""
    try:
        return [kind(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list") from None


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line of the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2, help="MPI ranks (default 2)")
    parser.add_argument(
        "--mib-per-rank",
        type=lambda text: csv_of(int, text),
        default=[64, 256],
        help="MiB written per rank, comma-separated sizes (default 64,256)",
    )
    parser.add_argument("--reps", type=int, default=5, help="repetitions (default 5)")
    parser.add_argument(
        "--apis",
        type=lambda text: csv_of(str, text),
        default=DEFAULT_APIS.split(","),
        help=f"comma-separated, from {', '.join(CASES)} (default {DEFAULT_APIS})",
    )
    parser.add_argument("--transfer-mib", type=int, default=1, help="MiB per write call")
    parser.add_argument(
        "--scratch",
        default=tempfile.gettempdir(),
        help="directory for the files (a fresh subdirectory is made and removed); it needs "
        "ranks x the largest size free",
    )
    parser.add_argument(
        "--pause", type=float, default=1.0, help="seconds to wait after a sync before each run"
    )
    parser.add_argument("--mpiexec", default="mpiexec", help="MPI launcher")
    parser.add_argument("--python", default=sys.executable, help="interpreter for the kernel")
    add_quick(parser, "4 MiB per rank, one repetition, no pause")
    args = apply_quick(parser, parser.parse_args(argv), mib_per_rank=[4], reps=1, pause=0.0)
    unknown = [name for name in args.apis if name not in CASES]
    if unknown:
        parser.error(f"--apis {','.join(unknown)}: expected names from {', '.join(CASES)}")
    positive = (args.ranks, args.reps, args.transfer_mib, *args.mib_per_rank)
    if min(positive) < 1 or args.pause < 0 or not args.mib_per_rank:
        parser.error("--ranks, --reps, --transfer-mib and --mib-per-rank must be positive")
    if any(size % args.transfer_mib for size in args.mib_per_rank):
        parser.error("--transfer-mib must divide every --mib-per-rank size")
    return args


def build(build_dir: Path) -> dict[str, Path]:
    """Compile the C writer: ``plain`` with mpicc, ``hdf5`` with h5pcc (shared libhdf5)."""
    binaries = {"plain": build_dir / "bare_writer", "hdf5": build_dir / "bare_writer_hdf5"}
    commands = [
        ["mpicc", "-O2", os.fspath(SOURCE), "-o", os.fspath(binaries["plain"])],
        ["h5pcc", "-shlib", "-O2", "-DWITH_HDF5", os.fspath(SOURCE), "-o",
         os.fspath(binaries["hdf5"])],
    ]  # fmt: skip
    for command in commands:
        # h5pcc leaves an object file in its working directory: keep it in the build dir.
        done = subprocess.run(command, cwd=build_dir, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"kernels_vs_c: {' '.join(command)} failed:\n{done.stderr}")
    return binaries


@dataclass
class Run:
    """One process: in-region seconds (max over ranks), wall seconds and CPU seconds."""

    region: float
    wall: float
    cpu: float

    @property
    def startup(self) -> float:
        """Everything outside the timed region: launch, start-up, setup, teardown."""
        return self.wall - self.region


def children_cpu() -> float:
    """User + system CPU seconds of every finished descendant process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[dict[str, Any], float, float]:
    """Run ``command``; return its last JSON stdout line, its wall time and its CPU time.

    The CPU time (user + system, the launcher and every rank) hardly depends on what else
    runs on the machine, unlike the wall time.
    """
    cpu = children_cpu()
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    cpu = children_cpu() - cpu
    if done.returncode != 0:
        raise SystemExit(
            f"kernels_vs_c: {' '.join(command)} exited {done.returncode}:\n{done.stderr}"
        )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    return (json.loads(lines[-1]) if lines else {}), wall, cpu


def settle(pause: float) -> None:
    """Sync the page cache and wait, so every run starts from the same storage state."""
    os.sync()
    time.sleep(pause)


class Programs:
    """The command lines of both programs for one api and size."""

    def __init__(self, args: argparse.Namespace, binaries: dict[str, Path], work: Path) -> None:
        self.args, self.binaries, self.work = args, binaries, work

    def common(self, case: str, mib: int) -> list[str]:
        api, collective = CASES[case]
        return [
            "--api", api, "--block-size", str(mib * MIB),
            "--transfer-size", str(self.args.transfer_mib * MIB), "--segments", "1",
            "--file-per-process", "no", "--collective", "yes" if collective else "no",
            "--fsync", "yes",
        ]  # fmt: skip

    def run_c(self, case: str, mib: int) -> Run:
        binary = self.binaries["hdf5" if CASES[case][0] == "hdf5" else "plain"]
        target = Path(tempfile.mkdtemp(prefix="c-", dir=self.work))
        command = [self.args.mpiexec, "-n", str(self.args.ranks), os.fspath(binary)]
        result, wall, cpu = timed(command + self.common(case, mib) + ["--dir", os.fspath(target)])
        target.rmdir()  # the writer removed its file; an error here means it did not
        return Run(region=float(result["times_s"]["total"]), wall=wall, cpu=cpu)

    def run_python(self, case: str, mib: int) -> Run:
        command = [self.args.mpiexec, "-n", str(self.args.ranks), self.args.python,
                   os.fspath(KERNEL)]  # fmt: skip
        result, wall, cpu = timed(command + self.common(case, mib) + ["--scratch", str(self.work)])
        return Run(region=float(result["times_s"]["total"]), wall=wall, cpu=cpu)


def startup_probe(args: argparse.Namespace, binaries: dict[str, Path]) -> dict[str, float]:
    """One round of the start-up probes (see the module docstring); seconds."""
    launcher = [args.mpiexec, "-n", str(args.ranks)]
    _, launch_only, _ = timed([*launcher, "true"])
    _, launch_c, _ = timed([*launcher, os.fspath(binaries["plain"]), "--init-only"])
    _, interpreter, _ = timed([*launcher, args.python, "-c", "pass"])
    code = PROBE.format(kernels=os.fspath(KERNEL.parent))
    probe, probe_wall, _ = timed([*launcher, args.python, "-c", code])
    return {
        "launch_only": launch_only,
        "launch_c": launch_c,
        "interpreter": interpreter,
        "probe_wall": probe_wall,
        "import_kernel": float(probe["import_kernel_s"]),
        "import_mpi4py": float(probe["import_mpi4py_s"]),
        "h5py_imported": float(probe["h5py_imported"]),
        "numpy_imported": float(probe["numpy_imported"]),
    }


def measure(args: argparse.Namespace, binaries: dict[str, Path], work: Path) -> None:
    """Run everything and print as it goes, then the summary."""
    programs = Programs(args, binaries, work)
    runs: dict[tuple[str, int, str], list[Run]] = {}
    probes: list[dict[str, float]] = []
    for case in args.apis:  # one untimed round: first-touch costs of files and libraries
        programs.run_c(case, args.transfer_mib)
        programs.run_python(case, args.transfer_mib)
    for rep in range(args.reps):
        for mib in args.mib_per_rank:
            for case in args.apis:
                order = ("c", "python") if rep % 2 == 0 else ("python", "c")
                figures: dict[str, Run] = {}
                for name in order:
                    settle(args.pause)
                    run = programs.run_c if name == "c" else programs.run_python
                    figures[name] = run(case, mib)
                    runs.setdefault((case, mib, name), []).append(figures[name])
                total = args.ranks * mib
                c, py = figures["c"], figures["python"]
                print(
                    f"rep {rep + 1} {case:<11} {mib:>4} MiB/rank: "
                    f"C {total / c.region:7.1f} MiB/s (region {c.region:.3f} s, wall "
                    f"{c.wall:.3f} s)  kernel {total / py.region:7.1f} MiB/s (region "
                    f"{py.region:.3f} s, wall {py.wall:.3f} s)  ratio {c.region / py.region:.3f}",
                    flush=True,
                )
        probes.append(startup_probe(args, binaries))
    summary(args, runs, probes)


def summary(
    args: argparse.Namespace,
    runs: dict[tuple[str, int, str], list[Run]],
    probes: list[dict[str, float]],
) -> None:
    """Medians per api and size, then the start-up breakdown."""
    med = statistics.median
    print(f"\nmedians over {args.reps} reps, {args.ranks} ranks, fsync, default hints; "
          "start-up = process wall - in-region time; CPU = user + system of all processes")
    print(f"{'api':<11} {'MiB/rank':>8} {'C MiB/s':>8} {'kernel':>8} {'ratio':>6}   "
          f"{'start-up s: C':>13} {'kernel':>7} {'extra':>6}   {'CPU s: C':>8} {'kernel':>7}")
    extras: list[float] = []
    for mib in args.mib_per_rank:
        for case in args.apis:
            c, py = runs[(case, mib, "c")], runs[(case, mib, "python")]
            total = args.ranks * mib
            ratio = med(a.region / b.region for a, b in zip(c, py, strict=True))
            extra = [b.startup - a.startup for a, b in zip(c, py, strict=True)]
            extras += extra
            mark = "" if ratio >= TARGET_RATIO else f"  below {TARGET_RATIO}"
            print(
                f"{case:<11} {mib:>8} {med(total / r.region for r in c):>8.1f} "
                f"{med(total / r.region for r in py):>8.1f} {ratio:>6.3f}   "
                f"{med(r.startup for r in c):>13.3f} {med(r.startup for r in py):>7.3f} "
                f"{med(extra):>6.3f}   {med(r.cpu for r in c):>8.3f} "
                f"{med(r.cpu for r in py):>7.3f}{mark}"
            )
    print("ratio = median over repetitions of kernel / C in-region bandwidth")

    def line(label: str, key: str) -> None:
        print(f"  {label:<44} {med(p[key] for p in probes):.3f} s")

    print(f"\nstart-up breakdown, medians of {len(probes)} probes "
          f"(process wall times under {args.mpiexec} -n {args.ranks}):")
    line("launcher alone (true), process wall", "launch_only")
    line("C MPI_Init + MPI_Finalize, process wall", "launch_c")
    line("python -c pass, process wall", "interpreter")
    line("import of the kernel module, in process", "import_kernel")
    line("import of mpi4py.MPI (runs MPI_Init), in process", "import_mpi4py")
    line("probe process wall (both imports)", "probe_wall")
    loaded = [name for name in ("h5py", "numpy") if any(p[f"{name}_imported"] for p in probes)]
    print(f"  {'heavy modules importing the kernel loads':<44} {', '.join(loaded) or 'none'}")
    verdict = "meets" if med(extras) < TARGET_STARTUP_S else "misses"
    print(f"  {'kernel start-up over C, median of all runs':<44} {med(extras):.3f} s "
          f"({verdict} the target < {TARGET_STARTUP_S} s)")


def main(argv: Sequence[str] | None = None) -> int:
    """Build the C writer, run the comparison, remove every file it made."""
    args = parse_args(argv)
    for tool in (args.mpiexec, "mpicc", "h5pcc"):
        if shutil.which(tool) is None:
            raise SystemExit(f"kernels_vs_c: {tool} not found on PATH")
    with tempfile.TemporaryDirectory(prefix="kernels-vs-c-build-") as build_dir:
        binaries = build(Path(build_dir))
        work = Path(tempfile.mkdtemp(prefix="kernels-vs-c-", dir=args.scratch))
        try:
            print(f"kernels_vs_c: {args.ranks} ranks, {','.join(map(str, args.mib_per_rank))} "
                  f"MiB/rank in {args.transfer_mib} MiB writes, apis {','.join(args.apis)}, "
                  f"{args.reps} reps; files in {work}", flush=True)  # fmt: skip
            measure(args, binaries, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
