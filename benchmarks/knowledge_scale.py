"""How a knowledge base scales: build time and memory, and what a tune's query adds
(a script, not a test).

Writes SYNTHETIC replay-CSV landscapes with their ``FILE.workload.yaml`` sidecars in a
temporary folder: ``--records`` runs in files of ``--rows-per-file`` runs each, on two
synthetic systems (``synth-a``/lustre, ``synth-b``/gpfs), each file one workload (write
or read, HDF5 or MPI-IO, ranks 256 to 8192, 64 KiB to 256 MiB per rank) measured in
``--configurations`` configurations (the default and stripe/alignment/aggregator
settings), times log-normal around a per-workload landscape. Then, each in its own
process:

- ``iotune knowledge build FOLDER -o KB``: wall time and peak resident memory
  (``ru_maxrss`` of the child);
- a second build of the same folder into the same base (nothing new: what an
  incremental build costs to find that out);
- a query (:func:`iotune.knowledge.query.priors_for`) in a fresh process: the time of
  the call (DuckDB's import included) and the resident memory it adds (peak after the
  call less the resident memory before it).

Targets (issue 45): build 10^7 records in under 10 minutes and 2 GB; a query of a
10^7-record base adds under 1 s and 300 MB.

    python benchmarks/knowledge_scale.py [--records 1e7] [--rows-per-file 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from quick_mode import add_quick, apply_quick

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"knowledge_scale: \d+ SYNTHETIC records; build (met|missed); query (met|missed)"
#: The issue's targets: build seconds and bytes, query seconds and added bytes.
BUILD_S, BUILD_BYTES = 600.0, 2 * 10**9
QUERY_S, QUERY_BYTES = 1.0, 300 * 10**6
#: The configurations a synthetic landscape measures (the first is the default).
CONFIGURATIONS: tuple[dict[str, object], ...] = (
    {}, {"alignment": 1048576}, {"stripe_count": 16, "stripe_size": 4194304},
    {"stripe_count": 64, "stripe_size": 16777216, "alignment": 1048576},
    {"cb_nodes": 16}, {"cb_nodes": 64, "cb_buffer_size": 16777216},
    {"stripe_count": 128, "stripe_size": 16777216}, {"romio_cb_write": "enable"})
SYSTEMS = (("synth-a", "lustre", "Cray MPICH"), ("synth-b", "gpfs", "IBM Spectrum MPI"))

ROOT = Path(__file__).resolve().parents[1]


def write_landscapes(folder: Path, records: int, rows_per_file: int, configurations: int,
                     seed: int = 1) -> int:
    """The SYNTHETIC landscapes (see the module docstring); returns the number of files."""
    rng = random.Random(seed)
    chosen = CONFIGURATIONS[:configurations]
    names = sorted({k for c in chosen for k in c})
    files = max(1, math.ceil(records / rows_per_file))
    left = records
    for index in range(files):
        rows = min(rows_per_file, left)
        left -= rows
        system, fs, mpi = SYSTEMS[index % len(SYSTEMS)]
        ranks = 256 * 2 ** rng.randrange(6)
        per_rank = 65536 * 2 ** rng.randrange(12)
        operation = rng.choice(("write", "read"))
        layer = rng.choice(("hdf5", "mpiio"))
        stem = folder / f"{system}_{index:07d}_{operation}"
        stem.with_suffix(".workload.yaml").write_text(
            f"system: {system}\nfile_system: {fs}\nmpi: {mpi}\nlayer: {layer}\n"
            f"operation: {operation}\nranks: {ranks}\nfiles: 1\nbytes_per_rank: {per_rank}\n"
            "source: SYNTHETIC (benchmarks/knowledge_scale.py)\n")
        base = 1.0 + rng.random() * 50
        effect = [1.0] + [math.exp(rng.gauss(-0.2, 0.5)) for _ in chosen[1:]]
        sigma = 0.05 + rng.random() * 0.4
        lines = ["cores," + ",".join(names) + ",write_time"]
        for row in range(rows):
            pick = row % len(chosen)
            cells = [str(chosen[pick].get(n, "")) for n in names]
            time_s = base * effect[pick] * math.exp(rng.gauss(0.0, sigma))
            lines.append(f"{ranks}," + ",".join(cells) + f",{time_s:.6g}")
        stem.with_suffix(".csv").write_text("\n".join(lines) + "\n")
    return files


def run_child(argv: list[str]) -> tuple[float, int, str]:
    """Wall seconds and peak resident bytes of one child process (``wait4``), and its
    output; exits when the child fails."""
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    start = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True, env=env)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    seconds = time.perf_counter() - start
    if child.returncode != 0:
        sys.exit(f"knowledge_scale: {' '.join(argv[1:4])} failed:\n{out}")
    return seconds, usage.ru_maxrss * 1024, out


#: The program the query runs in its own process: the time and added memory of one call.
QUERY_PROGRAM = """
import json, resource, sys, time
from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor
from iotune.knowledge.query import priors_for

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize()

