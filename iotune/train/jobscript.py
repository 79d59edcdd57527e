"""Slurm job scripts for training campaigns (``iotune train --emit-sbatch``)."""

from __future__ import annotations

import shlex
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

from iotune import __version__
from iotune.config import Config
from iotune.execution.interrupt import REQUEUE_EXIT
from iotune.execution.outputs import NOTHING_IN_USE, InUse, write_output
from iotune.execution.slurm import render_job_script, slurm_time
from iotune.store import Store
from iotune.train.plan import ScalePlan

DEFAULT_SECONDS_PER_RUN = 60.0
MARGIN = 1.5
MINIMUM_SECONDS = 600
#: Seconds before the time limit at which Slurm signals the job script (``--signal``), so
#: the job can requeue itself while it still runs. Slurm may send it up to 60 s earlier
#: than asked; 120 s leaves ``scontrol requeue`` ample time after iotune stops, which takes
#: well under a second (it kills the run in flight rather than waiting for it).
REQUEUE_SIGNAL_LEAD_S = 120


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
               array: int | None = None) -> str:
    """A complete sbatch script that runs (or resumes) this training campaign; with
    ``array`` N, a job array of N tasks that share the campaign's runs (each task a worker,
    see :mod:`iotune.train.run`), each given the time of its share."""
    if config.path is None:
        raise ValueError("a job script needs a config file on disk")
    config_path = config.path.resolve()
    max_cores = max(p.scale.cores for p in plans)
    nodes = -(-max_cores // config.system.cores_per_node)
    runs = sum(len(p.tasks) for p in plans)
    workers = array or 1
    seconds = max(MINIMUM_SECONDS, estimate_seconds(plans, per_run) / workers)
    directives = {
        "job-name": f"iotune-train-{config.kernel.name}",
        "nodes": nodes,
        "ntasks": max_cores,
        "time": slurm_time(seconds),
        "array": f"0-{workers - 1}" if array else None,
        "output": config_path.parent / ("iotune-train-%A_%a.out" if array
                                        else "iotune-train-%j.out"),
        "partition": partition or None,
        "account": account or None,
        "requeue": True,
        "signal": f"B:USR1@{REQUEUE_SIGNAL_LEAD_S}",
        "open-mode": "append",  # a requeued start adds to the log instead of replacing it
    }
    scales = ", ".join(str(p.scale.cores) for p in plans)
    train = f"{shlex.quote(sys.executable)} -m iotune train -c {shlex.quote(str(config_path))}"
    share = ([f"# A job array of {workers} tasks: each claims runs not yet recorded or claimed,",
              "# so every run is measured once between them; a task that dies leaves its run",
              "# to the others. Watch it: iotune status -c "
              f"{shlex.quote(str(config_path))} --watch"] if array else [])
    return render_job_script(directives, [
        f"# iotune {__version__} training campaign: {runs} runs at {scales} cores,",
        f"# about {per_run:.0f} s per run. Resubmitting resumes where it stopped.",
        *share,
        "# Near the time limit Slurm sends this script SIGUSR1 (--signal); it passes SIGTERM",
        f"# on to iotune, which stops at once, keeps every run recorded and exits with status "
        f"{REQUEUE_EXIT};",
        "# the job then requeues itself and the next start resumes the campaign. A SIGTERM",
        "# (scancel) stops iotune the same way, without a requeue: the job ends, its runs stay.",
        "set -uo pipefail",
        f"cd {shlex.quote(str(config_path.parent))}",
        "requeue=no stop=no iotune=",
        "stop() { stop=yes; [ -z \"$iotune\" ] || kill -TERM \"$iotune\" 2>/dev/null; }",
        "trap 'requeue=yes; stop' USR1",
        "trap stop TERM",
        f"{train} &",
        "iotune=$!",
        '# a signal before iotune was known: pass it on now',
        '[ "$stop" = no ] || kill -TERM "$iotune" 2>/dev/null',
        '# a trapped signal ends "wait" early (status > 128): wait until iotune has ended;',
        "# bash keeps an ended child's status, so the last wait returns iotune's own",
        'wait "$iotune"',
        'while kill -0 "$iotune" 2>/dev/null; do wait "$iotune"; done',
        'wait "$iotune"; status=$?',
        f'if [ "$status" -eq {REQUEUE_EXIT} ] && [ "$requeue" = yes ]; then',
        '  echo "iotune: requeueing job $SLURM_JOB_ID to resume the campaign"',
        '  scontrol requeue "$SLURM_JOB_ID"',
        "fi",
        'exit "$status"',
    ])


def write_job_script(path: Path, text: str, *, in_use: InUse = NOTHING_IN_USE,
                     force: bool = False) -> None:
    """Write ``text`` to ``path`` executable (sbatch does not need it; users do), by the
    rules of :func:`iotune.execution.outputs.write_output` (option ``--emit-sbatch``)."""
    write_output(path, text, "script", option="--emit-sbatch", in_use=in_use, force=force,
                 mode=0o755)
