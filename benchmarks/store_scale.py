"""How the store scales: time and peak memory of ``tune``, ``results`` and ``report`` (a
script, not a test).

Builds stores of 10^4, 10^5 and 10^6 realistic records in a temporary directory (the
simulator's and real runs' record layouts: two kernels, three backends, training, tuning and
single-run campaigns with search sessions, failed runs, storage-probe rounds; configuration
keys computed as iotune computes them, so a tune reuses what the store holds), then runs,
each in its own process:

- ``iotune tune --backend sim --cores 256 --budget 5 --strategy random``
- ``iotune results --export out.csv``
- ``iotune report -o report``

twice on each store: first with no cache beside the journal (the run builds it), then with
the cache warm. Prints the wall time and the peak resident memory (``wait4``'s
``ru_maxrss``) of each. Aim (issue 15): a tune on 10^6 records in under 5 s and 500 MB.

    python benchmarks/store_scale.py [--sizes 1e4,1e5,1e6] [--commands tune,results,report]
                                     [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from iotune.config import Config, load_config
from iotune.settings import config_key
from iotune.store import SCHEMA_VERSION
from iotune.store_cache import cache_path

MIB = 2**20
CORES = (128, 256, 512, 1024)
STRATEGIES = ("model", "random", "genetic", "exhaustive")
IOR_APIS = ("posix", "mpiio", "hdf5")

CONFIG = """\
schema_version: 1
system:
  name: hopper
  scratch: {scratch}
  launcher: mpiexec
  cores_per_node: 24
  ost_count: 156
  aggregators_per_node: 1
store: store.jsonl
kernel:
  name: vpic
  args:
    particles_per_rank: 8388608
    timesteps: 1
    fsync: false
space:
  stripe_count: [1, 2, 4, 8, 16, 32, 64, 96, 128, 156]
  stripe_size: [1MiB, 2MiB, 4MiB, 8MiB, 16MiB, 32MiB, 64MiB, 96MiB, 128MiB]
  cb_nodes: [1, 2, 4, 8, 16, 32, 48, 64, 80, 128, 256]
backend:
  name: mpi
  system: hopper
