"""Training campaigns: the plan of runs over the configured scales, executed resumably.

A *task* is one repetition of one configuration at one scale. A task is done when the store
holds a record with its configuration key, repetition number and campaign ``train`` (ok or
failed: a failure is an answer, not something to retry blindly; ``retry_failed`` reruns them).
Records are written only after a run ends, so a job killed at any point loses at most the run
in flight, and a rerun of the same command skips everything already recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from iotune.backends import Backend, RunRequest, make_backend
from iotune.config import Config, ScaleConfig
from iotune.designs import design_configurations
from iotune.errors import ConfigError
from iotune.kernels import get_kernel
from iotune.settings import describe_value
from iotune.slurm import Allocation
from iotune.store import Store


@dataclass(frozen=True)
class Task:
    request: RunRequest
    rep: int

    @property
    def ident(self) -> tuple[str, int]:
        return (self.request.key, self.rep)


@dataclass(frozen=True)
class ScalePlan:
    scale: ScaleConfig
    configurations: int
    tasks: tuple[Task, ...]


def plan_campaign(config: Config, backend: Backend | None = None) -> list[ScalePlan]:
    """Every task of the training campaign, scale by scale (ascending), in a stable order.

    A ``design: recorded`` scale takes its configurations from ``backend.candidates(cores)``
    (the replay backend's recorded ones); when ``backend`` is None one is made from
    ``config``, and only if some scale needs it.
    """
    if not config.train.scales:
        raise ConfigError("train.scales: empty; list the scales to train at, e.g. "
                          "[{cores: 2, design: full}]")
    plans = []
    ordered = sorted(enumerate(config.train.scales), key=lambda item: item[1].cores)
    for rank, (index, scale) in enumerate(ordered):
        spec = get_kernel(config.kernel.name)
        overrides = {k: v for k, v in scale.params if spec.param(k) is not None}
        params = {**config.kernel.args, **overrides}
        recorded = None
        if scale.design == "recorded":
            backend = backend or make_backend(config)
            recorded = recorded_configurations(backend, config, scale.cores,
                                               f"train.scales[{index}]")
        configs = design_configurations(
            scale.design, config.space, scale.cores, config.system.limits,
            runs=scale.runs, seed=config.train.seed + rank, scale_rank=rank,
            recorded=recorded,
        )
        tasks = tuple(
            Task(RunRequest(config.kernel.name, scale.cores, c, params), rep)
            for c in configs for rep in range(config.train.repetitions)
        )
        plans.append(ScalePlan(scale, len(configs), tasks))
    return plans


def recorded_configurations(backend: Backend, config: Config, cores: int,
                            where: str) -> list[dict[str, Any]]:
    """``backend``'s recorded configurations at ``cores``; ConfigError if it has none."""
    recorded = backend.candidates(cores)
    if recorded is None:
        raise ConfigError(f"{where}.design: 'recorded' needs --backend replay (the "
                          f"{backend.name} backend has no recorded configurations)")
    if not recorded:
        raise ConfigError(f"{where}.cores: no configuration recorded at {cores} cores in "
                          f"{config.backend.replay_data}; record some or drop this scale")
    return recorded


def done_tasks(store: Store, retry_failed: bool = False) -> set[tuple[str, int]]:
    """(config key, rep) of the training tasks already recorded in ``store``."""
    return {
        (r["config_key"], int(r.get("rep", 0)))
        for r in store.iter_records()
        if r.get("campaign") == "train" and (r.get("status") == "ok" or not retry_failed)
    }


def check_fits_allocation(plans: Iterable[ScalePlan], allocation: Allocation) -> None:
    for plan in plans:
        if plan.scale.cores > allocation.tasks:
            raise ConfigError(
                f"train.scales: {plan.scale.cores} cores exceed this Slurm allocation's "
                f"{allocation.tasks} tasks; ask for more with sbatch -n, or drop that scale"
            )


def describe_settings(settings: dict[str, Any]) -> str:
    return " ".join(f"{k}={describe_value(k, v)}" for k, v in settings.items()) or "defaults"


ProgressFn = Callable[[int, int, Task, dict[str, Any] | None, float | None], None]


def run_campaign(plans: list[ScalePlan], backend: Backend, store: Store, *,
                 retry_failed: bool = False, progress: ProgressFn | None = None,
                 campaign: str = "train") -> dict[str, int]:
    """Run every task not yet in ``store``; returns counts of ran, skipped, failed.

    ``progress(i, n, task, record, eta_s)`` is called before each run (record None) and
    after it (with the record written).
    """
    done = done_tasks(store, retry_failed)
    todo = [t for p in plans for t in p.tasks if t.ident not in done]
    skipped = sum(len(p.tasks) for p in plans) - len(todo)
    failed = 0
    started = time.monotonic()
    for i, task in enumerate(todo, start=1):
        elapsed = time.monotonic() - started
        eta = elapsed / (i - 1) * (len(todo) - i + 1) if i > 1 else None
        if progress:
            progress(i, len(todo), task, None, eta)
        record = store.append({"campaign": campaign, **backend.measure(task.request, task.rep)})
        failed += record["status"] != "ok"
        if progress:
            progress(i, len(todo), task, record, None)
    return {"ran": len(todo), "skipped": skipped, "failed": failed}
