"""What does the preload library cost an MPI-IO program that it applies no settings to?

Compiles the MPI-IO test program (tests/application/programs/mpiio_write.c: each rank writes its
own region of one shared file with ``MPI_File_write_at_all``, ``--chunk-kib`` at a time,
and reports its I/O time, open + writes + close of the slowest rank) and runs it at
``--ranks`` ranks, ``--reps`` times with the library preloaded and ``--reps`` times
without, in pairs whose order alternates. The preloaded runs set ``IOTUNE_PRELOAD_OUT``
(as a tuning run does) but no ``IOTUNE_SETTINGS``. Each run writes a fresh file in a
temporary directory under ``--dir``, removed after the run; before every run the page
cache is synced and the run pauses ``--pause`` seconds. One untimed pair comes first.

Prints every pair, the median I/O time with and without the library, the overhead in
percent of the I/O time (from the medians, and the median of the paired differences with
its quartiles, which show how much of it the run-to-run noise can explain), and the same
for the wall time of the whole ``mpiexec``, which includes loading the library, and the
time outside the I/O phase (wall minus I/O time: start-up, MPI_Init, MPI_Finalize).

On a shared or busy machine that end-to-end figure is dominated by noise of several
percent, far more than the library's cost. So a second part measures that cost directly:
a one-rank program (below) opens and closes a file ``--micro-opens`` times and then makes
``--micro-calls`` one-byte ``MPI_File_write_at`` calls, timing each loop in-process; it
runs ``--micro-reps`` times with and without the library, alternating, and the fastest
run of each kind gives the per-call and per-open cost. Their difference, times the calls
and the one open each rank of the first part makes, is the library's cost as a share of
that part's median I/O time.

The last line gives the cost per job: the time the library adds outside the I/O (start-up
with the library loaded into every process, ``MPI_Finalize`` with the report; from the
fastest run of each kind) and its share of the I/O time from the direct measurement.

Usage::

    python benchmarks/preload_overhead.py --ranks 2 --mib-per-rank 256 --reps 21
    python benchmarks/preload_overhead.py --dir /dev/shm   # memory: the worst case
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from quick_mode import add_quick, apply_quick

from iotune.preload import OUT_ENV, SETTINGS_ENV, build_library

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = (r"direct estimate: \d+ calls \+ 1 open per rank add [0-9.]+ us|outside the I/O "
           r"\(start-up, MPI_Init/Finalize, report\): median")

PROGRAM = (Path(__file__).resolve().parent.parent / "tests" / "application" / "programs"
           / "mpiio_write.c")
TIMEOUT_S = 600
MICRO_SOURCE = r"""
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int opens = atoi(argv[2]), calls = atoi(argv[3]);
    MPI_File fh;
    char byte = 1;
    double t0 = MPI_Wtime();
    for (int i = 0; i < opens; i++) {
        MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY,
                      MPI_INFO_NULL, &fh);
        MPI_File_close(&fh);
    }
    double t_open = (MPI_Wtime() - t0) / opens;
    MPI_File_open(MPI_COMM_SELF, argv[1], MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL,
                  &fh);
    t0 = MPI_Wtime();
    for (int i = 0; i < calls; i++)
        MPI_File_write_at(fh, (MPI_Offset)(i % 4096), &byte, 1, MPI_BYTE, MPI_STATUS_IGNORE);
    double t_write = (MPI_Wtime() - t0) / calls;
    MPI_File_close(&fh);
    printf("{\"open_close_s\": %.9e, \"write_call_s\": %.9e}\n", t_open, t_write);
    MPI_Finalize();
    return 0;
}
"""


@dataclass
class Run:
    """One run of the program."""

    io_s: float
    wall_s: float
    preload_write_s: float | None  # the library's own figure, when preloaded


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    """Command line of the benchmark."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--mib-per-rank", type=int, default=256)
    parser.add_argument("--chunk-kib", type=int, default=1024,
                        help="bytes per write call (default 1024 KiB)")
    parser.add_argument("--reps", type=int, default=15, help="pairs of runs (default 15)")
    parser.add_argument("--pause", type=float, default=0.5,
                        help="seconds to wait after syncing, before each run")
    parser.add_argument("--dir", default=None,
                        help="where the temporary files go (default: the system temp dir)")
    parser.add_argument("--micro-calls", type=int, default=200000,
                        help="write calls per run of the direct measurement (0: skip it)")
    parser.add_argument("--micro-opens", type=int, default=200,
                        help="open+close pairs per run of the direct measurement")
    parser.add_argument("--micro-reps", type=int, default=7,
                        help="runs of the direct measurement with and without the library")
    add_quick(parser, "8 MiB per rank, one pair, no pause, 1000 calls and 10 opens measured "
                      "directly once")
    args = apply_quick(parser, parser.parse_args(argv), mib_per_rank=8, reps=1, pause=0.0,
                       micro_calls=1000, micro_opens=10, micro_reps=1)
    if args.ranks < 1 or args.mib_per_rank < 1 or args.chunk_kib < 1 or args.reps < 1:
        parser.error("--ranks, --mib-per-rank, --chunk-kib and --reps must be positive")
    if args.micro_calls < 0 or args.micro_opens < 1 or args.micro_reps < 1:
        parser.error("--micro-calls must be >= 0, --micro-opens and --micro-reps positive")
    if (args.mib_per_rank * 1024) % args.chunk_kib:
        parser.error("--mib-per-rank must be a multiple of --chunk-kib")
    return args


