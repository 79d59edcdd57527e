"""What ``iotune classify`` computes: state classifiers per target, scored two ways.

Wan et al. train one classifier per storage server (OSS), on that server's own latencies
and labels, and show the spread of accuracy over the servers. So, when the probe samples
name more than one target, each target is a *group* of its own
(:func:`plan_classification`): its latencies get their own mixture (a target that is
slower than the others is not called busy for that alone), its own labels, features and
classifiers. ``per_target=False`` pools every target into one group ``all``, as does
``source="runs"`` (measurements have no target). Groups with too few samples, or with a
single state, are skipped with the reason; only when every group is skipped is that an
error.

**What is predicted** (``predict``): ``next``, the state of the same target's probe
``horizon`` rounds later; ``large``, Wan et al.'s ground truth, the state of the large write
that followed the probe in the same round (``iotune probe --large``), by a mixture of each
large size's times on its own, from the features of the small probe before it; ``auto``
(the default) is ``large`` when the probe rounds have large writes, else ``next``.

Each classifier of each group is scored by :mod:`iotune.variability.validation`
(k-fold, time-ordered or both); the result (:class:`Classification`) has one row per group
and classifier and, per classifier, the mean, lowest and highest accuracy over the groups.
Planning and scoring are separate steps so a caller can show progress: a plan knows its
:attr:`ClassificationPlan.steps`, and :func:`run_classification` reports each one done.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError, DataError
from iotune.settings.units import format_bytes
from iotune.variability.classify import (
    CLASSIFIER_NAMES,
    CLASSIFIERS,
    LabelledSamples,
    add_window_features,
    label_latencies,
    labelled_samples,
    majority_accuracy,
)
from iotune.variability.samples import Samples
from iotune.variability.state import fit_state_model
from iotune.variability.validation import (
    TRAIN_FRACTION,
    ClassifierScore,
    check_samples,
    check_validation,
    score_classifier,
)

#: Name of the one group when targets are pooled (or unknown).
POOLED = "all"
#: What a probe sample's label can be (module doc).
PREDICTS = ("auto", "next", "large")


@dataclass(frozen=True)
class ClassifyOptions:
    """How samples are labelled, featured and scored (see :func:`plan_classification`)."""

    classifiers: Sequence[str] = CLASSIFIERS
    folds: int = 5
    horizon: int = 1
    window_s: float = 600.0
    method: str = "map"
    use_queue: bool = True
    seed: int = 0
    validation: str = "both"
    train_fraction: float = TRAIN_FRACTION
    per_target: bool | None = None
    predict: str = "auto"


@dataclass(frozen=True)
class Group:
    """One target (or all, pooled): its rows of the samples' frame, the mixture state of
    each row (``states``, in frame order) and the labelled samples built from them."""

    name: str
    frame: Any
    states: list[str | None]
    labelled: LabelledSamples


@dataclass(frozen=True)
class ClassificationPlan:
    """Groups ready to score; ``skipped`` maps a group that cannot be scored to why."""

    samples: Samples
    options: ClassifyOptions
    groups: list[Group]
    skipped: dict[str, str]

    @property
    def per_target(self) -> bool:
        return not (len(self.groups) == 1 and self.groups[0].name == POOLED)

    @property
    def steps(self) -> int:
        """Classifier fits to score: one per classifier per group."""
        return len(self.groups) * len(self.options.classifiers)


def plan_classification(samples: Samples, options: ClassifyOptions) -> ClassificationPlan:
    """Label ``samples`` (per target, or pooled) and build each group's features.

    Probe samples are labelled with the state of the same target's probe ``horizon``
    rounds later; run samples with their own state (``horizon`` is 0 for them whatever is
    given) and only those that carry a probe latency count. ``options.per_target`` None
    means per target when the samples name more than one. Raises ConfigError for bad
    validation settings and DataError when no measurement carries a latency or no group
    can be scored (naming the first group's reason).
    """
    check_validation(options.validation, options.folds, options.train_fraction)
    if options.predict not in PREDICTS:
        raise ConfigError(f"--predict: {options.predict!r} is not one of {', '.join(PREDICTS)}")
    frame = samples.frame
    horizon = options.horizon
    has_large = "large_s" in frame.columns and bool(frame["large_s"].notna().any())
    predict = options.predict
    if samples.source == "runs":
        predict = "next"
    elif predict == "auto":
        predict = "large" if has_large else "next"
    elif predict == "large" and not has_large:
        raise DataError("--predict large: the probe rounds have no large writes; probe with "
                        "--large (e.g. 64MiB,256MiB,1GiB)")
    if predict == "large":
        horizon = 0
    if samples.source == "runs":
        horizon = 0
        if frame.empty or frame["latency"].isna().all():
            raise DataError("classify --source runs: no measurement carries a probe latency "
                            "(record field probe.latency_s); tune with state awareness first, "
                            "or use --source probe")
        frame = frame[frame["latency"].notna()].reset_index(drop=True)
    options = ClassifyOptions(**{**options.__dict__, "horizon": horizon, "predict": predict})
    targets = sorted({str(t) for t in frame["target"]}) if "target" in frame.columns else []
    per_target = options.per_target if options.per_target is not None else len(targets) > 1
    parts = ([(t, frame[frame["target"].astype(str) == t].reset_index(drop=True))
              for t in targets] if per_target and targets else [(POOLED, frame)])
    groups: list[Group] = []
    skipped: dict[str, str] = {}
    for name, part in parts:
        try:
            states: list[str | None] = (
                _large_states(part, options) if predict == "large"
                else list(_states(part, samples.column, options)))
            groups.append(Group(name, part, states, _labelled(part, states, options)))
        except DataError as exc:
            skipped[name] = str(exc)
    if not groups:
        name, reason = next(iter(skipped.items()))
        raise DataError(reason if name == POOLED else f"target {name}: {reason}")
    return ClassificationPlan(samples, options, groups, skipped)


def _states(frame: Any, column: str, options: ClassifyOptions) -> list[str]:
    """Mixture states of ``frame[column]``, by a mixture of those values alone."""
    values = [] if frame.empty else [float(v) for v in frame[column]]
    return label_latencies(fit_state_model(values), values, options.method, options.seed)


def _large_states(frame: Any, options: ClassifyOptions) -> list[str | None]:
    """Per row, the state of its large write by a mixture of that size's times alone (None
    for rows without one). A size with too few writes for a mixture is left out; DataError
    when every size is."""
    states: list[str | None] = [None] * len(frame)
    reasons = []
    writes = frame[frame["large_s"].notna()]
    for size, rows in writes.groupby("large_size", sort=True):
        values = [float(v) for v in rows["large_s"]]
        try:
            labels = label_latencies(fit_state_model(values), values, options.method,
                                     options.seed)
        except DataError as exc:
            reasons.append(f"large writes of {int(size)} bytes: {exc}")
            continue
        for index, label in zip(rows.index, labels, strict=True):
            states[frame.index.get_loc(index)] = label
    if not any(states):
        raise DataError(reasons[0] if reasons else "no large writes")
    return states


def _labelled(frame: Any, states: Sequence[str | None],
              options: ClassifyOptions) -> LabelledSamples:
    labelled = labelled_samples(add_window_features(frame, options.window_s), states,
                                horizon=options.horizon, use_queue=options.use_queue)
    check_samples(labelled, options.validation, options.folds, options.train_fraction)
    return labelled


@dataclass(frozen=True)
class Classification:
    """Scores of each classifier on each group of a plan."""

    plan: ClassificationPlan
    scores: dict[str, list[ClassifierScore]]

    @property
    def predicts(self) -> str:
        """Which state the classifiers predict, in words."""
        if self.plan.samples.source == "runs":
            return "the measurement's own state"
        if self.plan.options.predict == "large":
            sizes = sorted({int(v) for v in self.plan.samples.frame["large_size"].dropna()})
            return ("the state of the large write after the probe ("
                    + ", ".join(format_bytes(v) for v in sizes) + ")")
        horizon = self.plan.options.horizon
        return f"state {horizon} round(s) ahead" if horizon else "the sample's own state"

    def rows(self) -> list[dict[str, Any]]:
        """One row per group and classifier: the group's samples and baseline, and the
        classifier's scores."""
        out = []
        for group in self.plan.groups:
            labelled = group.labelled
            for score in self.scores[group.name]:
                out.append({"target": group.name, "samples": int(labelled.labels.size),
                            "busy_share": labelled.busy_share,
                            "majority_accuracy": majority_accuracy(labelled),
                            **score.as_dict()})
        return out

    def summary(self) -> list[dict[str, Any]]:
        """Per classifier: mean, lowest and highest accuracy over the groups, mean ROC AUC,
        for each validation that was run (None for the others)."""
        rows = self.rows()
        out = []
        for name in self.plan.options.classifiers:
            mine = [r for r in rows if r["classifier"] == name]
            entry: dict[str, Any] = {"classifier": name, "description": CLASSIFIER_NAMES[name],
                                     "targets": len(mine)}
            for key in ("accuracy", "roc_auc", "time_accuracy", "time_roc_auc",
                        "majority_accuracy", "time_majority_accuracy"):
                values = [r[key] for r in mine if r[key] is not None]
                entry[key] = statistics.fmean(values) if values else None
                if key in ("accuracy", "time_accuracy"):
                    entry[f"{key}_min"] = min(values) if values else None
                    entry[f"{key}_max"] = max(values) if values else None
            out.append(entry)
        return out

    def document(self) -> dict[str, Any]:
        """The ``iotune classify`` result."""
        plan, options = self.plan, self.plan.options
        labels = [g.labelled for g in plan.groups]
        total = sum(int(s.labels.size) for s in labels)
        busy = sum(int(s.labels.sum()) for s in labels)
        return {"source": plan.samples.source, "samples_of": plan.samples.description,
                "per_target": plan.per_target, "targets": [g.name for g in plan.groups],
                "skipped": plan.skipped, "samples": total,
                "busy_share": busy / total if total else None,
                "features": list(labels[0].features.columns),
                "validation": options.validation, "folds": options.folds,
                "train_fraction": options.train_fraction, "horizon": options.horizon,
                "predict": options.predict,
                "window_s": options.window_s, "label": options.method, "seed": options.seed,
                "classifiers": self.summary(), "scores": self.rows()}


