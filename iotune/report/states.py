"""The storage-state figures of Wan et al. from a store's probe rounds: what they plot.

* :func:`fold_scores`: each classifier's accuracy on each fold of the stratified k-fold
  cross-validation that ``iotune classify`` runs (same plan, folds, seed and estimators,
  so the mean over a target's folds is the accuracy ``classify`` reports for it), and its
  out-of-fold decision scores, from which the ROC curves are drawn;
* :func:`busiest_targets`: the targets the report scores classifiers on.

The placement replay of the paper's Figure 12 is :mod:`iotune.variability.replay`, shared
with ``iotune placement``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from iotune.variability.classification import ClassificationPlan
from iotune.variability.classify import make_classifier

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
