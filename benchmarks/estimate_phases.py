"""How close does ``iotune estimate`` (paper 001) come to a real multi-phase run here?

Each repetition:

1. runs ``programs/phased_app.py`` under MPI: several I/O phases (writes and reads, several
   request sizes, shared files and a file per process), each rank's requests traced in
   darshan-dxt-parser's text layout, each phase's measured time printed by the program;
2. finds the phases in that trace (``iotune phases``), characterises this file system for
   their patterns (``iotune characterize``: fresh benchmark runs, reads timed reading) and
   estimates each phase as ``weight / bandwidth`` (``iotune estimate``);
3. runs the application again and takes its phase times as a second "estimate": how far
   two runs of the same program differ here, the noise floor of any estimate;
4. prints phase, op, request size, bytes, measured s, estimated s and error %, the rerun's
   time and its difference %, for each phase and the total.

Last it prints the median over repetitions of the total error and of each phase's error.

Page cache: with ``--direct yes`` (default) the application and the characterisation open
their files with ``O_DIRECT``, so neither writes nor reads touch the page cache. With
``--direct no`` writes go to the page cache (no fsync in the phase) while reads still read
data evicted from it, as an application reading files written by an earlier job does.

Usage::

    python benchmarks/estimate_phases.py --ranks 2 --reps 7 --mib-per-rank 256
    python benchmarks/estimate_phases.py --direct no --reps 3
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from quick_mode import add_quick, apply_quick

from iotune.config import build_config
from iotune.darshan.characterize import PatternBackend, characterize, plan
from iotune.darshan.estimate import estimate, relative_error
from iotune.darshan.phases import trace_phases
from iotune.execution.launchers import LaunchRequest, make_launcher
from iotune.execution.runner import run_command
from iotune.ui.output import render_table

PROGRAM = Path(__file__).resolve().parent / "programs" / "phased_app.py"
#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"median total error [0-9.]+% \(a second run of the application differs"
KiB, MiB = 2**10, 2**20
#: The phases: (op, request size, sharing); each moves --mib-per-rank MiB per rank.
PHASES = (("write", MiB, "shared"), ("read", MiB, "shared"), ("write", 64 * KiB, "fpp"),
          ("read", 64 * KiB, "shared"), ("write", 4 * MiB, "shared"))


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--mib-per-rank", type=int, default=256,
                        help="MiB each rank moves in each phase (default 256: phases of "
                             "about 0.5 s here, long enough that scheduling hiccups of a "
                             "few ms do not count, short enough for 7 repetitions in "
                             "minutes)")
    parser.add_argument("--direct", choices=("yes", "no"), default="yes")
    parser.add_argument("--char-repeat", type=int, default=3,
                        help="characterisation runs per pattern, median kept (default 3)")
    parser.add_argument("--scratch", type=Path, default=Path(tempfile.gettempdir()))
    parser.add_argument("--json", type=Path, default=None, help="also write every row here")
    add_quick(parser, "8 MiB per rank per phase, one repetition, one characterisation run "
                      "per pattern")
    return apply_quick(parser, parser.parse_args(argv), mib_per_rank=8, reps=1,
                       char_repeat=1)


def phase_specs(mib_per_rank: int) -> str:
    return ",".join(f"{op}:{size}:{mib_per_rank * MiB // size}:{sharing}"
                    for op, size, sharing in PHASES)


def run_app(args: argparse.Namespace, config: Any, work: Path) -> tuple[dict[str, Any], Path]:
    """One run of the application: its JSON result and its trace."""
    trace = work / "app-trace.txt"
    program = (sys.executable, str(PROGRAM), "--dir", str(work), "--trace", str(trace),
               "--phases", phase_specs(args.mib_per_rank), "--direct", args.direct)
    launcher = make_launcher(config.system.launcher, config.system.launcher_template)
    outcome = run_command(launcher.argv(LaunchRequest(args.ranks, program)), 1800)
    if not outcome.ok or outcome.result is None:
        raise SystemExit(f"estimate_phases: the application failed: {outcome.reason}\n"
                         f"{outcome.stderr_tail}")
    return outcome.result, trace


def one_repetition(args: argparse.Namespace, config: Any, work: Path) -> list[dict[str, Any]]:
    """The rows of one repetition (the phases, then the total)."""
    result, trace = run_app(args, config, work)
    found = trace_phases(trace)
    shutil.copy(trace, work / "first-trace.txt")
    trace = work / "first-trace.txt"
    measured = result["phases"]
    if len(found.phases) != len(measured):
        raise SystemExit(f"estimate_phases: {len(found.phases)} phases in the trace, "
                         f"{len(measured)} in the program")
    runs = plan(found.phases, "posix", max_ranks=args.ranks,
                max_bytes_per_rank=args.mib_per_rank * MiB, direct=args.direct == "yes")
    document = characterize(found, runs, PatternBackend(config), args.char_repeat)
    rerun = run_app(args, config, work)[0]["phases"]
    rows = []
    estimated = estimate(found.phases, document["patterns"])["phases"]
    for phase, row, truth, again in zip(found.phases, estimated, measured, rerun, strict=True):
        assert phase.op == truth["op"] and phase.weight == truth["bytes"]
        rows.append({"phase": phase.index, "op": phase.op, "request_size": phase.request_size,
                     "file": row["file"], "bytes": phase.weight,
                     "measured_s": truth["measured_s"], "estimated_s": row["estimated_s"],
                     "error_pct": relative_error(row["estimated_s"], truth["measured_s"]),
                     "rerun_s": again["measured_s"],
                     "rerun_error_pct": relative_error(again["measured_s"],
                                                       truth["measured_s"])})
    total = {key: sum(r[key] for r in rows) for key in ("bytes", "measured_s", "estimated_s",
                                                          "rerun_s")}
    rows.append({"phase": "total", **total,
                 "error_pct": relative_error(total["estimated_s"], total["measured_s"]),
                 "rerun_error_pct": relative_error(total["rerun_s"], total["measured_s"])})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="iotune-estimate-bench-", dir=args.scratch))
    config = build_config({"system": {"scratch": str(work)}}, work)
    columns = ["phase", "op", "request_size", "file", "bytes", "measured_s", "estimated_s",
               "error_pct", "rerun_s", "rerun_error_pct"]
    print(f"{args.ranks} ranks, {args.mib_per_rank} MiB per rank per phase, "
          f"O_DIRECT {args.direct}, scratch file system {PatternBackend(config).fs_type}")
    every: list[list[dict[str, Any]]] = []
    try:
        for rep in range(args.reps):
            rows = one_repetition(args, config, work)
            every.append(rows)
            print(f"\nrepetition {rep + 1}/{args.reps}\n{render_table(rows, columns)}",
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    summary = []
    for i, row in enumerate(every[0]):
        errors = [rows[i]["error_pct"] for rows in every]
        reruns = [rows[i]["rerun_error_pct"] for rows in every]
        summary.append({"phase": row["phase"], "op": row.get("op"),
                        "request_size": row.get("request_size"),
                        "median_error_pct": statistics.median(errors),
                        "min_error_pct": min(errors), "max_error_pct": max(errors),
                        "median_rerun_error_pct": statistics.median(reruns)})
    print(f"\nover {args.reps} repetitions\n{render_table(summary)}")
    print(f"\nmedian total error {summary[-1]['median_error_pct']:.1f}% (a second run of the "
          f"application differs from the first by {summary[-1]['median_rerun_error_pct']:.1f}%)")
    if args.json is not None:
        args.json.write_text(json.dumps({"args": {k: str(v) for k, v in vars(args).items()},
                                         "repetitions": every, "summary": summary}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
