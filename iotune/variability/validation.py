"""How well a state classifier predicts: shuffled k-fold and time-ordered validation.

Two ways of scoring a classifier on labelled samples (:class:`~iotune.variability.classify.
LabelledSamples`), reported side by side (:data:`VALIDATIONS`):

``kfold``
    stratified, shuffled, seeded k-fold cross-validation (scikit-learn's
    ``StratifiedKFold`` and ``cross_validate``): mean and standard deviation over the folds
    of the accuracy and the ROC AUC. Shuffled folds put neighbouring samples, whose
    windows overlap and whose states persist, on both sides of the split, which flatters
    every classifier alike.
``time``
    Wan et al.'s check: train on the earlier part of the record and test on the later
    part, as a model used in production would be. The split is at the time before which
    ``train_fraction`` of the samples lie (:data:`TRAIN_FRACTION`, the paper's 8 of 10
    days); samples at the split time all go to the test part, so one probe round is never
    cut in two. One accuracy and one ROC AUC (None when the test part holds one state
    only), beside the accuracy of always guessing the training part's more frequent state.

Both need at least :data:`MIN_CLASSIFY_SAMPLES` samples; k-fold needs ``folds`` samples of
each state, the time-ordered split both states in its training part.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from iotune.errors import ConfigError, DataError
from iotune.variability.classify import (
    CLASSIFIER_NAMES,
    CLASSIFIERS,
    LabelledSamples,
    make_classifier,
)

VALIDATIONS = ("kfold", "time", "both")
#: Share of the samples, earliest first, the time-ordered validation trains on.
TRAIN_FRACTION = 0.8
#: Fewest labelled samples a classifier is scored on.
MIN_CLASSIFY_SAMPLES = 40


@dataclass(frozen=True)
class ClassifierScore:
    """Scores of one classifier on one group of samples; the fields of a validation that
    was not run are None.

    ``accuracy``/``roc_auc`` (and ``_std``) are k-fold means (standard deviations) over the
    folds; ``time_accuracy``/``time_roc_auc`` are of the time-ordered split, whose test part
    has ``time_test_samples`` samples and a majority baseline ``time_majority_accuracy``
    (always guessing the state most frequent in the training part).
    """

    name: str
    accuracy: float | None = None
    accuracy_std: float | None = None
    roc_auc: float | None = None
    roc_auc_std: float | None = None
    time_accuracy: float | None = None
    time_roc_auc: float | None = None
    time_majority_accuracy: float | None = None
    time_test_samples: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"classifier": self.name, "description": CLASSIFIER_NAMES[self.name],
                "accuracy": self.accuracy, "accuracy_std": self.accuracy_std,
                "roc_auc": self.roc_auc, "roc_auc_std": self.roc_auc_std,
                "time_accuracy": self.time_accuracy, "time_roc_auc": self.time_roc_auc,
                "time_majority_accuracy": self.time_majority_accuracy,
                "time_test_samples": self.time_test_samples}


def check_validation(validation: str, folds: int, train_fraction: float) -> None:
    """ConfigError naming the option when a validation setting is out of range."""
    if validation not in VALIDATIONS:
        raise ConfigError(f"--validation: {validation!r} is not one of {', '.join(VALIDATIONS)}")
    if isinstance(folds, bool) or not isinstance(folds, int) or folds < 2:
        raise ConfigError(f"--folds: {folds!r} is not an integer >= 2")
    if not (isinstance(train_fraction, int | float) and 0 < train_fraction < 1):
        raise ConfigError(f"--train-fraction: {train_fraction!r} is not a number between 0 "
                          "and 1 (exclusive)")


def time_split(times: Sequence[float] | npt.NDArray[np.float64],
               train_fraction: float = TRAIN_FRACTION) -> tuple[npt.NDArray[np.int_],
                                                                 npt.NDArray[np.int_]]:
    """Indices of the training (earlier) and test (later) samples of a time-ordered split.

    The split time is that of the sample at position ``floor(train_fraction n)`` in time
    order; samples before it train, the others test (so equal times stay together).
    """
    t = np.asarray(times, dtype=np.float64)
    order = np.argsort(t, kind="stable")
    cut = t[order[min(math.floor(train_fraction * t.size), t.size - 1)]]
    return np.flatnonzero(t < cut), np.flatnonzero(t >= cut)


def check_samples(samples: LabelledSamples, validation: str, folds: int,
                  train_fraction: float, min_samples: int = MIN_CLASSIFY_SAMPLES) -> None:
    """DataError when ``samples`` cannot be scored by ``validation`` (see the module
    docstring for the rules)."""
    n = int(samples.labels.size)
    if n < min_samples:
        raise DataError(f"classify: {n} labelled samples are too few; scoring a classifier "
                        f"needs at least {min_samples}")
    busy = int(samples.labels.sum())
    fewest = min(busy, n - busy)
    if validation in ("kfold", "both") and fewest < folds:
        state = "busy" if busy < n - busy else "idle"
        raise DataError(f"classify: {fewest} {state} samples of {n} are too few for {folds}-fold "
                        f"cross-validation; each fold needs both states (at least {folds})")
    if validation in ("time", "both"):
        train, _ = time_split(samples.times, train_fraction)
        if train.size == 0 or len(set(samples.labels[train].tolist())) < 2:
            raise DataError(f"classify: the earliest {train_fraction:.0%} of the {n} samples "
                            "do not hold both states; the time-ordered validation cannot "
                            "train on them (try --validation kfold)")


def score_classifier(samples: LabelledSamples, name: str, *, validation: str = "both",
                     folds: int = 5, train_fraction: float = TRAIN_FRACTION,
                     seed: int = 0) -> ClassifierScore:
    """Scores of classifier ``name`` on ``samples`` by ``validation``; call
    :func:`check_samples` first (this assumes the samples pass it)."""
    fields: dict[str, Any] = {}
    x = samples.features.to_numpy(dtype=float)
    y = samples.labels
    if validation in ("kfold", "both"):
        from sklearn.model_selection import StratifiedKFold, cross_validate

        splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
        result = cross_validate(make_classifier(name, seed), x, y, cv=splitter,
                                scoring=("accuracy", "roc_auc"), n_jobs=1)
        accuracy, auc = result["test_accuracy"], result["test_roc_auc"]
        fields.update(accuracy=float(accuracy.mean()), accuracy_std=float(accuracy.std()),
                      roc_auc=float(auc.mean()), roc_auc_std=float(auc.std()))
    if validation in ("time", "both"):
        fields.update(_time_ordered(x, y, samples.times, name, train_fraction, seed))
    return ClassifierScore(name, **fields)


def _time_ordered(x: npt.NDArray[np.float64], y: npt.NDArray[np.int_],
                  times: npt.NDArray[np.float64], name: str, train_fraction: float,
                  seed: int) -> dict[str, Any]:
    from sklearn.metrics import accuracy_score, roc_auc_score

    train, test = time_split(times, train_fraction)
    model = make_classifier(name, seed).fit(x[train], y[train])
    predicted = model.predict(x[test])
    auc = None
    if len(set(y[test].tolist())) == 2:
        score = (model.decision_function(x[test]) if hasattr(model, "decision_function")
                 else model.predict_proba(x[test])[:, 1])
        auc = float(roc_auc_score(y[test], score))
    majority = int(y[train].mean() > 0.5)
    return {"time_accuracy": float(accuracy_score(y[test], predicted)), "time_roc_auc": auc,
            "time_majority_accuracy": float(np.mean(y[test] == majority)),
            "time_test_samples": int(test.size)}


def cross_validate_classifiers(samples: LabelledSamples, *,
                               classifiers: Sequence[str] = CLASSIFIERS, folds: int = 5,
                               validation: str = "kfold",
                               train_fraction: float = TRAIN_FRACTION, seed: int = 0,
                               min_samples: int = MIN_CLASSIFY_SAMPLES,
                               on_step: Callable[[ClassifierScore], None] | None = None,
                               ) -> list[ClassifierScore]:
    """:func:`score_classifier` of each of ``classifiers`` on ``samples`` (after
    :func:`check_validation` and :func:`check_samples`); ``on_step`` is called with each
    score as it is done."""
    check_validation(validation, folds, train_fraction)
    check_samples(samples, validation, folds, train_fraction, min_samples)
    scores = []
    for name in classifiers:
        score = score_classifier(samples, name, validation=validation, folds=folds,
                                 train_fraction=train_fraction, seed=seed)
        scores.append(score)
        if on_step is not None:
            on_step(score)
    return scores
