"""``tune``: the baseline, a search strategy at the target scale, and the tuned result.

The flow (Behzad et al., section 3): measure the default configuration (what the system
gives with no settings), let the strategy evaluate configurations at the target scale under
the budget, and report the best measured configuration with its speedup over the default.
Every measurement is appended to the store (campaign ``tune``); measurements of the same
configuration already in the store are reused unless ``fresh``.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iotune import __version__
from iotune.backends import Backend, RunRequest
from iotune.config import Config
from iotune.errors import ConfigError
from iotune.racing import CONFIDENCE, Choice, estimate, race, race_reserve
from iotune.settings import SETTINGS, config_key, describe_value, mpiio_hints
from iotune.space import SearchSpace
from iotune.store import PROVENANCE, Store, now_iso, records_to_dataframe
from iotune.strategies.base import (
    STATISTICS,
    Configuration,
    Evaluation,
    SearchContext,
    make_strategy,
)
from iotune.variability.state import (
    StatePolicy,
    StateTracker,
    probe_latencies,
    ranking_times,
    should_repeat,
)

if TYPE_CHECKING:
    import pandas as pd

ProgressFn = Callable[[str], None]
TUNED_SCHEMA_VERSION = 1


class StoreSearchContext(SearchContext):
    """Evaluates configurations through a backend, recording into (and reusing) a store."""

    def __init__(self, *, backend: Backend, store: Store, kernel: str, cores: int,
                 params: Mapping[str, Any], space: SearchSpace, candidates: Sequence[Configuration],
                 budget: int | None, repetitions: int, statistic: str, reuse: bool = True,
                 progress: ProgressFn | None = None, strategy: str = "",
                 state_policy: StatePolicy | None = None) -> None:
        super().__init__(candidates, budget)
        self.backend, self.store, self.kernel, self.cores = backend, store, kernel, cores
        self.params = dict(params)
        self.space = space
        self.repetitions, self.statistic, self.reuse = repetitions, statistic, reuse
        self.progress = progress
        self.runs = 0
        self.reused = 0
        self.policy = state_policy or StatePolicy()
        self.tracker = None if state_policy is None else _start_tracker(store, backend,
                                                                        state_policy)
        #: Tags every record of this tune, so reports can follow one search run by run.
        self.tags = {"strategy": strategy, "tune_id": uuid.uuid4().hex[:12],
                     "target_cores": cores}
        self._earlier: dict[str, list[dict[str, Any]]] = {}
        if reuse:  # one pass over the store, not one per configuration
            for record in store.iter_records():
                if record.get("backend") == backend.name and record.get("campaign") == "tune":
                    self._earlier.setdefault(record.get("config_key", ""), []).append(record)

    def key(self, settings: Mapping[str, Any]) -> str:
        return config_key(self.kernel, self.cores, settings, self.params)

    def previous(self, key: str) -> list[dict[str, Any]]:
        """Measurements of ``key`` by this backend from earlier tunes (empty when fresh)."""
        return list(self._earlier.get(key, []))

    def _measure(self, settings: Configuration, evaluation: Evaluation) -> None:
        records = self.previous(evaluation.key)
        if self.tracker is None:
            records = records[: self.repetitions]
        self.reused += len(records)
        request = RunRequest(self.kernel, self.cores, settings, self.params)
        for target in range(len(records), self.repetitions):
            records += self._measure_until_idle(request, evaluation, len(records),
                                                f"rep {target + 1}/{self.repetitions}")
        evaluation.records = records
        self._summarise(evaluation)

    def _measure_again(self, evaluation: Evaluation) -> None:
        """One more repetition: an unused earlier measurement of it if any, else a new run."""
        done = len(evaluation.records)
        earlier = self.previous(evaluation.key)
        if done < len(earlier):
            evaluation.records.append(earlier[done])
            self.reused += 1
        else:
            request = RunRequest(self.kernel, self.cores, evaluation.settings, self.params)
            evaluation.records += self._measure_until_idle(
                request, evaluation, done, f"rep {done + 1} (race)")
        self._summarise(evaluation)

    def _measure_until_idle(self, request: RunRequest, evaluation: Evaluation, rep: int,
                            what: str) -> list[dict[str, Any]]:
        """One repetition; state-aware, repeated while the storage is busy (policy)."""
        records = []
        repeats = 0
        while True:
            if self.progress:
                again = f" (busy, repeat {repeats})" if repeats else ""
                self.progress(f"run {self.runs + 1}: config {evaluation.order} {what}{again} "
                              f"{_settings_text(request.settings)}")
            record = self._measure_once(request, rep)
            rep += 1
            records.append(record)
            state = (record.get("probe") or {}).get("state")
            if self.tracker is None or not should_repeat(str(state), repeats, self.policy):
                return records
            repeats += 1

    def _summarise(self, evaluation: Evaluation) -> None:
        """Times, bandwidths, failures and the statistic from ``evaluation.records``."""
        evaluation.times, evaluation.bandwidths, evaluation.failures = [], [], []
        states = []
        for record in evaluation.records:
            result = record.get("result") or {}
            if record.get("status") == "ok":
                evaluation.times.append(float(result["times_s"]["total"]))
                evaluation.bandwidths.append(float(result["bandwidth_mib_s"]))
                states.append(str((record.get("probe") or {}).get("state", "unknown")))
            else:
                evaluation.failures.append(str(record.get("error")))
        evaluation.states = states
        if self.tracker is not None and evaluation.times:
            ranked = ranking_times(evaluation.times, states, self.policy.min_idle)
            evaluation.statistic = STATISTICS[self.statistic](ranked)
        else:
            evaluation.summarise(self.statistic)
        if self.progress and evaluation.statistic is not None:
            self.progress(f"  -> {self.statistic} {evaluation.statistic:.3f} s, "
                          f"{max(evaluation.bandwidths):.1f} MiB/s best rep")

    def _measure_once(self, request: RunRequest, rep: int) -> dict[str, Any]:
        """One measurement, tagged with the storage state when state-aware, then stored."""
        latency = None
        if self.tracker is not None:
            latency = self.backend.probe_before(self.policy.probe_size)
        record = self.backend.measure(request, rep)
        if self.tracker is not None:
            if latency is None:
                latency = self.backend.probe_after(record, self.policy.probe_size)
            if latency is not None:
                record["probe"] = self.tracker.observe(latency).as_record(self.policy.probe_size)
        self.runs += 1
        return self.store.append({"campaign": "tune", **self.tags, **record})

    def training_frame(self) -> pd.DataFrame:
        records = [r for r in self.store.iter_records()
                   if r.get("kernel") == self.kernel and r.get("backend") == self.backend.name]
        return records_to_dataframe(records)

    def candidate_frame(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame(self.candidates)
        frame["cores"] = self.cores
        return frame


def _start_tracker(store: Store, backend: Backend, policy: StatePolicy) -> StateTracker:
    """A state tracker seeded with earlier probe latencies of the same size, if any."""
    if backend.name == "replay":
        raise ConfigError("--state-aware: the replay backend has no storage-state probes")
    earlier = probe_latencies(store.iter_records(), size_bytes=policy.probe_size)
    return StateTracker(policy, latencies=earlier)


def _settings_text(settings: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={describe_value(k, v)}" for k, v in settings.items()) or "defaults"


@dataclass
class TuneResult:
    """The outcome of a tune, ready to print or to write as the tuned YAML.

    ``best`` is the configuration with the best estimated time after the race (see
    :mod:`iotune.racing`); ``choice`` says whether it is recommended or the default is.
    """

    kernel: str
    cores: int
    nodes: int
    params: dict[str, Any]
    backend: str
    system: str
    strategy: str
    default: Evaluation
    choice: Choice
    evaluations: list[Evaluation]
    runs: int
    reused: int
    elapsed_s: float
    bytes_written: int
    statistic: str
    budget: int | None = None
    spent: int = 0
    best_so_far: list[float] = field(default_factory=list)
    model: Any = None

    @property
    def best(self) -> Evaluation | None:
        return self.choice.best

    @property
    def recommended(self) -> Evaluation:
        return self.choice.recommended

    @property
    def speedup(self) -> float | None:
        """Estimated speedup of the recommended configuration over the default."""
        if self.choice.recommend_default:
            return 1.0 if self.default.times else None
        return self.choice.speedup.value if self.choice.speedup else None

    def figures(self, evaluation: Evaluation) -> dict[str, Any]:
        """Time statistic, bandwidth, spread and interval over one configuration's runs."""
        if evaluation.statistic is None:
            return {"status": "failed", "errors": evaluation.failures}
        mib = self.bytes_written / 2**20
        out: dict[str, Any] = {
            "time_s": round(evaluation.statistic, 6),
            "bandwidth_mib_s": round(mib / evaluation.statistic, 3),
            "statistic": self.statistic,
            "repetitions": len(evaluation.times),
            "time_min_s": round(min(evaluation.times), 6),
            "time_max_s": round(max(evaluation.times), 6),
            "failed_repetitions": len(evaluation.failures),
        }
        found = estimate(evaluation, self.choice.noise)
        if found is not None:
            out["estimate_s"] = round(found.time_s, 6)
            out["interval_s"] = (None if found.low_s is None or found.high_s is None
                                 else [round(found.low_s, 6), round(found.high_s, 6)])
        return out

    def _described(self, evaluation: Evaluation) -> dict[str, Any]:
        return {"settings": _settings_document(evaluation.settings),
                **self.figures(evaluation)}

    def to_tuned(self) -> dict[str, Any]:
        """The tuned-configuration document users check into their job scripts.

        ``settings`` are those recommended: empty when no configuration beat the default
        with confidence (``recommendation: default``, with the reason and the best found).
        """
        choice = self.choice
        chosen = choice.recommended
        gain = choice.speedup
        doc: dict[str, Any] = {
            "schema_version": TUNED_SCHEMA_VERSION,
            "iotune_version": __version__,
            "created_at": now_iso(),
            "kernel": self.kernel,
            "kernel_args": self.params,
            "cores": self.cores,
            "nodes": self.nodes,
            "system": self.system,
            "backend": self.backend,
            "provenance": PROVENANCE[self.backend],
            "recommendation": "default" if choice.recommend_default else "tuned",
            "reason": choice.reason,
            "settings": _settings_document(chosen.settings),
            "mpiio_hints": mpiio_hints(chosen.settings),
            "measured": self.figures(chosen) if chosen.times or chosen.failures else None,
            "predicted_time_s": (round(chosen.predicted, 6) if chosen.predicted else None),
            "default": self.figures(self.default),
            "speedup": round(self.speedup, 3) if self.speedup else None,
            "confidence": CONFIDENCE,
            "best_found": self._described(choice.best) if choice.best is not None else None,
            "best_found_speedup": None if gain is None else {
                "estimate": round(gain.value, 3),
                "interval": (None if gain.low is None or gain.high is None
                             else [round(gain.low, 3), round(gain.high, 3)])},
            "runner_up": (self._described(choice.runner_up) if choice.runner_up is not None
                          else None),
            "tied_with_runner_up": choice.tied_with_runner_up,
            "noise": {"log_sigma": (None if choice.noise.sigma is None
                                    else round(choice.noise.sigma, 4)),
                      "degrees_of_freedom": choice.noise.df},
            "search": {"strategy": self.strategy, "configurations": len(self.evaluations),
                       "runs": self.runs, "reused_measurements": self.reused,
                       "budget": self.budget, "budget_spent": self.spent,
                       "race_runs": choice.race_runs,
                       "elapsed_s": round(self.elapsed_s, 1)},
        }
        if self.model is not None:
            doc["model"] = model_summary(self.model)
        return doc


