"""Slurm job scripts for training campaigns (``iotune train --emit-sbatch``)."""

from __future__ import annotations

import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from iotune import __version__
from iotune.config import Config
from iotune.execution.outputs import NOTHING_IN_USE, InUse, write_output
from iotune.execution.slurm import (
    job_time_limit,
    render_job_script,
    requeue_directives,
    supervised_body,
)
from iotune.printable import SlurmName, SlurmPath, Word, printed
from iotune.store import Store
from iotune.train.plan import ScalePlan

DEFAULT_SECONDS_PER_RUN = 60.0
MARGIN = 1.5
MINIMUM_SECONDS = 600


def seconds_per_run(store: Store, kernel: str) -> float:
    """Median wall time of this kernel's recorded runs, or a default when none exist."""
    from iotune.store.cache import open_snapshot

    if not store.exists():
        return DEFAULT_SECONDS_PER_RUN
    # The cached column: reading each measurement's whole record would parse the journal.
    times = [float(t) for part in open_snapshot(store.path).parts(kernel=kernel)
             for t in part.piece("@elapsed_s").values() if t is not None]
    return statistics.median(times) if times else DEFAULT_SECONDS_PER_RUN


def estimate_seconds(plans: Sequence[ScalePlan], per_run: float) -> float:
    """Wall time for every task of ``plans`` with ``MARGIN`` for variability."""
    runs = sum(len(p.tasks) for p in plans)
    return max(MINIMUM_SECONDS, runs * per_run * MARGIN)


def core_hours(plans: Sequence[ScalePlan], per_run: float, cores_per_node: int) -> float:
    """Core-hours charged for the campaign's runs (whole nodes per scale)."""
    total = 0.0
    for plan in plans:
        nodes = -(-plan.scale.cores // cores_per_node)
        total += len(plan.tasks) * per_run * nodes * cores_per_node / 3600
    return total


def job_script(config: Config, plans: Sequence[ScalePlan], per_run: float,
               partition: str | None = None, account: str | None = None,
               array: int | None = None, time_limit: str | None = None) -> str:
    """A complete sbatch script that runs (or resumes) this training campaign; with
    ``array`` N, a job array of N tasks that share the campaign's runs (each task a worker,
    see :mod:`iotune.train.run`), each given the time of its share (``time_limit``, in
    Slurm's format, instead of the estimate). Every value is printed by
    :mod:`iotune.printable` (ConfigError naming the option it breaks the rule of)."""
    if config.path is None:
        raise ValueError("a job script needs a config file on disk")
    config_path = config.path.resolve()
    max_cores = max(p.scale.cores for p in plans)
    nodes = -(-max_cores // config.system.cores_per_node)
    runs = sum(len(p.tasks) for p in plans)
    workers = array or 1
    seconds = max(MINIMUM_SECONDS, estimate_seconds(plans, per_run) / workers)
    directives = {
        "job-name": SlurmName(f"iotune-train-{config.kernel.name}", "kernel"),
        "nodes": nodes,
        "ntasks": max_cores,
        "time": job_time_limit(time_limit, seconds, "share it among more tasks with "
                               "--array N, or give --time"),
        "array": f"0-{workers - 1}" if array else None,
        "output": SlurmPath(str(config_path.parent), "the config's directory",
                            file="iotune-train-%A_%a.out" if array else "iotune-train-%j.out"),
        "partition": SlurmName(partition, "--partition") if partition else None,
        "account": SlurmName(account, "--account") if account else None,
        **requeue_directives(),
    }
    scales = ", ".join(str(p.scale.cores) for p in plans)
    train = [sys.executable, "-m", "iotune", "train", "-c", str(config_path)]
    share = ([f"# A job array of {workers} tasks: each claims runs not yet recorded or claimed,",
              "# so every run is measured once between them; a task that dies leaves its run",
              printed("# to the others. Watch it: iotune status -c {config} --watch",
                      config=Word(str(config_path), "-c"))] if array else [])
    return render_job_script(directives, [
        f"# iotune {__version__} training campaign: {runs} runs at {scales} cores,",
        f"# about {per_run:.0f} s per run. Resubmitting resumes where it stopped.",
        *share,
        *supervised_body(train, str(config_path.parent), "the campaign"),
    ])


def write_job_script(path: Path, text: str, *, in_use: InUse = NOTHING_IN_USE,
                     force: bool = False) -> None:
    """Write ``text`` to ``path`` executable (sbatch does not need it; users do), by the
    rules of :func:`iotune.execution.outputs.write_output` (option ``--emit-sbatch``)."""
    write_output(path, text, "script", option="--emit-sbatch", in_use=in_use, force=force,
                 mode=0o755)
