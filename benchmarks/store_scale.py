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

Then, for each ``--trained`` size, a store holding only *training* records of the tuned
kernel (campaign ``train``, kernel ``vpic``, backend ``sim`` at 128 to 1024 ranks, times from
the simulator with its calibrated noise, each configuration run many times over: a facility
tuning the same code for a year), and a tune on it of each ``--trained-strategies``
(default ``portfolio,model``: the default search and the model alone):

- ``iotune tune --backend sim --cores 256 --budget 30 --strategy S --fresh``

first on an empty store (what the tune's runs, the process and its small model cost), then
on the trained store with the cache built by the run, then warm. The difference to the empty
store is what the tune spends beyond its runs because of the store. Aim (issue 20): under
5 s and 400 MB on 10^5 training records.

    python benchmarks/store_scale.py [--sizes 1e4,1e5,1e6] [--commands tune,results,report]
                                     [--trained 1e5] [--trained-strategies portfolio,model]
                                     [--keep DIR]

(``--sizes ''`` or ``--trained ''`` leaves that part out.)
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

from quick_mode import add_quick, apply_quick

from iotune.backends import backend_class
from iotune.config import Config, load_config
from iotune.kernel_args import APIS
from iotune.settings.units import MIB
from iotune.settings.values import config_key
from iotune.store import SCHEMA_VERSION
from iotune.store.cache import cache_path

#: The line a run ends with (``--quick`` included); tests/benchmarks checks it.
SUMMARY = r"store_scale: \d+ timed runs, 0 failed"
CORES = (128, 256, 512, 1024)
STRATEGIES = ("model", "random", "genetic", "exhaustive")

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
def trained_tune(strategy: str) -> list[str]:
    """The tune of the trained-store case: ``strategy`` at the paper's budget; ``--fresh``
    so every run of it measures the same number of runs."""
    return ["tune", "--backend", "sim", "--cores", "256", "--budget", "30",
            "--strategy", strategy, "--fresh", "-o", "tuned.yaml"]


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
                              for api in APIS for fpp in (False, True)]
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
                  "provenance": backend_class(backend).provenance,
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
    write_lines(path, RecordMaker(config, seed).records(n))