def model_summary(model: Any) -> dict[str, Any]:
    """The model's formula and errors, with a verdict on whether to trust its predictions."""
    stats = model.stats
    cv = stats.cv_rms_relative_error if stats else None
    return {
        "formula": model.formula(),
        "params": list(model.params),
        "terms": model.term_names(),
        "training_rows": stats.rows if stats else None,
        "training_rms_relative_error": stats.rms_relative_error if stats else None,
        "cv_rms_relative_error": cv,
        "predictions_trusted": prediction_warning(cv) is None,
    }


#: Above this cross-validated RMS relative error, a prediction is off by more than half the
#: time on a typical held-out run: good enough to rank with, not to quote as a time.
TRUSTED_CV_ERROR = 0.5


def prediction_warning(cv_rms_relative_error: float | None) -> str | None:
    """One line warning that predictions cannot be trusted, or None when they can."""
    if cv_rms_relative_error is None:
        return ("model: no cross-validated error (too few configurations): treat its "
                "predictions as a ranking only")
    if cv_rms_relative_error > TRUSTED_CV_ERROR:
        return (f"model: cross-validated RMS relative error {cv_rms_relative_error:.2f} is "
                f"above {TRUSTED_CV_ERROR}: its predicted times are not to be trusted, only "
                "the measured ones")
    return None


