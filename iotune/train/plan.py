"""The plan of a training campaign: every run over the configured scales, in a stable order.

A *task* is one repetition of one configuration at one scale; :func:`plan_campaign` lists
them scale by scale (ascending), each scale's configurations from its design
(:mod:`iotune.train.designs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from iotune.backends import Backend, RunRequest, make_backend
from iotune.config import Config, ScaleConfig
from iotune.errors import ConfigError
from iotune.execution.slurm import Allocation
from iotune.kernel_specs import get_kernel
from iotune.settings.bounds import MAX_PLAN_RUNS
from iotune.settings.space import check_configuration
from iotune.train.designs import design_configurations


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
    check_plan_size(config)
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
        if not configs:
            raise ConfigError(f"train.scales[{index}]: no valid configuration at {scale.cores} "
                              f"cores: {_why_none(config, scale.cores)}")
        tasks = tuple(
            Task(RunRequest(config.kernel.name, scale.cores, c, params), rep)
            for c in configs for rep in range(config.train.repetitions)
        )
        plans.append(ScalePlan(scale, len(configs), tasks))
    return plans


def check_plan_size(config: Config) -> None:
    """ConfigError, at once, when the plan would hold more than :data:`MAX_PLAN_RUNS` runs:
    counted from the space's size, the scales' ``runs`` and the repetitions, before a
    configuration is built (a ``recorded`` scale without ``runs`` is counted by its data)."""
    total = 0
    for scale in config.train.scales:
        if scale.design == "recorded" and scale.runs is None:
            continue
        configurations = (scale.runs if scale.runs is not None and scale.design != "full"
                          else config.space.size)
        total += configurations * config.train.repetitions
    if total > MAX_PLAN_RUNS:
        raise ConfigError(f"train: the plan holds up to {total:,} runs (configurations x "
                          f"train.repetitions over the scales), above the limit of "
                          f"{MAX_PLAN_RUNS:,} (docs/campaigns.md, Limits)")


def _why_none(config: Config, cores: int) -> str:
    """The rule the space's first configuration breaks at ``cores`` ranks (every one
    breaks one when a scale has no valid configuration)."""
    first = {name: values[0] for name, values in config.space.values}
    try:
        check_configuration(first, cores, config.system.limits, "space")
    except ConfigError as exc:
        return f"{exc} (and so does every other combination of the space)"
    return "every combination of the space breaks a rule at this scale"


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


def check_fits_allocation(plans: Iterable[ScalePlan], allocation: Allocation) -> None:
    for plan in plans:
        if plan.scale.cores > allocation.tasks:
            raise ConfigError(
                f"train.scales: {plan.scale.cores} cores exceed this Slurm allocation's "
                f"{allocation.tasks} tasks; ask for more with sbatch -n, or drop that scale"
            )
