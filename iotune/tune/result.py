"""What a tune found, and the tuned-configuration document users check into job scripts."""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from iotune import __version__
from iotune.backends import backend_class
from iotune.kernel_specs import metric_of
from iotune.model.trust import possible, prediction_warning
from iotune.settings.catalogue import SettingValueError, parse_setting
from iotune.settings.in_effect import DIFFERS, IGNORED, UNVERIFIED, effects_of, likely_reason
from iotune.settings.metrics import Metric
from iotune.settings.values import SETTINGS, describe_value, mpiio_hints
from iotune.store import now_iso
from iotune.strategies.base import Evaluation
from iotune.strategies.racing import (
    CONFIDENCE,
    UNDECIDED,
    Budget,
    Choice,
    Estimate,
    Speedup,
    ranked_estimates,
    shown_estimates,
    speedup_interval,
)
from iotune.tune.knowledge import KnowledgeUse
from iotune.tune.merged import members
from iotune.tuned import TUNED_SCHEMA_VERSION


@dataclass
class TuneResult:
    """The outcome of a tune, ready to print or to write as the tuned YAML.

    ``best`` is the configuration with the best estimated time after the race (see
    :mod:`iotune.strategies.racing`); ``choice`` says whether it is recommended or the default is.
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
    #: Earlier measurements reused, by the id of the tune that made them (all of the same
    #: configuration and source, :mod:`iotune.store.source`).
    reused_from: dict[str, int]
    #: What the runs were measured with besides their configuration.
    source: str
    elapsed_s: float
    #: Bytes one run moves in the target's time (written, read, or both for ``total``);
    #: None when the kernel cannot know (a user's program).
    bytes_written: int | None
    statistic: str
    #: The tune's budget: the total, the race's reserve, and the runs spent.
    budget: Budget
    best_so_far: list[float] = field(default_factory=list)
    model: Any = None
    #: The time minimised: write, read or total (see :mod:`iotune.tune.target`).
    target: str = "write"
    #: How a portfolio search shared its budget: per proposer the runs it chose and the
    #: credit it earned, which proposers took part, what the training scales said.
    allocation: dict[str, Any] | None = None
    #: Settings the runs showed to change nothing on this system: name -> why (the search
    #: stopped varying them; see :mod:`iotune.settings.in_effect`).
    ignored: dict[str, str] = field(default_factory=dict)
    #: What the runs' figure is called and its unit (:mod:`iotune.settings.metrics`); the
    #: times above are what is minimised (for a bandwidth, its reciprocal).
    metric: Metric = field(default_factory=lambda: metric_of("", {}))
    #: What a knowledge base contributed (None: the tune was given none).
    knowledge: KnowledgeUse | None = None

    @property
    def best(self) -> Evaluation | None:
        return self.choice.best

    @cached_property
    def estimates(self) -> dict[str, Estimate | None]:
        """Each configuration's estimate by key (the default's too): the race's shrunken
        estimate with its interval (:func:`~iotune.strategies.racing.shown_estimates`: the
        best found's allows for its selection), over the configurations the race chose
        among, so ranking by it puts the best found first."""
        pool = [self.default, *self.evaluations]
        return {e.key: found for e, found in
                zip(pool, shown_estimates(pool, self.choice.noise, self.default), strict=True)}

    @cached_property
    def shown_speedup(self) -> Speedup | None:
        """The best found's speedup over the default as printed and written: an estimate of
        the ratio of their typical times with its interval
        (:func:`~iotune.strategies.racing.speedup_interval`). None when the best found is
        the default or either has no successful run. The decision is not read from it but
        from the race's rank test (:attr:`Choice.speedup`)."""
        best = self.choice.best
        if best is None or best is self.default:
            return None
        return speedup_interval(self.default, best, self.choice.noise,
                                [self.default, *self.evaluations])

    @property
    def configurations(self) -> int:
        """Configurations measured (those that ran identically each counted)."""
        return sum(len(members(e)) for e in self.evaluations)

    def ranked(self) -> list[Evaluation]:
        """The default and every configuration, best first by :attr:`estimates` (ties:
        the order measured), those without a successful run last."""
        pool = [self.default, *self.evaluations]
        measured = [e for e, _ in ranked_estimates(pool, self.choice.noise, self.default)]
        seen = {id(e) for e in measured}
        return measured + sorted((e for e in pool if id(e) not in seen), key=lambda e: e.order)

    @property
    def recommended(self) -> Evaluation:
        return self.choice.recommended

    @cached_property
    def verified(self) -> Verified:
        """The recommended configuration's settings that took effect (:func:`verify`; of
        configurations that ran identically, the first measured's own runs say it)."""
        return verify(members(self.choice.recommended)[0], self.ignored,
                      backend_class(self.backend).reads_back)

    @property
    def recommend_default(self) -> bool:
        """Whether the default is recommended: the race did not find a configuration
        better with confidence, or the better one's settings all took no effect."""
        return self.choice.recommend_default or not self.verified.settings

    @property
    def reason(self) -> str:
        verified = self.verified
        if self.choice.recommend_default or verified.settings:
            return self.choice.reason
        why = [f"{n}: {v['why']}" for n, v in verified.not_in_effect.items()]
        if verified.unverified:
            why.append(", ".join(verified.unverified) + ": could not be read back")
        return ("none of the best configuration's settings was shown to take effect here, "
                "so there is no setting to recommend: " + "; ".join(why))

    @property
    def recommendation(self) -> str:
        """``tuned``, ``default`` or ``undecided`` (the best found looks faster but is not
        confirmed; the default's settings stay, and :attr:`budget_to_decide` says what
        budget would decide)."""
        if self.choice.outcome == UNDECIDED:
            return UNDECIDED
        return "default" if self.recommend_default else "tuned"

    @property
    def budget_to_decide(self) -> int | None:
        """For an undecided tune: the ``--budget`` of the same tune, reusing every run, that
        is estimated to decide (the runs spent plus :attr:`Choice.runs_to_decide`)."""
        more = self.choice.runs_to_decide
        if self.recommendation != UNDECIDED or more is None:
            return None
        return self.budget.spent + more

    @property
    def speedup(self) -> float | None:
        """Estimated speedup of the recommended configuration over the default: the
        :attr:`shown_speedup` estimate (1.0 when the default is recommended)."""
        if self.recommend_default:
            return 1.0 if self.default.times else None
        shown = self.shown_speedup
        return shown.value if shown else None

    def figures(self, evaluation: Evaluation) -> dict[str, Any]:
        """Statistic, bandwidth, spread, estimate and interval over one configuration's
        runs, in the metric's unit: seconds (``time_s``, ``estimate_s``, ``interval_s``,
        ...) or, for a bandwidth metric, MiB/s (``bandwidth_mib_s``, ``estimate_mib_s``,
        ``interval_mib_s``, ...). The estimate and interval are :attr:`estimates`'."""
        if evaluation.statistic is None:
            return {"status": "failed", "errors": evaluation.failures}
        metric = self.metric
        found = self.estimates.get(evaluation.key)
        if metric.higher_is_better:
            out: dict[str, Any] = {
                "bandwidth_mib_s": round(metric.shown(evaluation.statistic), 6),
                "statistic": self.statistic,
                "repetitions": len(evaluation.times),
                "bandwidth_min_mib_s": round(metric.shown(max(evaluation.times)), 6),
                "bandwidth_max_mib_s": round(metric.shown(min(evaluation.times)), 6),
                "failed_repetitions": len(evaluation.failures),
            }
            if found is not None:
                out.update(_estimate_figures(metric, found, "mib_s"))
            return out
        if self.bytes_written is not None:
            bandwidth: float | None = self.bytes_written / 2**20 / evaluation.statistic
        else:  # as measured (the preload library's bytes), when the runs say
            measured = [b for b in evaluation.bandwidths if b > 0]
            bandwidth = statistics.median(measured) if measured else None
        out = {
            "time_s": round(evaluation.statistic, 6),
            "bandwidth_mib_s": round(bandwidth, 3) if bandwidth is not None else None,
            "statistic": self.statistic,
            "repetitions": len(evaluation.times),
            "time_min_s": round(min(evaluation.times), 6),
            "time_max_s": round(max(evaluation.times), 6),
            "failed_repetitions": len(evaluation.failures),
        }
        if found is not None:
            out.update(_estimate_figures(metric, found, "s"))
        return out

    def _described(self, evaluation: Evaluation) -> dict[str, Any]:
        out = {"settings": _settings_document(evaluation.settings), **self.figures(evaluation)}
        if len(members(evaluation)) > 1:  # configurations that ran identically, as one
            out["ran_identically"] = [_settings_document(e.settings)
                                      for e in members(evaluation)]
        return out

    def to_tuned(self) -> dict[str, Any]:
        """The tuned-configuration document users check into their job scripts.

        ``settings`` are those recommended: empty when no configuration beat the default
        with confidence (``recommendation: default``, with the reason and the best found,
        or ``undecided`` when more runs could decide, with ``undecided.runs_to_decide``
        and ``undecided.budget_to_decide``).
        """
        choice = self.choice
        chosen = choice.recommended
        gain = self.shown_speedup
        test = choice.speedup
        verified = self.verified
        doc: dict[str, Any] = {
            "schema_version": TUNED_SCHEMA_VERSION,
            "iotune_version": __version__,
            "created_at": now_iso(),
            "kernel": self.kernel,
            "kernel_args": self.params,
            "target": self.target,
            "target_time": self.metric.label,
            "metric": self.metric.document(),
            "cores": self.cores,
            "nodes": self.nodes,
            "system": self.system,
            "backend": self.backend,
            "provenance": backend_class(self.backend).provenance,
            "recommendation": self.recommendation,
            "reason": self.reason,
            "settings": _settings_document(verified.settings),
            "mpiio_hints": mpiio_hints(verified.settings),
            "measured": self.figures(chosen) if chosen.times or chosen.failures else None,
            # a time only: a bandwidth's prediction is in the table, in MiB/s
            "predicted_time_s": (round(chosen.predicted, 6) if possible(chosen.predicted)
                                 and chosen.predicted is not None
                                 and not self.metric.higher_is_better else None),
            "default": self.figures(self.default),
            "speedup": round(self.speedup, 3) if self.speedup else None,
            "confidence": CONFIDENCE,
            "best_found": self._described(choice.best) if choice.best is not None else None,
            "best_found_speedup": None if gain is None else {
                "estimate": round(gain.value, 3),
                "interval": _rounded_interval(gain),
                "states": "the ratio of the default's typical time to the best found's",
                "decided_by": None if test is None else {
                    "test": "rank (Hodges-Lehmann estimate, Moses interval)",
                    "estimate": round(test.value, 3), "interval": _rounded_interval(test)}},
            "runner_up": (self._described(choice.runner_up) if choice.runner_up is not None
                          else None),
            "tied_with_runner_up": choice.tied_with_runner_up,
            "noise": {"log_sigma": (None if choice.noise.sigma is None
                                    else round(choice.noise.sigma, 4)),
                      "degrees_of_freedom": choice.noise.df,
                      "assumed_before_search": (None if self.budget.noise is None
                                                else round(self.budget.noise, 4)),
                      "assumed_from": self.budget.noise_source},
            "search": {"strategy": self.strategy, "configurations": self.configurations,
                       "runs": self.runs, "reused_measurements": self.reused,
                       "reused_from_tunes": self.reused_from, "source": self.source,
                       "budget": self.budget.total, "budget_spent": self.budget.spent,
                       "race_runs": choice.race_runs,
                       "elapsed_s": round(self.elapsed_s, 1)},
        }
        if self.recommendation == UNDECIDED:
            doc["undecided"] = {"runs_to_decide": choice.runs_to_decide,
                                "budget_to_decide": self.budget_to_decide}
        if verified.not_in_effect:
            doc["not_in_effect"] = verified.not_in_effect
        if verified.unverified:
            doc["unverified"] = verified.unverified
        if self.ignored:
            doc["search"]["not_varied"] = dict(self.ignored)
        if self.allocation is not None:
            doc["search"]["allocation"] = self.allocation
        if self.model is not None:
            doc["model"] = model_summary(self.model)
        if self.knowledge is not None:
            doc["knowledge"] = self.knowledge.to_dict()
        return doc


@dataclass
class Verified:
    """What may be recommended of a configuration: ``settings`` that took effect (a value
    the library replaced is recommended as it was in effect), ``not_in_effect`` (name ->
    requested, in effect, why) and ``unverified`` (name -> value: measured runs that could
    not read the setting back, e.g. a program run without the preload library; they are
    not recommended, since nothing shows they were in effect). A value in effect is
    substituted only when every run read back that same value: one unverified run (no open
    moved data, witnesses that disagree) leaves the setting unverified."""

    settings: dict[str, Any]
    not_in_effect: dict[str, dict[str, Any]] = field(default_factory=dict)
    unverified: dict[str, Any] = field(default_factory=dict)


def _rounded_interval(gain: Speedup) -> list[float] | None:
    return (None if gain.low is None or gain.high is None
            else [round(gain.low, 3), round(gain.high, 3)])


def _estimate_figures(metric: Metric, found: Estimate, suffix: str) -> dict[str, Any]:
    """``found`` and its interval in ``metric``'s unit, as ``estimate_<suffix>`` and
    ``interval_<suffix>`` (None: unbounded)."""
    interval = found.shown_interval(metric)
    return {f"estimate_{suffix}": round(metric.shown(found.time_s), 6),
            f"interval_{suffix}": None if interval is None else [round(v, 6) for v in interval]}


def verify(evaluation: Evaluation, ignored: Mapping[str, str], measured: bool) -> Verified:
    """The settings of ``evaluation`` that its own runs (and the search's ``ignored``
    settings) show took effect. Without ``measured`` runs (simulated, replayed) nothing
    can be read back and the settings are kept as they are."""
    if not measured:
        return Verified(dict(evaluation.settings))
    runs = [m.record.get("result") for m in evaluation.measurements if m.status == "ok"]
    out = Verified({})
    for name, value in evaluation.settings.items():
        effects = [effects_of({name: value}, result)[name] for result in runs]
        statuses = {e.status for e in effects}
        shown = {e.in_effect for e in effects if e.status == DIFFERS}
        if name in ignored or statuses & IGNORED:
            why = ignored.get(name) or next(likely_reason(e, r) for e, r in zip(
                effects, runs, strict=True) if e.status in IGNORED)
            out.not_in_effect[name] = {"requested": describe_value(name, value),
                                       "in_effect": None, "why": why}
        elif statuses == {DIFFERS} and len(shown) == 1:
            used = _parsed(name, shown.pop())
            if used is None:
                out.not_in_effect[name] = {"requested": describe_value(name, value),
                                           "in_effect": effects[0].in_effect,
                                           "why": likely_reason(effects[0], runs[0])}
            else:
                out.settings[name] = used
                out.not_in_effect[name] = {"requested": describe_value(name, value),
                                           "in_effect": effects[0].in_effect,
                                           "why": "recommended as it was in effect"}
        elif DIFFERS in statuses and UNVERIFIED not in statuses:
            out.not_in_effect[name] = {"requested": describe_value(name, value),
                                       "in_effect": sorted(str(s) for s in shown),
                                       "why": "the library used other values"}
        elif not runs or UNVERIFIED in statuses:
            out.unverified[name] = describe_value(name, value)
        else:
            out.settings[name] = value
    return out


def _parsed(name: str, text: str | None) -> Any:
    """The canonical value of setting ``name`` written as ``text``; None if it is none."""
    if text is None:
        return None
    try:
        return parse_setting(name, text)
    except SettingValueError:
        return None


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


def _settings_document(settings: Mapping[str, Any]) -> dict[str, Any]:
    return {k: describe_value(k, v) if SETTINGS.get(k) and SETTINGS[k].kind == "bytes" else v
            for k, v in settings.items()}