before = resident()
start = time.perf_counter()
priors = priors_for(sys.argv[1], SystemKey("synth-a", "lustre"),
                    WorkloadDescriptor(operation="write", layer="hdf5", ranks=1024,
                                       bytes_per_rank=4 * 2**20))
seconds = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "added": max(0, peak - before),
                  "line": priors.text()}))
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=lambda v: int(float(v)), default=10**7,
                        help="SYNTHETIC runs to generate and build from (default 1e7)")
    parser.add_argument("--rows-per-file", type=int, default=1000,
                        help="runs per landscape file (default 1000)")
    parser.add_argument("--configurations", type=int, default=len(CONFIGURATIONS),
                        choices=range(2, len(CONFIGURATIONS) + 1),
                        help=f"configurations per landscape (default {len(CONFIGURATIONS)})")
    parser.add_argument("--keep", type=Path,
                        help="write the landscapes and the base under DIR and keep them")
    add_quick(parser, "10^4 records in files of 500")
    args = apply_quick(parser, parser.parse_args(argv), records=10**4, rows_per_file=500)
    root = args.keep or Path(tempfile.mkdtemp(prefix="iotune-knowledge-scale-"))
    try:
        folder = root / "landscapes"
        folder.mkdir(parents=True, exist_ok=True)
        start = time.perf_counter()
        files = write_landscapes(folder, args.records, args.rows_per_file, args.configurations)
        print(f"knowledge_scale: wrote {args.records} SYNTHETIC records in {files} landscape "
              f"files ({time.perf_counter() - start:.0f} s)", flush=True)
        base = root / "site.kb"
        base.unlink(missing_ok=True)
        build = [sys.executable, "-m", "iotune", "knowledge", "build", str(folder), "-o",
                 str(base)]
        seconds, peak, out = run_child(build)
        print(out.strip())
        print(f"build:        {seconds:8.1f} s  peak {peak / 2**20:7.0f} MiB  "
              f"base {base.stat().st_size / 2**20:.0f} MiB", flush=True)
        again, again_peak, out = run_child(build)
        print(f"second build: {again:8.1f} s  peak {again_peak / 2**20:7.0f} MiB  "
              f"({out.strip().splitlines()[0]})", flush=True)
        _, _, out = run_child([sys.executable, "-c", QUERY_PROGRAM, str(base)])
        query = json.loads(out.strip().splitlines()[-1])
        print(f"query:        {query['seconds']:8.3f} s  added {query['added'] / 2**20:7.0f} "
              f"MiB  ({query['line']})")
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    build_met = seconds < BUILD_S and peak < BUILD_BYTES
    query_met = query["seconds"] < QUERY_S and query["added"] < QUERY_BYTES
    print(f"target build < {BUILD_S / 60:.0f} min and < 2 GB at {args.records} records: "
          f"{'met' if build_met else 'missed'}")
    print(f"target query < 1 s and < 300 MB added at {args.records} records: "
          f"{'met' if query_met else 'missed'}")
    print(f"knowledge_scale: {args.records} SYNTHETIC records; build "
          f"{'met' if build_met else 'missed'}; query {'met' if query_met else 'missed'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