def training_records(config: Config, n: int, seed: int = 20) -> Iterator[dict[str, Any]]:
    """``n`` records of a training campaign of the config's kernel on the simulator, in
    time order: a scale of :data:`CORES` and a candidate configuration drawn at random for
    each (so every configuration is run many times over), the time simulated with the
    preset's calibrated noise, laid out as the ``sim`` backend records it."""
    import numpy as np
    import pandas as pd

    from iotune.backends.sim import sim_pattern
    from iotune.sim import load_system, simulate_times

    rng = random.Random(seed)
    system = load_system(config.backend.sim_system)
    params = dict(config.kernel.args)
    kernel = config.kernel.name
    candidates = {c: config.space.configurations(c, config.system.limits) for c in CORES}
    drawn = [(cores, rng.randrange(len(candidates[cores])))
             for cores in (rng.choice(CORES) for _ in range(n))]
    runs: dict[int, Iterator[tuple[float, float, float, str]]] = {}
    written: dict[int, int] = {}
    for cores in CORES:
        picks = [i for c, i in drawn if c == cores]
        pattern = sim_pattern(kernel, cores, params, system.cores_per_node)
        sim = simulate_times(system, pattern, pd.DataFrame([candidates[cores][i] for i in picks]),
                             noise=config.backend.noise, rng=np.random.default_rng([seed, cores]))
        runs[cores] = zip(sim.time_s.ravel().tolist(), sim.open_s.ravel().tolist(),
                          sim.model_time_s.ravel().tolist(), sim.state.ravel().tolist(),
                          strict=True)
        written[cores] = pattern.total_bytes
    reps: dict[str, int] = {}
    clock = datetime(2024, 1, 1, tzinfo=UTC)
    for cores, i in drawn:
        clock += timedelta(seconds=rng.uniform(5, 600))
        stamp = clock.isoformat(timespec="seconds")
        settings = dict(candidates[cores][i])
        key = config_key(kernel, cores, settings, params)
        reps[key] = reps.get(key, -1) + 1
        total, opened, modelled, state = next(runs[cores])
        yield {"schema_version": SCHEMA_VERSION, "id": uuid.UUID(int=rng.getrandbits(128)).hex,
               "recorded_at": stamp, "started_at": stamp, "finished_at": stamp,
               "campaign": "train", "config_key": key, "kernel": kernel, "cores": cores,
               "settings": settings, "params": params, "rep": reps[key], "backend": "sim",
               "provenance": backend_class("sim").provenance, "system": system.name,
               "host": "login03",
               "nodes": -(-cores // system.cores_per_node), "fs_type": "lustre (simulated)",
               "status": "ok", "error": None, "state": state, "result": {
                   "simulated": True, "sim_system": system.name,
                   "noise": config.backend.noise, "bytes_written": written[cores],
                   "times_s": {"open": opened, "write": total - opened, "close": 0.0,
                               "total": total},
                   "model_time_s": modelled, "bandwidth_mib_s": written[cores] / MIB / total,
                   "two_phase": True, "not_modelled": []}}


def write_lines(path: Path, records: Iterator[dict[str, Any]]) -> None:
    """One JSON line per record, as :class:`iotune.store.Store` writes them."""
    with path.open("w") as handle:
        batch: list[str] = []
        for record in records:
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
    cpu_seconds: float = 0.0  # user + system: what the command computed, whatever else ran


def run(argv: list[str], cwd: Path) -> Timing:
    """Run ``iotune ARGV`` in ``cwd``; its wall time, peak resident memory and CPU time."""
    started = time.perf_counter()
    with (cwd / "commands.log").open("a") as log:
        log.write(f"$ iotune {' '.join(argv)}\n")
        log.flush()
        proc = subprocess.Popen([sys.executable, "-m", "iotune", *argv], cwd=cwd,
                                stdout=log, stderr=log)
        _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return Timing(time.perf_counter() - started, usage.ru_maxrss / 1024,
                  proc.returncode, usage.ru_utime + usage.ru_stime)


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


def measure_trained(size: int, root: Path, strategy: str) -> tuple[Timing, Timing, Timing]:
    """``strategy``'s tune on an empty store, then twice on a store of ``size`` training
    records of its kernel (cache built by the first run, then warm)."""
    empty = root / f"empty-{size}-{strategy}"
    work = root / f"trained-{size}-{strategy}"
    for place in (empty, work):
        (place / "scratch").mkdir(parents=True)
        (place / "iotune.yaml").write_text(CONFIG.format(scratch=place / "scratch"))
    started = time.perf_counter()
    write_lines(work / "store.jsonl",
                training_records(load_config(work / "iotune.yaml"), size))
    megabytes = (work / "store.jsonl").stat().st_size / 1e6
    print(f"# {size} training records of the tuned kernel, {megabytes:.0f} MB, written in "
          f"{time.perf_counter() - started:.0f} s", flush=True)
    alone = run(trained_tune(strategy), empty)
    first = run(trained_tune(strategy), work)
    second = run(trained_tune(strategy), work)
    print(f"  tune ({strategy}, budget 30): empty store {_cell(alone, True)}; trained store "
          f"{_cell(first, True)}, then {_cell(second, True)}", flush=True)
    return alone, first, second


def _cell(timing: Timing, cpu: bool = False) -> str:
    return (f"{timing.seconds:7.2f} s {timing.peak_mib:7.0f} MiB"
            + (f" ({timing.cpu_seconds:.2f} s CPU)" if cpu else "")
            + ("" if timing.status == 0 else " !"))


def parse_sizes(text: str) -> list[int]:
    return [int(float(part)) for part in text.split(",") if part]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e4,1e5,1e6", type=parse_sizes,
                        help="store sizes in records, comma-separated (default 1e4,1e5,1e6)")
    parser.add_argument("--commands", default="tune,results,report",
                        help="which commands to time (default tune,results,report)")
    parser.add_argument("--trained", default="1e5", type=parse_sizes,
                        help="sizes of the training-only stores the model strategy's tune is "
                             "timed on, in records (default 1e5)")
    parser.add_argument("--trained-strategies", default="portfolio,model",
                        help="strategies timed on the training-only stores (default "
                             "portfolio,model)")
    parser.add_argument("--keep", type=Path,
                        help="build the stores under DIR and keep them (default: a temporary "
                             "directory, removed at the end)")
    add_quick(parser, "a store of 10^3 records, 'results' only, no training-only store")
    args = apply_quick(parser, parser.parse_args(argv), sizes=[1000], commands="results",
                       trained=[])
    commands = [c for c in args.commands.split(",") if c]
    unknown = sorted(set(commands) - set(COMMANDS))
    if unknown:
        parser.error(f"--commands: unknown {', '.join(unknown)}")
    root = args.keep or Path(tempfile.mkdtemp(prefix="iotune-store-scale-"))
    table = []
    trained = []
    try:
        for size in args.sizes:
            for name, first, second in measure(size, commands, root):
                table.append((size, name, first, second))
        for size in args.trained:
            for strategy in args.trained_strategies.split(","):
                trained.append((size, strategy, *measure_trained(size, root, strategy)))
    finally:
        if args.keep is None:
            shutil.rmtree(root, ignore_errors=True)
    if table:
        print()
        print(f"{'records':>9}  {'command':<8} {'first run (cache built)':>24}  "
              f"{'second run (cache warm)':>24}")
        for size, name, first, second in table:
            print(f"{size:>9}  {name:<8} {_cell(first):>24}  {_cell(second):>24}")
    if trained:
        print()
        print("tune --strategy S --budget 30 on training records of its kernel (wall, "
              "peak RSS, CPU); beyond its runs = trained store (cache warm) less empty store")
        print(f"{'records':>9}  {'strategy':<9}  {'empty store':>34}  "
              f"{'trained, cache built':>34}  {'trained, cache warm':>34}  {'beyond runs':>34}")
        for size, strategy, alone, first, second in trained:
            beyond = Timing(second.seconds - alone.seconds, second.peak_mib - alone.peak_mib,
                            0, second.cpu_seconds - alone.cpu_seconds)
            print(f"{size:>9}  {strategy:<9}  {_cell(alone, True):>34}  "
                  f"{_cell(first, True):>34}  {_cell(second, True):>34}  "
                  f"{_cell(beyond, True):>34}")
    timings = [t for _, _, first, second in table for t in (first, second)]
    timings += [t for _, _, *runs in trained for t in runs]
    failed = sum(t.status != 0 for t in timings)
    if failed:
        print("! a command failed; see commands.log in the store's directory (--keep DIR)")
    print(f"store_scale: {len(timings)} timed runs, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
