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


def test_the_state_of_large_writes_is_predicted_when_the_probes_have_them() -> None:
    """Simulated large writes meet their target's state; classify labels them by a mixture
    per size and predicts that state from the small probe before them."""
    from iotune.errors import ConfigError
    from iotune.variability.classification import ClassifyOptions, plan_classification
    from iotune.variability.samples import probe_samples

    records = simulate_probe_trace(HOPPER, 600, np.random.default_rng(4), targets=2,
                                   large_sizes=(64 * 2**20, 2**30), large_every=2)
    sizes = [r.get("large_size_bytes") for r in records[:5]]
    assert sizes == [64 * 2**20, None, 2**30, None, 64 * 2**20]
    big = [t["large_s"] for r in records if r.get("large_size_bytes") == 2**30
           for t in r["targets"]]
    small = [t["latency_s"] for r in records for t in r["targets"]]
    assert min(big) > 10 * max(small)
    samples = probe_samples(records)
    options = ClassifyOptions(classifiers=["rf"], folds=4, validation="kfold",
                              per_target=False)
    plan = plan_classification(samples, options)
    assert plan.options.predict == "large" and plan.options.horizon == 0
    (group,) = plan.groups
    assert group.labelled.labels.size == 600  # 2 targets x 300 rounds with large writes
    truth = [t["state"] for r in records if "large_size_bytes" in r for t in r["targets"]]
    labelled = [s for s in group.states if s is not None]
    agreement = np.mean([a == b for a, b in zip(labelled, truth, strict=True)])
    assert agreement > 0.8
    scores = cross_validate_classifiers(group.labelled, classifiers=["rf"], folds=4, seed=0)
    assert scores[0].accuracy > majority_accuracy(group.labelled) + 0.05
    nexts = plan_classification(samples, ClassifyOptions(**{**options.__dict__,
                                                           "predict": "next"}))
    assert nexts.groups[0].labelled.labels.size == 2 * 599
    plain = probe_samples(simulate_probe_trace(HOPPER, 60, np.random.default_rng(4)))
    with pytest.raises(DataError, match=r"^--predict large: the probe rounds have no large"):
        plan_classification(plain, ClassifyOptions(predict="large"))
    with pytest.raises(ConfigError, match=r"^--predict: 'big' is not one of auto, next, large"):
        plan_classification(plain, ClassifyOptions(predict="big"))