"""

COMMANDS = {
    "tune": ["tune", "--backend", "sim", "--cores", "256", "--budget", "5",
             "--strategy", "random", "-o", "tuned.yaml"],
    "results": ["results", "--export", "out.csv"],
    "report": ["report", "-o", "report"],
}


class RecordMaker:
    """Realistic store records, reproducible from a seed."""

    def __init__(self, config: Config, seed: int) -> None:
        self.rng = random.Random(seed)
        self.candidates = {c: config.space.configurations(c, config.system.limits)
                           for c in CORES}
        vpic = {**config.kernel.args, "verify": False}
        self.params = {"vpic": [vpic]}
        self.params["ior"] = [{"api": api, "block_size": 16 * MIB, "file_per_process": fpp,
                               "fsync": True, "segments": 1, "transfer_size": MIB,
                               "verify": False}
                              for api in IOR_APIS for fpp in (False, True)]
        self.clock = datetime(2025, 1, 1, tzinfo=UTC)
        self.session: dict[tuple[str, int, str], dict[str, Any]] = {}
        self.probe_round = 0

    def records(self, n: int) -> Iterator[dict[str, Any]]:
        for _ in range(n):
            self.clock += timedelta(seconds=self.rng.uniform(5, 60))
            yield self.probe() if self.rng.random() < 0.03 else self.measurement()

    def _common(self) -> dict[str, Any]:
        stamp = self.clock.isoformat(timespec="seconds")
        return {"schema_version": SCHEMA_VERSION, "id": uuid.UUID(
            int=self.rng.getrandbits(128)).hex, "recorded_at": stamp, "started_at": stamp}

    def probe(self) -> dict[str, Any]:
        self.probe_round += 1
        rng = self.rng
        return {**self._common(), "campaign": "probe", "kind": "latency",
                "probe_id": f"{self.probe_round // 500:012x}", "round": self.probe_round % 500,
                "backend": "probe", "provenance": "measured", "system": "hopper",
                "host": "login03", "fs_type": "lustre", "size_bytes": 4096,
                "interval_s": 10.0, "slurm_job_id": None, "time": self.clock.timestamp(),
                "targets": [{"target": f"OST{ost:04x}", "ost": ost,
                             "at": self.clock.timestamp() + i * 0.01,
                             "latency_s": rng.lognormvariate(-5, 0.8)}
                            for i, ost in enumerate(rng.sample(range(156), 4))]}

    def measurement(self) -> dict[str, Any]:
        rng = self.rng
        roll = rng.random()
        campaign = "train" if roll < 0.55 else "tune" if roll < 0.93 else "run"
        backend = rng.choices(("sim", "mpi", "replay"), (0.75, 0.2, 0.05))[0]
        kernel = "vpic" if rng.random() < 0.7 else "ior"
        cores = rng.choice(CORES)
        params = rng.choice(self.params[kernel])
        extra: dict[str, Any] = {}
        if campaign == "tune":
            key = (kernel, cores, backend)
            if key not in self.session or rng.random() < 0.03:
                self.session[key] = {"strategy": rng.choice(STRATEGIES),
                                     "tune_id": uuid.UUID(int=rng.getrandbits(128)).hex[:12],
                                     "target_cores": cores, "fresh": True}
            extra = {k: v for k, v in self.session[key].items() if k != "fresh"}
            settings = {} if self.session[key].pop("fresh", False) else dict(
                rng.choice(self.candidates[cores]))
        else:
            settings = {} if rng.random() < 0.05 else dict(rng.choice(self.candidates[cores]))
        per_rank = (params.get("particles_per_rank", 0) * 32 if kernel == "vpic"
                    else params["block_size"])
        written = per_rank * cores
        record = {**self._common(), **extra, "campaign": campaign,
                  "config_key": config_key(kernel, cores, settings, params), "kernel": kernel,
                  "cores": cores, "settings": settings, "params": params,
                  "rep": rng.choice((0, 0, 0, 1, 2)), "backend": backend,
                  "provenance": {"sim": "simulated", "mpi": "measured",
                                 "replay": "replayed"}[backend],
                  "system": "hopper", "nodes": -(-cores // 24), "error": None,
                  "finished_at": self.clock.isoformat(timespec="seconds")}
        bandwidth = rng.lognormvariate(7.5, 0.9)
        total = written / MIB / bandwidth
        if backend == "sim":
            record.update(host="login03", fs_type="lustre (simulated)", state="none",
                          status="ok", result={
                              "bandwidth_mib_s": bandwidth, "bytes_written": written,
                              "model_time_s": total, "noise": 0.0, "not_modelled": [],
                              "sim_system": "hopper", "simulated": True, "two_phase": True,
                              "times_s": {"close": 0.0, "open": 0.014, "total": total,
                                          "write": total - 0.014}})
        elif backend == "replay":
            record.update(host="login03", fs_type="replayed", status="ok", result={
                "bandwidth_mib_s": bandwidth, "bytes_written": written,
                "times_s": {"total": total}})
        else:
            self._mpi(record, rng, written, bandwidth, total)
        return record

    def _mpi(self, record: dict[str, Any], rng: random.Random, written: int, bandwidth: float,
             total: float) -> None:
        hints = {"cb_nodes": str(record["settings"].get("cb_nodes", 1)),
                 "romio_cb_write": "enable", "cb_buffer_size": "16777216",
                 "striping_factor": str(record["settings"].get("stripe_count", 1)),
                 "striping_unit": str(record["settings"].get("stripe_size", MIB))}
        record.update(host=f"nid{rng.randrange(10000):05d}", fs_type="lustre",
                      elapsed_s=round(total + rng.uniform(2, 6), 3),
                      command=["srun", "-n", str(record["cores"]), sys.executable,
                               "kernels/vpicio.py", "--scratch", "/scratch/u/iotune"])
        if rng.random() < 0.08:
            record.update(status="failed", result=None,
                          error="exit code 1: MPI_File_open: No space left on device",
                          stderr_tail="Abort(1) on node 17: MPI_File_open failed\n")
            return
        record.update(status="ok", result={
            "schema_version": 1, "kernel": record["kernel"], "ranks": record["cores"],
            "nodes": record["nodes"], "node_names": [f"nid{i:05d}" for i in range(4)],
            "bytes_written": written, "bandwidth_mib_s": bandwidth,
            "times_s": {"open": 0.2, "write": total - 0.3, "close": 0.1, "total": total},
            "settings": record["settings"], "params": record["params"],
            "hints_requested": hints, "hints_in_effect": hints, "hints_source": "file",
            "hints_not_in_effect": {}, "filesystem": {"type": "lustre", "striping": {
                "stripe_count": int(hints["striping_factor"]),
                "stripe_size": int(hints["striping_unit"])}},
            "fsync": False, "collective": True, "verify": None,
            "mpi_library": "MPICH Version: 4.1.2", "kept": False})


def write_store(path: Path, n: int, config: Config, seed: int = 15) -> None:
    """``n`` records, one JSON line each, written as :class:`iotune.store.Store` writes them."""
    maker = RecordMaker(config, seed)
    with path.open("w") as handle:
        batch: list[str] = []
        for record in maker.records(n):
            batch.append(json.dumps(record, sort_keys=True, default=str))
            if len(batch) == 10_000:
                handle.write("\n".join(batch) + "\n")
                batch = []
        if batch:
            handle.write("\n".join(batch) + "\n")


@dataclass
class Timing:
    seconds: float
    peak_mib: float
    status: int


def run(argv: list[str], cwd: Path) -> Timing:
    """Run ``iotune ARGV`` in ``cwd``; its wall time and peak resident memory."""
    started = time.perf_counter()
    with (cwd / "commands.log").open("a") as log:
        log.write(f"$ iotune {' '.join(argv)}\n")
        log.flush()
        proc = subprocess.Popen([sys.executable, "-m", "iotune", *argv], cwd=cwd,
                                stdout=log, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Timing(time.perf_counter() - started, usage.ru_maxrss / 1024,
                  proc.returncode)


def measure(size: int, commands: list[str], root: Path) -> list[tuple[str, Timing, Timing]]:
    """Build a store of ``size`` records under ``root`` and time each command twice."""
    work = root / f"store-{size}"
    work.mkdir(parents=True)
    (work / "scratch").mkdir()
    (work / "iotune.yaml").write_text(CONFIG.format(scratch=work / "scratch"))
    config = load_config(work / "iotune.yaml")
    started = time.perf_counter()
    write_store(work / "store.jsonl", size, config)
    megabytes = (work / "store.jsonl").stat().st_size / 1e6
    print(f"# {size} records, {megabytes:.0f} MB, written in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    rows = []
    for name in commands:
        cache = cache_path(work / "store.jsonl")
        if cache.exists():
            shutil.rmtree(cache)
        first = run(COMMANDS[name], work)
        second = run(COMMANDS[name], work)
        rows.append((name, first, second))
        print(f"  {name}: {first.seconds:.1f} s / {first.peak_mib:.0f} MiB, then "
              f"{second.seconds:.1f} s / {second.peak_mib:.0f} MiB", flush=True)
    return rows


def parse_sizes(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6", type=parse_sizes,
                        help="store sizes in records, comma-separated (default 1e4,1e5,1e6)")
    parser.add_argument("--commands", default="tune,results,report",
                        help="which commands to time (default tune,results,report)")
    parser.add_argument("--keep", type=Path,
                        help="build the stores under DIR and keep them (default: a temporary "
                             "directory, removed at the end)")
    args = parser.parse_args()
    commands = [c for c in args.commands.split(",") if c]
    unknown = sorted(set(commands) - set(COMMANDS))
    if unknown:
        parser.error(f"--commands: unknown {', '.join(unknown)}")
    root = args.keep or Path(tempfile.mkdtemp(prefix="iotune-store-scale-"))
    table = []
    try:
        for size in args.sizes:
            for name, first, second in measure(size, commands, root):
                table.append((size, name, first, second))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    print()
    print(f"{'records':>9}  {'command':<8} {'first run (cache built)':>24}  "
          f"{'second run (cache warm)':>24}")
    for size, name, first, second in table:
        cells = [f"{t.seconds:7.2f} s {t.peak_mib:7.0f} MiB" + ("" if t.status == 0 else " !")
                 for t in (first, second)]
        print(f"{size:>9}  {name:<8} {cells[0]:>24}  {cells[1]:>24}")
    if any(t.status != 0 for _, _, first, second in table for t in (first, second)):
        print("! a command failed; see commands.log in the store's directory (--keep DIR)")


if __name__ == "__main__":
    main()
