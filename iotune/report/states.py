"""The storage-state figures of Wan et al. from a store's probe rounds: what they plot.

* :func:`fold_scores`: each classifier's accuracy on each fold of the stratified k-fold
  cross-validation that ``iotune classify`` runs (same plan, folds, seed and estimators,
  so the mean over a target's folds is the accuracy ``classify`` reports for it), and its
  out-of-fold decision scores, from which the ROC curves are drawn;
* :func:`placement_replay`: the paper's trace-driven simulation of prediction-guided data
  placement (its Figure 12), replayed over the recorded probe rounds.

The placement replay: for every round with a previous round of the same probe session,
each target's state is *predicted* as its state (MAP label of the pooled mixture) in the
previous round, a persistence forecast that needs no classifier. Equation (1) of
:mod:`iotune.variability.placement` gives the idle share ``alpha`` from the predicted counts
and the mixture's mean times. The round's *recorded* latencies are then the time each
target takes per probe-sized unit of data, and write time is taken as proportional to the
data written (the paper's assumption): ``n`` units written evenly end after the slowest
target's latency; placed, an idle target writes ``alpha n / n_idle`` units and a busy one
``(1 - alpha) n / n_busy``, and the write ends when the slowest target does. Aggregate
throughput is the bytes over that time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from iotune.variability.classification import ClassificationPlan
from iotune.variability.classify import make_classifier
from iotune.variability.mixture import MixtureFit
from iotune.variability.placement import placement
from iotune.variability.samples import Samples
from iotune.variability.state import StateModel

FloatArray = npt.NDArray[np.float64]
#: Targets whose ROC curves are drawn, one panel each (the paper shows three servers).
ROC_TARGETS = 3
#: Targets the report scores classifiers on at most: those with the most probe samples. A
#: facility's probes cover hundreds of OSTs; a report must not fit hundreds of mixtures and
#: classifiers (``iotune classify`` scores every target).
REPORT_TARGETS = 8


@dataclass(frozen=True)
class FoldScores:
    """One classifier on one target (or all, pooled): accuracy per fold, and every
    sample's true label (1 = busy) and out-of-fold decision score."""

    group: str
    classifier: str
    fold_accuracy: list[float]
    labels: npt.NDArray[np.int_]
    scores: FloatArray

    @property
    def roc(self) -> tuple[FloatArray, FloatArray, float]:
        """False and true positive rates (busy is positive) and the area under them."""
        from sklearn.metrics import roc_auc_score, roc_curve

        fpr, tpr, _ = roc_curve(self.labels, self.scores)
        return fpr, tpr, float(roc_auc_score(self.labels, self.scores))


def fold_scores(plan: ClassificationPlan,
                on_step: Callable[[str], None] | None = None) -> list[FoldScores]:
    """Score every classifier of ``plan`` on every group, fold by fold (the plan's
    ``folds`` and ``seed``); ``on_step`` gets a line after each classifier of each group."""
    from sklearn.metrics import accuracy_score
    from sklearn.model_selection import StratifiedKFold

    options = plan.options
    out = []
    for group in plan.groups:
        x = group.labelled.features.to_numpy(dtype=float)
        y = group.labelled.labels
        splitter = StratifiedKFold(n_splits=options.folds, shuffle=True,
                                   random_state=options.seed)
        for name in options.classifiers:
            scores = np.zeros(y.size, dtype=np.float64)
            accuracy = []
            for train, test in splitter.split(x, y):
                model = make_classifier(name, options.seed).fit(x[train], y[train])
                accuracy.append(float(accuracy_score(y[test], model.predict(x[test]))))
                scores[test] = (model.decision_function(x[test])
                                if hasattr(model, "decision_function")
                                else model.predict_proba(x[test])[:, 1])
            out.append(FoldScores(group.name, name, accuracy, y, scores))
            if on_step is not None:
                on_step(f"{group.name} {name}: {options.folds}-fold accuracy "
                        f"{np.mean(accuracy):.3f}")
    return out


@dataclass(frozen=True)
class PlacementRound:
    """One replayed round: predicted state counts, ``alpha`` and both throughputs."""

    time: float
    n_idle: int
    n_busy: int
    alpha: float
    even_bytes_s: float
    placed_bytes_s: float

    @property
    def gain(self) -> float:
        """Placed over even throughput."""
        return self.placed_bytes_s / self.even_bytes_s

    def row(self) -> dict[str, Any]:
        return {"time": self.time, "predicted_idle": self.n_idle,
                "predicted_busy": self.n_busy, "alpha": self.alpha,
                "even_mib_s": self.even_bytes_s / 2**20,
                "placed_mib_s": self.placed_bytes_s / 2**20, "gain": self.gain}


def placement_replay(samples: Samples, model: StateModel, unit_bytes: int,
                     ) -> list[PlacementRound]:
    """The placement replay of the module doc over ``samples`` (probe latencies) with the
    states and mean times of ``model``; ``unit_bytes`` is the probe size."""
    frame = samples.frame
    mixture: MixtureFit = model.mixture
    t_idle, t_busy = mixture.idle.mean, mixture.busy.mean
    frame = frame.assign(state=model.labels([float(v) for v in frame["latency"]]))
    out = []
    for _, session in frame.groupby("probe_id", sort=False):
        previous: dict[str, str] | None = None
        for _, rows in session.groupby("round", sort=True):
            states = dict(zip(rows["target"].astype(str), rows["state"], strict=True))
            if previous is not None:
                latency = dict(zip(rows["target"].astype(str), rows["latency"], strict=True))
                known = [t for t in latency if t in previous]
                if known:
                    out.append(_replay_round(float(rows["time"].iloc[0]), known, previous,
                                             latency, t_idle, t_busy, unit_bytes))
            previous = states
    return out


def _replay_round(time: float, targets: Sequence[str], predicted: dict[str, str],
                  latency: dict[str, float], t_idle: float, t_busy: float,
                  unit_bytes: int) -> PlacementRound:
    idle = [t for t in targets if predicted[t] == "idle"]
    busy = [t for t in targets if predicted[t] != "idle"]
    n = len(targets)
    advice = placement(len(idle), len(busy), t_idle, t_busy)
    even = max(latency[t] for t in targets)
    placed = max([latency[t] * advice.alpha * n / len(idle) for t in idle]
                 + [latency[t] * (1 - advice.alpha) * n / len(busy) for t in busy])
    total = n * unit_bytes
    return PlacementRound(time, len(idle), len(busy), advice.alpha, total / even,
                          total / placed)


def busiest_targets(samples: Any, limit: int = REPORT_TARGETS) -> tuple[Any, int]:
    """``samples`` restricted to the ``limit`` targets with the most samples (ties by name),
    and how many targets there were."""
    from dataclasses import replace

    counts = samples.frame["target"].astype(str).value_counts()
    if len(counts) <= limit:
        return samples, len(counts)
    ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[:limit]
    kept = {name for name, _ in ranked}
    frame = samples.frame[samples.frame["target"].astype(str).isin(kept)]
    return replace(samples, frame=frame), len(counts)