def run_classification(plan: ClassificationPlan,
                       on_step: Callable[[str], None] | None = None) -> Classification:
    """Score every classifier on every group of ``plan``; ``on_step`` gets a short line
    after each (e.g. ``OST0001 svm: k-fold 0.812, time-ordered 0.790``)."""
    options = plan.options
    scores: dict[str, list[ClassifierScore]] = {}
    for group in plan.groups:
        scores[group.name] = []
        for name in options.classifiers:
            score = score_classifier(group.labelled, name, validation=options.validation,
                                     folds=options.folds, train_fraction=options.train_fraction,
                                     seed=options.seed)
            scores[group.name].append(score)
            if on_step is not None:
                on_step(f"{group.name} {name}: {_brief(score)}")
    return Classification(plan, scores)


def classify_states(samples: Samples, options: ClassifyOptions | None = None,
                    on_step: Callable[[str], None] | None = None) -> Classification:
    """:func:`plan_classification` then :func:`run_classification`."""
    return run_classification(plan_classification(samples, options or ClassifyOptions()),
                              on_step)


def _brief(score: ClassifierScore) -> str:
    parts = []
    if score.accuracy is not None:
        parts.append(f"k-fold {score.accuracy:.3f}")
    if score.time_accuracy is not None:
        parts.append(f"time-ordered {score.time_accuracy:.3f}")
    return ", ".join(parts)
