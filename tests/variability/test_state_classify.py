"""State classifiers on seeded simulated probe sessions: better than guessing, clear errors."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iotune.errors import DataError
from iotune.sim import load_system
from iotune.variability import fit_state_model
from iotune.variability.classify import (
    CLASSIFIERS,
    LabelledSamples,
    add_window_features,
    future_labels,
    labelled_samples,
    majority_accuracy,
    probe_frame,
)
from iotune.variability.simulate import simulate_probe_trace
from iotune.variability.validation import cross_validate_classifiers

HOPPER = load_system("hopper")


def _samples(rounds: int, seed: int, horizon: int = 1) -> LabelledSamples:
    records = simulate_probe_trace(HOPPER, rounds, np.random.default_rng(seed), targets=2)
    frame = add_window_features(probe_frame(records), 600)
    model = fit_state_model(frame["latency"])
    return labelled_samples(frame, model.labels(frame["latency"].to_numpy()), horizon=horizon)


def test_classifiers_beat_guessing_on_simulated_sessions() -> None:
    samples = _samples(250, seed=3)
    assert samples.labels.size == 498  # 2 targets x 250 rounds, minus the last of each
    assert "running_jobs" in samples.features.columns
    scores = cross_validate_classifiers(samples, folds=4, seed=0)
    assert [s.name for s in scores] == list(CLASSIFIERS)
    baseline = majority_accuracy(samples)
    for score in scores:
        assert score.accuracy > baseline + 0.05, score
        assert score.roc_auc > 0.75, score
        assert 0 <= score.accuracy_std < 0.2 and 0 <= score.roc_auc_std < 0.2
    again = cross_validate_classifiers(samples, classifiers=["rf"], folds=4, seed=0)
    assert again[0] == scores[1]


def test_too_few_samples_or_one_state_fail_clearly() -> None:
    samples = _samples(150, seed=2)
    few = LabelledSamples(samples.features.iloc[:30], samples.labels[:30], samples.times[:30])
    with pytest.raises(DataError, match=r"^classify: 30 labelled samples are too few; .* 40"):
        cross_validate_classifiers(few)
    idle_only = LabelledSamples(samples.features.iloc[:60], np.r_[np.zeros(58, int), [1, 1]],
                                samples.times[:60])
    with pytest.raises(DataError, match=r"^classify: 2 busy samples of 60 are too few for "
                                        r"5-fold cross-validation"):
        cross_validate_classifiers(idle_only)


def test_window_features_and_future_labels_by_hand() -> None:
    frame = pd.DataFrame({"time": [0.0, 0.0, 10.0, 10.0, 100.0, 100.0],
                          "probe_id": "p", "target": ["a", "b"] * 3,
                          "latency": [1.0, 5.0, 3.0, 5.0, 8.0, 7.0]})
    out = add_window_features(frame, 20)
    assert out["window_mean"].tolist() == [1.0, 5.0, 2.0, 5.0, 8.0, 7.0]
    assert out["window_std"].tolist() == [0.0, 0.0, 1.0, 0.0, 0.0, 0.0]
    labels = ["idle", "busy", "busy", "idle", "idle", "busy"]
    ahead = future_labels(frame, labels, 1).fillna("-").tolist()
    assert ahead == ["busy", "idle", "idle", "busy", "-", "-"]
    assert future_labels(frame, labels, 0).tolist() == labels
