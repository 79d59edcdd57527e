"""``tune``: the baseline, a search strategy at the target scale, the race, the result.

The flow (Behzad et al., section 3): measure the default configuration (what the system
gives with no settings), let the strategy evaluate configurations at the target scale under
the budget, race the leaders against the default (:mod:`iotune.strategies.racing`), and report the
best configuration with its speedup over the default. Configurations that ran identically
(the same settings in effect, :mod:`iotune.tune.identical`) race, and are reported, as one.
Every measurement is appended to the
store (campaign ``tune``); measurements of the same configuration already in the store are
reused unless ``fresh`` (failed ones too, unless ``retry_failed``; interrupted ones and
failures of the environment never). When the default's first runs all fail because of the
environment (the program cannot start, a library cannot load:
:mod:`iotune.execution.failures`), the tune stops there with that error: every other run
would fail the same way.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Mapping
from typing import Any

from iotune.backends import Backend
from iotune.config import Config, TuneConfig
from iotune.errors import ConfigError, LaunchError
from iotune.execution.failures import environment_failure_of
from iotune.kernel_specs import metric_of
from iotune.knowledge.priors import Priors
from iotune.store import Store
from iotune.store.index import StoreIndex
from iotune.strategies.base import Evaluation, Strategy, make_strategy, resolve_options
from iotune.strategies.racing import Budget, Noise, pooled_noise, race
from iotune.tune.context import MeasuringContext, ProgressFn, StoreSink
from iotune.tune.identical import SignatureCache, merge_identical
from iotune.tune.knowledge import KnowledgeUse, matched_candidates, pooled_with_prior
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
         retry_failed: bool = False, priors: Priors | None = None) -> TuneResult:
    """Measure the default, search at ``cores`` ranks, race the leaders, and return the result.

    ``strategy_options`` are the strategy's options given on the command line (over the
    config's, see :func:`resolve_options`). The budget (configurations evaluated plus extra
    runs of the race) is split: a fifth is kept for the race, the rest goes to the strategy
    (:class:`iotune.strategies.racing.Budget`); the result holds it with what was spent.

    ``priors`` are what a knowledge base knows of similar workloads on this system
    (:mod:`iotune.tune.knowledge`): its noise helps split the budget, and its known
    configurations of this space are measured right after the default and race whatever
    their rank; the race's rule still decides on this workload's runs alone. None (no
    knowledge base) or empty priors leave the tune as it is without them.
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
    total = search_budget(budget, search, tune_cfg)
    started = time.monotonic()
    sink = StoreSink(StoreIndex(store), kernel=kernel, backend=backend.name,
                     source=backend.source(), reuse=not fresh, retry_failed=retry_failed)
    context = MeasuringContext(
        backend=backend, kernel=kernel, cores=cores, params=config.kernel.args,
        sink=sink, candidates=candidates, budget=total,
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
    _stop_on_environment_failure(default, cores)
    repeated = _repeat_default(context, default)
    own, own_source = known_noise(default, sink.earlier_runs(
        kernel, cores, config.kernel.args, exclude=default.key, target=tune_cfg.target))
    noise, source, pooled = pooled_with_prior(own, own_source, priors)
    first, outside = matched_candidates(priors, candidates, context.key)
    knowledge = (None if priors is None else
                 KnowledgeUse(priors, tuple(first), outside, pooled))
    split = Budget.split(total, noise, source)
    if split.search is not None:  # the default's early repeat is the race's, not the search's
        context.budget = split.search + repeated
    if progress:
        if priors is not None:
            progress(priors.text())
        progress(noise_text(split))
        progress(f"searching {len(candidates)} candidate configurations with '{name}'"
                 + (f", budget {split.total} ({split.reserve} kept to race the leaders; "
                    "what the search leaves goes to the race too)" if split.total else ""))
    if first:
        if progress:
            progress(f"measuring first the {len(first)} configuration"
                     f"{'s' if len(first) != 1 else ''} the knowledge base knows to win "
                     "for similar workloads (they race whatever their rank; only this "
                     "workload's runs can confirm them)")
        context.evaluate(first)
    search.search(context)
    context.budget = split.after_search(context.spent)
    if progress and context.remaining:
        progress(f"racing the leaders and the default (up to {context.remaining} more runs, "
                 "until decided)")
    ignored = {name: why for name, (_, why) in context.ignored.items()}
    reads_back = backend.reads_back

    latest: list[Evaluation] = []
    signatures: SignatureCache = {}

    def pool() -> list[Evaluation]:
        """The configurations measured, those that ran identically as one (the latest list
        kept, so the result holds the very objects the race chose among)."""
        latest[:] = merge_identical(sorted(context.evaluations.values(), key=lambda e: e.order),
                                    ignored, reads_back, tune_cfg.statistic, signatures)
        return list(latest)

    def again(evaluation: Evaluation) -> bool:
        # A merged configuration runs again as its first member.
        return context.remeasure(context.evaluations.get(evaluation.key, evaluation))

    choice = race(default, pool, again, context.remaining,
                  favoured={context.key(c) for c in first})
    choice = dataclasses.replace(choice, race_runs=choice.race_runs + repeated)
    return TuneResult(
        kernel=kernel, cores=cores, nodes=config.system.limits.nodes_for(cores),
        params=config.kernel.args, backend=backend.name, system=config.system.name,
        strategy=name, default=default, choice=choice,
        evaluations=list(latest) or pool(),
        runs=context.runs, reused=context.reused, reused_from=dict(context.reused_from),
        source=backend.source(), elapsed_s=time.monotonic() - started,
        bytes_written=_bytes_moved(context), statistic=tune_cfg.statistic,
        target=tune_cfg.target,
        budget=split.spending(context.spent),
        best_so_far=context.best_so_far, model=search.notes.get("model"),
        allocation=_allocation(search.notes),
        ignored=ignored, metric=metric_of(kernel, config.kernel.args, tune_cfg.target),
        knowledge=knowledge,
    )


#: Smallest total budget that repeats the default before the search: below it the one run
#: is better spent on a configuration.
MIN_EARLY_REPEAT_BUDGET = 3


def _repeat_default(context: MeasuringContext, default: Evaluation) -> int:
    """Run the default a second time right after the baseline when it has one run: the race
    needs it anyway, and two runs show the noise before the search is planned. Returns the
    runs made (charged to the budget as race runs)."""
    if ((context.budget is not None and context.budget < MIN_EARLY_REPEAT_BUDGET)
            or len(default.times) != 1 or not context.remeasure(default)):
        return 0
    return 1


def _stop_on_environment_failure(default: Evaluation, cores: int) -> None:
    """LaunchError when every run of the default failed because of the environment
    (:func:`~iotune.execution.failures.environment_failure_of`): no other configuration
    could run either, so the budget is not spent finding that out."""
    failures = [environment_failure_of(m.record) for m in default.measurements]
    if default.times or not failures or any(f is None for f in failures):
        return
    first = failures[0]
    assert first is not None
    runs = len(failures)
    raise LaunchError(f"tune: stopped after the default's first run{'s' if runs > 1 else ''} "
                      f"at {cores} rank{'s' if cores > 1 else ''}, which failed before "
                      f"measuring anything: {first.text()}; no tuned file written")


def known_noise(default: Evaluation, earlier: list[Evaluation]) -> tuple[Noise, str]:
    """The log spread known before the search, pooled over the default's runs and
    ``earlier`` runs of other configurations (same source, kernel, scale; see
    :meth:`StoreSink.earlier_runs`), with where it came from."""
    noise = pooled_noise([default, *earlier])
    if noise.sigma is None:
        return noise, "unknown"
    parts = []
    if pooled_noise([default]).sigma is not None:
        parts.append(f"the default's {len(default.times)} runs")
    used = [e for e in earlier if pooled_noise([e]).sigma is not None]
    if used:
        runs = sum(len(e.times) for e in used)
        parts.append(f"{runs} earlier runs of {len(used)} configuration"
                     f"{'' if len(used) == 1 else 's'} in the store")
    return noise, " and ".join(parts)


def noise_text(split: Budget) -> str:
    """One line: the noise the budget's split assumed, where it came from, the reserve."""
    if split.total is None:
        return "noise: not needed to split the budget (no total budget)"
    if split.noise is None:
        return (f"noise unknown before the search (nothing repeated yet): {split.reserve} of "
                f"{split.total} runs kept to race the leaders (a fifth)")
    return (f"noise assumed: log spread {split.noise:.2f}, from {split.noise_source}: "
            f"{split.reserve} of {split.total} runs kept to race the leaders")


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
