"""``tune``: the baseline, a search strategy at the target scale, the race, the result.

The flow (Behzad et al., section 3): measure the default configuration (what the system
gives with no settings), let the strategy evaluate configurations at the target scale under
the budget, race the leaders against the default (:mod:`iotune.strategies.racing`), and report the
best configuration with its speedup over the default. Every measurement is appended to the
store (campaign ``tune``); measurements of the same configuration already in the store are
reused unless ``fresh`` (failed ones too, unless ``retry_failed``; interrupted ones never).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from iotune.backends import Backend
from iotune.config import Config, TuneConfig
from iotune.errors import ConfigError
from iotune.store import Store
from iotune.store.index import StoreIndex
from iotune.strategies.base import Strategy, make_strategy, resolve_options
from iotune.strategies.racing import Budget, race
from iotune.tune.context import MeasuringContext, ProgressFn, StoreSink
from iotune.tune.result import TuneResult
from iotune.tune.target import with_target
from iotune.variability.state import StatePolicy


def search_budget(budget: int | None, search: Strategy, tune_cfg: TuneConfig) -> int | None:
    """The whole budget of a tune: as given, else the config's, else the strategy's own
    (:meth:`~iotune.strategies.base.Strategy.default_budget`; None: until it stops)."""
    if budget is not None or tune_cfg.budget is not None:
        return budget or tune_cfg.budget
    return search.default_budget()


def tune(config: Config, backend: Backend, store: Store, *, kernel: str, cores: int,
         strategy: str | None = None, budget: int | None = None,
         strategy_options: Mapping[str, Any] | None = None, fresh: bool = False,
         progress: ProgressFn | None = None, state_aware: bool | None = None,
         retry_failed: bool = False) -> TuneResult:
    """Measure the default, search at ``cores`` ranks, race the leaders, and return the result.

    ``strategy_options`` are the strategy's options given on the command line (over the
    config's, see :func:`resolve_options`). The budget (configurations evaluated plus extra
    runs of the race) is split: a fifth is kept for the race, the rest goes to the strategy
    (:class:`iotune.strategies.racing.Budget`); the result holds it with what was spent.
    """
    if kernel != config.kernel.name:
        raise ConfigError(f"--kernel: '{kernel}' is not the config's kernel "
                          f"'{config.kernel.name}'; use a config for that kernel")
    recorded = backend.candidates(cores)
    candidates = (config.space.configurations(cores, config.system.limits) if recorded is None
                  else recorded)
    if not candidates:
        raise ConfigError(f"space: no valid configuration at {cores} cores (check cb_nodes "
                          "against the ranks and aggregators_per_node)")
    config = with_target(config, None, backend=backend.name)
    tune_cfg = config.tune
    name = strategy or tune_cfg.strategy
    search = make_strategy(name, **resolve_options(tune_cfg, name, strategy_options))
    split = Budget.split(search_budget(budget, search, tune_cfg))
    started = time.monotonic()
    context = MeasuringContext(
        backend=backend, kernel=kernel, cores=cores, params=config.kernel.args,
        sink=StoreSink(StoreIndex(store), kernel=kernel, backend=backend.name,
                       source=backend.source(), reuse=not fresh,
                       retry_failed=retry_failed),
        candidates=candidates, budget=split.search,
        repetitions=tune_cfg.repetitions, statistic=tune_cfg.statistic,
        progress=progress, strategy=name,
        state_policy=_state_policy(tune_cfg) if (tune_cfg.state_aware if state_aware is None
                                                 else state_aware) else None,
        target=tune_cfg.target,
    )
    search.prepare(context)
    if progress:
        progress(f"default configuration at {cores} ranks (the baseline)")
    default = context.measure_baseline()
    if progress:
        progress(f"searching {len(candidates)} candidate configurations with '{name}'"
                 + (f", budget {split.total} ({split.reserve} kept to race the leaders)"
                    if split.total else ""))
    search.search(context)
    context.budget = split.after_search(context.spent)
    if progress and split.reserve:
        progress(f"racing the leaders and the default (up to {split.reserve} more runs)")
    choice = race(default, lambda: list(context.evaluations.values()), context.remeasure,
                  split.reserve)
    return TuneResult(
        kernel=kernel, cores=cores, nodes=config.system.limits.nodes_for(cores),
        params=config.kernel.args, backend=backend.name, system=config.system.name,
        strategy=name, default=default, choice=choice,
        evaluations=sorted(context.evaluations.values(), key=lambda e: e.order),
        runs=context.runs, reused=context.reused, reused_from=dict(context.reused_from),
        source=backend.source(), elapsed_s=time.monotonic() - started,
        bytes_written=_bytes_moved(context), statistic=tune_cfg.statistic,
        target=tune_cfg.target,
        budget=split.spending(context.spent),
        best_so_far=context.best_so_far, model=search.notes.get("model"),
        allocation=_allocation(search.notes),
        ignored={name: why for name, (_, why) in context.ignored.items()},
    )


def _allocation(notes: Mapping[str, Any]) -> dict[str, Any] | None:
    """What a portfolio search says about how it shared its budget (None for the others)."""
    if "proposers" not in notes:
        return None
    return {"initial_design": notes.get("initial", 0), "proposers": notes["proposers"],
            "runs": notes.get("runs", {}), "transfer": notes.get("transfer")}


def _state_policy(tune_cfg: Any) -> StatePolicy:
    return StatePolicy(max_repeats=tune_cfg.busy_repeats, min_idle=tune_cfg.min_idle)


def _bytes_moved(context: MeasuringContext) -> int | None:
    """Bytes one measurement moves in the target's time: the kernel's bytes per rank times
    the ranks, twice for ``total`` (written, then read back); None for a kernel that cannot
    know (a user's program)."""
    from iotune.kernel_specs import get_kernel

    spec = get_kernel(context.kernel)
    if not spec.knows_bytes:
        return None
    times = 2 if context.target == "total" else 1
    return spec.bytes_per_rank(context.params) * context.cores * times