def compile_program(source: Path, exe: Path) -> Path:
    """``source`` compiled with mpicc into ``exe``."""
    subprocess.run(["mpicc", "-O2", "-o", str(exe), str(source)], check=True,
                   cwd=exe.parent, timeout=TIMEOUT_S)
    return exe


def clean_env(library: Path | None, report: Path) -> dict[str, str]:
    """The environment of a run: the library preloaded with a report (None: neither), no
    settings, no hints file."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "ROMIO_HINTS", SETTINGS_ENV, OUT_ENV)}
    if library is not None:
        env["LD_PRELOAD"] = str(library)
        env[OUT_ENV] = str(report)
    return env


def run_once(exe: Path, workdir: Path, args: argparse.Namespace, library: Path | None) -> Run:
    """One run, with ``library`` preloaded (None: without); the data file is removed."""
    report = workdir / "preload.json"
    env = clean_env(library, report)
    data = workdir / "data.bin"
    os.sync()
    time.sleep(args.pause)
    start = time.perf_counter()
    done = subprocess.run(
        ["mpiexec", "-n", str(args.ranks), str(exe), str(data), str(args.mib_per_rank),
         str(args.chunk_kib)],
        capture_output=True, text=True, env=env, timeout=TIMEOUT_S, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"the program failed ({done.returncode}): {done.stderr.strip()}")
    io_s = float(json.loads(done.stdout)["io_time_s"])
    preload_s = None
    if library is not None:
        preload_s = float(json.loads(report.read_text())["write_time_s"])
        report.unlink()
    data.unlink(missing_ok=True)
    return Run(io_s, wall, preload_s)


def micro_once(exe: Path, workdir: Path, args: argparse.Namespace,
               library: Path | None) -> tuple[float, float]:
    """One run of the direct measurement: seconds per open+close and per write call."""
    report = workdir / "micro.json"
    data = workdir / "micro.bin"
    done = subprocess.run(
        ["mpiexec", "-n", "1", str(exe), str(data), str(args.micro_opens),
         str(args.micro_calls)],
        capture_output=True, text=True, env=clean_env(library, report), timeout=TIMEOUT_S,
        check=False)
    if done.returncode != 0:
        sys.exit(f"the micro program failed ({done.returncode}): {done.stderr.strip()}")
    data.unlink(missing_ok=True)
    report.unlink(missing_ok=True)
    result = json.loads(done.stdout)
    return float(result["open_close_s"]), float(result["write_call_s"])


def micro(workdir: Path, args: argparse.Namespace, library: Path, io_s: float) -> float:
    """The library's cost per write call and per open, measured directly, and what they
    add to a run of the first part (``io_s``: its median I/O time without the library);
    returns that share of ``io_s``."""
    source = workdir / "micro.c"
    source.write_text(MICRO_SOURCE)
    exe = compile_program(source, workdir / "micro")
    runs: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for rep in range(args.micro_reps):
        for lib in ([library, None] if rep % 2 == 0 else [None, library]):
            runs[lib is not None].append(micro_once(exe, workdir, args, lib))
    open_with = min(r[0] for r in runs[True])
    open_without = min(r[0] for r in runs[False])
    call_with = min(r[1] for r in runs[True])
    call_without = min(r[1] for r in runs[False])
    d_open, d_call = open_with - open_without, call_with - call_without
    calls_per_rank = args.mib_per_rank * 1024 // args.chunk_kib
    added = calls_per_rank * max(d_call, 0.0) + max(d_open, 0.0)
    print(f"direct ({args.micro_reps} runs each, fastest): write call "
          f"{call_with * 1e9:.0f} ns with, {call_without * 1e9:.0f} ns without "
          f"({d_call * 1e9:+.0f} ns); open+close {open_with * 1e6:.1f} us with, "
          f"{open_without * 1e6:.1f} us without ({d_open * 1e6:+.1f} us)")
    print(f"direct estimate: {calls_per_rank} calls + 1 open per rank add "
          f"{added * 1e6:.1f} us = {100.0 * added / io_s:.4f}% of the {io_s:.4f} s I/O time")
    return added / io_s


def summary(label: str, with_lib: list[float], without: list[float]) -> None:
    """Medians, overhead from the medians, and the paired differences' median/quartiles."""
    med_with, med_without = statistics.median(with_lib), statistics.median(without)
    diffs = [100.0 * (w - o) / o for w, o in zip(with_lib, without, strict=True)]
    if len(diffs) >= 2:
        q1, _, q3 = statistics.quantiles(diffs, n=4, method="inclusive")
    else:
        q1 = q3 = diffs[0]
    print(f"{label}: median with {med_with:.4f} s, without {med_without:.4f} s; "
          f"overhead {100.0 * (med_with - med_without) / med_without:+.2f}% "
          f"(median of pairs {statistics.median(diffs):+.2f}%, quartiles "
          f"{q1:+.2f}% .. {q3:+.2f}%); fastest with {min(with_lib):.4f} s, "
          f"without {min(without):.4f} s")


