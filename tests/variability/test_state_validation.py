"""Time-ordered validation and per-target classification on simulated probes with a truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from iotune.errors import ConfigError, DataError
from iotune.sim import load_system
from iotune.variability.classification import ClassifyOptions, plan_classification
from iotune.variability.classify import LabelledSamples
from iotune.variability.samples import probe_samples
from iotune.variability.simulate import simulate_probe_trace
from iotune.variability.validation import (
    check_samples,
    check_validation,
    score_classifier,
    time_split,
)

HOPPER = load_system("hopper")


def test_time_split_keeps_equal_times_together() -> None:
    train, test = time_split([5.0, 1.0, 2.0, 2.0, 3.0, 4.0, 2.0, 6.0, 7.0, 8.0], 0.3)
    assert sorted(train.tolist()) == [1]  # the 4th earliest is at t=2: all of t=2 test
    assert sorted(test.tolist()) == [0, 2, 3, 4, 5, 6, 7, 8, 9]
    train, test = time_split(np.arange(10.0), 0.8)
    assert train.tolist() == list(range(8)) and test.tolist() == [8, 9]


def test_validation_settings_and_samples_are_checked() -> None:
    with pytest.raises(ConfigError, match=r"^--validation: 'loo' is not one of kfold, time"):
        check_validation("loo", 5, 0.8)
    with pytest.raises(ConfigError, match=r"^--train-fraction: 0 is not a number between 0"):
        check_validation("time", 5, 0)
    early_idle = LabelledSamples(pd.DataFrame({"latency": np.arange(50.0)}),
                                 np.r_[np.zeros(45, int), np.ones(5, int)], np.arange(50.0))
    check_samples(early_idle, "kfold", 5, 0.8)
    with pytest.raises(DataError, match=r"the earliest 80% of the 50 samples do not hold both"):
        check_samples(early_idle, "time", 5, 0.8)


def test_time_ordered_scores_on_a_long_record_are_close_to_kfold() -> None:
    """A day of rounds of one target: trained on the first 80%, the classifier still ranks
    the later states well, a little worse than shuffled folds say."""
    trace = simulate_probe_trace(HOPPER, 1500, np.random.default_rng(21), targets=1)
    plan = plan_classification(probe_samples(trace), ClassifyOptions(classifiers=["rf"]))
    (group,) = plan.groups
    score = score_classifier(group.labelled, "rf", validation="both", folds=5)
    assert score.time_test_samples == 300
    assert score.time_roc_auc is not None and score.time_roc_auc > 0.65
    assert score.time_accuracy is not None and score.time_majority_accuracy is not None
    assert score.time_accuracy > score.time_majority_accuracy
    assert score.roc_auc is not None and score.roc_auc > score.time_roc_auc - 0.1


def test_each_target_gets_its_own_mixture() -> None:
    """A target whose latencies are all 1.4x slower: pooled, its idle rounds look busy; per
    target, its own mixture labels it as well as the others."""
    trace = simulate_probe_trace(HOPPER, 300, np.random.default_rng(22), targets=3)
    for record in trace:
        record["targets"][2]["latency_s"] *= 1.4
    samples = probe_samples(trace)
    options = ClassifyOptions(classifiers=["rf"], validation="kfold")

    def agreement(group, target: str) -> float:
        rows = group.frame["target"] == target
        states = np.array(group.states)[rows.to_numpy()]
        return float(np.mean(states == group.frame.loc[rows, "true_state"].to_numpy()))

    each = plan_classification(samples, options)
    assert each.per_target and [g.name for g in each.groups] == ["OST0000", "OST0001",
                                                                 "OST0002"]
    assert all(agreement(g, g.name) > 0.85 for g in each.groups)
    (pooled,) = plan_classification(samples, ClassifyOptions(
        classifiers=["rf"], validation="kfold", per_target=False)).groups
    assert agreement(pooled, "OST0002") < 0.6
