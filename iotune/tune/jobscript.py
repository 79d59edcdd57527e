"""Slurm job scripts for a tune (``iotune tune --emit-sbatch``): the same tune, run inside
an allocation of its ranks, stopped near the time limit and requeued to go on reusing
every run it recorded (:func:`iotune.execution.slurm.supervised_body`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from iotune import __version__
from iotune.config import Config
from iotune.errors import ConfigError
from iotune.execution.slurm import (
    job_time_limit,
    render_job_script,
    requeue_directives,
    supervised_body,
)
from iotune.printable import SlurmName, SlurmPath
from iotune.strategies.base import make_strategy, resolve_options
from iotune.train.jobscript import MARGIN, MINIMUM_SECONDS
from iotune.tune.run import search_budget

#: The option a requeued start leaves out: ``--fresh`` would measure again the runs the
#: stopped start recorded, so it is given to the job's first start alone.
FIRST_START_ONLY = "--fresh"


def estimated_runs(config: Config, strategy: str | None, budget: int | None,
                   options: Mapping[str, Any]) -> int | None:
    """Runs a tune of ``config`` may make, at most: its budget (``budget``, the config's,
    else the strategy's own) of configurations, each measured ``tune.repetitions`` times,
    and the default's; None when the strategy searches until it stops (no budget)."""
    name = strategy or config.tune.strategy
    search = make_strategy(name, **resolve_options(config.tune, name, options))
    total = search_budget(budget, search, config.tune)
    if total is None:
        return None
    return (total + 1) * config.tune.repetitions


def tune_job_script(config: Config, command: Sequence[str], directory: Path, cores: int, *,
                    per_run: float, runs: int | None, fresh: bool = False,
                    partition: str | None = None, account: str | None = None,
                    time_limit: str | None = None) -> str:
    """A complete sbatch script that runs ``command`` (``python -m iotune tune`` with the
    options of this tune, ``--fresh`` left out) in ``directory`` on ``cores`` ranks (whole
    nodes of ``system.cores_per_node``), requeued at the time limit to go on.

    The time limit is ``time_limit`` (Slurm's format) or ``runs`` x ``per_run`` seconds with
    :data:`~iotune.train.jobscript.MARGIN`, at least
    :data:`~iotune.train.jobscript.MINIMUM_SECONDS`; ConfigError when neither is known.
    With ``fresh``, ``--fresh`` is given to the first start only (a requeued start reuses
    the runs it made). Every value is printed by :mod:`iotune.printable` (ConfigError
    naming the option that breaks its rule)."""
    if time_limit is None and runs is None:
        raise ConfigError("--emit-sbatch: the strategy searches until it stops (no budget), "
                          "so the job's time cannot be estimated: give --time or --budget")
    seconds = max(MINIMUM_SECONDS, (runs or 0) * per_run * MARGIN)
    directives = {
        "job-name": SlurmName(f"iotune-tune-{config.kernel.name}", "kernel"),
        "nodes": -(-cores // config.system.cores_per_node),
        "ntasks": cores,
        "time": job_time_limit(time_limit, seconds, "give a smaller --budget, or --time"),
        "output": SlurmPath(str(directory), "the current directory",
                            file="iotune-tune-%j.out"),
        "partition": SlurmName(partition, "--partition") if partition else None,
        "account": SlurmName(account, "--account") if account else None,
        **requeue_directives(),
    }
    estimate = (f"# time limit given with --time ({time_limit})." if time_limit else
                f"# time limit: up to {runs} runs at about {per_run:.0f} s each, with margin.")
    first = ([f"# {FIRST_START_ONLY} is given to the first start only: a requeued start "
              "reuses the runs it made."] if fresh else [])
    body = supervised_body(command, str(directory), "the tune",
                           first_start_only=[FIRST_START_ONLY] if fresh else [])
    return render_job_script(directives, [
        f"# iotune {__version__} tune of {config.kernel.name} at {cores} ranks;",
        estimate,
        "# Resubmitting goes on where it stopped, reusing every run recorded.",
        *first,
        *body,
    ])