def main(argv: Sequence[str] | None = None) -> None:
    """Run the benchmark and print its figures."""
    args = parse_args(argv)
    library = build_library()
    with tempfile.TemporaryDirectory(prefix="iotune-preload-bench-", dir=args.dir) as tmp:
        workdir = Path(tmp)
        exe = compile_program(PROGRAM, workdir / "mpiio_write")
        total_mib = args.ranks * args.mib_per_rank
        calls = total_mib * 1024 // args.chunk_kib
        print(f"preload overhead: {args.ranks} ranks x {args.mib_per_rank} MiB "
              f"({total_mib} MiB, {calls} write calls of {args.chunk_kib} KiB), "
              f"{args.reps} pairs, files in {workdir.parent}")
        run_once(exe, workdir, args, library)  # warm-up, untimed
        run_once(exe, workdir, args, None)
        with_lib: list[Run] = []
        without: list[Run] = []
        for rep in range(args.reps):
            order = [library, None] if rep % 2 == 0 else [None, library]
            pair = {lib is not None: run_once(exe, workdir, args, lib) for lib in order}
            with_lib.append(pair[True])
            without.append(pair[False])
            print(f"  pair {rep + 1:2d}: io with {pair[True].io_s:.4f} s "
                  f"(library's write time {pair[True].preload_write_s:.4f} s), "
                  f"without {pair[False].io_s:.4f} s; wall with {pair[True].wall_s:.3f} s, "
                  f"without {pair[False].wall_s:.3f} s")
        summary("I/O time ", [r.io_s for r in with_lib], [r.io_s for r in without])
        summary("wall time", [r.wall_s for r in with_lib], [r.wall_s for r in without])
        outside_with = [r.wall_s - r.io_s for r in with_lib]
        outside_without = [r.wall_s - r.io_s for r in without]
        print(f"outside the I/O (start-up, MPI_Init/Finalize, report): median "
              f"{statistics.median(outside_with):.3f} s with, "
              f"{statistics.median(outside_without):.3f} s without "
              f"({statistics.median(outside_with) - statistics.median(outside_without):+.3f} s)")
        # Per job, outside the I/O: loading the library into every process and the
        # report at MPI_Finalize. The fastest runs, as noise only ever adds time.
        per_job_ms = 1e3 * (min(outside_with) - min(outside_without))
        share = None
        if args.micro_calls:
            share = micro(workdir, args, library, statistics.median(r.io_s for r in without))
        print(f"per job: {per_job_ms:+.1f} ms outside the I/O (fastest of {args.reps} each: "
              f"{min(outside_with):.3f} s with, {min(outside_without):.3f} s without)"
              + (f"; inside it {100.0 * share:.4f}% of the I/O time (direct estimate)"
                 if share is not None else ""))


if __name__ == "__main__":
    main()