def _settings_document(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: describe_value(k, v) if SETTINGS.get(k) and SETTINGS[k].kind == "bytes" else v
            for k, v in settings.items()}


def search_budget(budget: int | None, strategy: str, tune_cfg: Any) -> int | None:
    """The whole budget of a tune: as given, else the config's, else for the model strategy
    the paper's ``top_k + refit_rounds x top_k_refit`` (30 by default)."""
    if budget is not None or tune_cfg.budget is not None:
        return budget or tune_cfg.budget
    if strategy == "model":
        return int(tune_cfg.top_k + tune_cfg.refit_rounds * tune_cfg.top_k_refit)
    return None


def tune(config: Config, backend: Backend, store: Store, *, kernel: str, cores: int,
         strategy: str | None = None, budget: int | None = None,
         strategy_options: Mapping[str, Any] | None = None, fresh: bool = False,
         progress: ProgressFn | None = None, state_aware: bool | None = None) -> TuneResult:
    """Measure the default, search at ``cores`` ranks, race the leaders, and return the result.

    The budget (configurations evaluated plus extra runs of the race) is split: a fifth is
    kept for the race (:func:`iotune.racing.race_reserve`), the rest goes to the strategy.
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
    tune_cfg = config.tune
    name = strategy or tune_cfg.strategy
    options = dict(strategy_options or {})
    if name == "model":
        options.setdefault("top_k", tune_cfg.top_k)
        options.setdefault("top_k_refit", tune_cfg.top_k_refit)
        options.setdefault("refit_rounds", tune_cfg.refit_rounds)
        options.setdefault("max_terms", tune_cfg.max_terms)
    if name in ("model", "random", "genetic", "tpe"):
        options.setdefault("seed", tune_cfg.seed)
    search = make_strategy(name, **options)
    total = search_budget(budget, name, tune_cfg)
    reserve = race_reserve(total)
    started = time.monotonic()
    context = StoreSearchContext(
        backend=backend, store=store, kernel=kernel, cores=cores, params=config.kernel.args,
        space=config.space, candidates=candidates,
        budget=None if total is None else max(1, total - reserve),
        repetitions=tune_cfg.repetitions, statistic=tune_cfg.statistic, reuse=not fresh,
        progress=progress, strategy=name,
        state_policy=_state_policy(tune_cfg) if (tune_cfg.state_aware if state_aware is None
                                                 else state_aware) else None,
    )
    search.prepare(context)
    if progress:
        progress(f"default configuration at {cores} ranks (the baseline)")
    default = Evaluation({}, context.key({}), order=0)
    context._measure({}, default)
    if progress:
        progress(f"searching {len(candidates)} candidate configurations with '{name}'"
                 + (f", budget {total} ({reserve} kept to race the leaders)" if total else ""))
    search.search(context)
    context.budget = (context.spent + reserve if total is None
                      else max(total, context.spent))
    if progress and reserve:
        progress(f"racing the leaders and the default (up to {reserve} more runs)")
    choice = race(default, lambda: list(context.evaluations.values()), context.remeasure,
                  reserve)
    return TuneResult(
        kernel=kernel, cores=cores, nodes=config.system.limits.nodes_for(cores),
        params=config.kernel.args, backend=backend.name, system=config.system.name,
        strategy=name, default=default, choice=choice,
        evaluations=sorted(context.evaluations.values(), key=lambda e: e.order),
        runs=context.runs, reused=context.reused, elapsed_s=time.monotonic() - started,
        bytes_written=_bytes_written(context), statistic=tune_cfg.statistic,
        budget=total, spent=context.spent,
        best_so_far=context.best_so_far, model=search.notes.get("model"),
    )


def _state_policy(tune_cfg: Any) -> StatePolicy:
    return StatePolicy(max_repeats=tune_cfg.busy_repeats, min_idle=tune_cfg.min_idle)


def _bytes_written(context: StoreSearchContext) -> int:
    """Bytes one measurement writes: the kernel's bytes per rank times the ranks."""
    from iotune.kernels import get_kernel

    return get_kernel(context.kernel).bytes_per_rank(context.params) * context.cores
