"""The rank-based comparison the race decides with: exact critical counts, and what one
outlier can and cannot do to it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iotune.strategies.base import Evaluation
from iotune.strategies.racing import Noise, beats, speedup
from iotune.strategies.rank_test import critical_count, log_shift


def test_critical_counts_are_the_mann_whitney_tables():
    assert critical_count(3, 3, 0.05) == 9  # 1 / C(6, 3) = 0.05: only full separation
    assert critical_count(2, 3, 0.05) is None  # 1 / C(5, 2) = 0.1: never at 5%
    assert critical_count(6, 6, 0.05) == 36 - 7  # the table's lower critical U is 7
    assert critical_count(8, 8, 0.05) == 64 - 15
    # the normal approximation takes over smoothly: n = 50 and 51 give the same share
    assert critical_count(50, 50, 0.05) / 2500 == pytest.approx(
        critical_count(51, 51, 0.05) / 2601, abs=0.01)


def test_one_slow_outlier_does_not_veto_a_consistent_5x_gain():
    # the production example: 16-19 s with one 75 s run against 92-109 s with a
    # 234 s run
    default = [92.0, 95.0, 100.0, 105.0, 109.0, 234.0]
    best = [16.0, 17.0, 18.0, 19.0, 75.0]
    shift = log_shift(default, best, 0.05)
    assert shift is not None and shift.low is not None and shift.low > 0
    assert math.exp(shift.estimate) == pytest.approx(5.66, abs=0.2)
    d = Evaluation({}, "d", times=default)
    b = Evaluation({"stripe_count": 128}, "b", times=best)
    noise = Noise(1.0, 9)  # whatever the pooled spread, it is not used for these two
    assert beats(b, d, noise) and not beats(d, b, noise)
    gain = speedup(d, b, noise)
    assert gain is not None and gain.confident and gain.low is not None and gain.low > 2


def test_the_same_runs_are_never_faster_and_too_few_runs_have_no_bound():
    rng = np.random.default_rng(0)
    runs = list(np.exp(rng.normal(0, 0.3, 6)))
    shift = log_shift(runs, runs, 0.05)
    assert shift is not None and shift.low is not None and shift.low <= 0 <= shift.high
    few = log_shift([2.0, 2.1], [1.0, 1.1, 1.2], 0.05)
    assert few is not None and few.low is None and few.high is None
    assert log_shift([], [1.0], 0.05) is None


def test_false_confirmations_stay_at_the_level_on_heavy_tailed_null_runs():
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        a, b = np.exp(rng.standard_t(2, 6) * 0.3), np.exp(rng.standard_t(2, 6) * 0.3)
        shift = log_shift(list(a), list(b), 0.05)
        hits += shift is not None and shift.low is not None and shift.low > 0
    assert hits / 400 <= 0.08  # 5% by construction; room for the draw


def test_runs_to_decide_grows_with_the_interval_still_to_narrow() -> None:
    """An undecided gain whose interval reaches below 1 although each side has as many runs
    as the power estimate asks: the runs to decide follow the interval (its width shrinks
    as 1/sqrt(runs)), not a single more run; and a wider interval asks for more."""
    from iotune.strategies.racing import Speedup, runs_to_confirm, runs_to_decide

    default = Evaluation({}, "d", times=[1.0] * 6)
    best = Evaluation({"stripe_count": 128}, "b", times=[0.86] * 6)
    noise = Noise(0.13, 30)
    assert (runs_to_confirm(1.16, noise) or 0) <= 6
    narrow = runs_to_decide(default, best, Speedup(1.16, 0.98, 1.4), noise)
    wide = runs_to_decide(default, best, Speedup(1.16, 0.92, 1.5), noise)
    assert narrow is not None and wide is not None
    # 6 runs each x (log(1.16/0.92) / log(1.16))^2 = 14.6 -> 15 each, 9 more of each
    assert wide == 18
    assert 1 < narrow < wide
    # confirmed-looking gains with enough runs still need at least one more run
    assert runs_to_decide(default, best, Speedup(1.16, 1.0, 1.3), noise) == 1
    assert runs_to_decide(default, best, Speedup(0.9, 0.7, 1.1), noise) is None


def test_a_gain_that_only_the_defaults_slow_run_makes_is_not_recommended() -> None:
    """A production file whose better configuration is 1.09x faster run for run (medians
    73.9 s and 67.9 s) but whose default has one 98 s run in three: the rank estimate
    (median of pairwise ratios, 1.15x) crosses MIN_GAIN, the typical job's gain does not,
    so the default stays and the reason says why. A consistent 5x with outliers on both
    sides is still recommended."""
    from iotune.strategies.racing import MIN_GAIN, _choose, typical_speedup

    default = Evaluation({}, "d", times=[73.86, 71.43, 98.24] * 2)
    best = Evaluation({"alignment": 1048576}, "b", times=[71.65, 62.12, 67.94] * 2)
    noise = Noise(0.15, 10)
    gain = speedup(default, best, noise)
    assert gain is not None and gain.value >= MIN_GAIN
    typical = typical_speedup(default, best)
    assert typical is not None and typical == pytest.approx(73.86 / 67.94, rel=1e-3)
    choice = _choose(default, [best], 0)
    assert choice.recommend_default and choice.outcome == "default"
    assert "median run is 1.09x" in choice.reason

    slow = Evaluation({}, "d", times=[92.0, 95.0, 100.0, 105.0, 109.0, 234.0])
    fast = Evaluation({"stripe_count": 128}, "b", times=[16.0, 17.0, 18.0, 19.0, 75.0])
    choice = _choose(slow, [fast], 0)
    assert not choice.recommend_default and choice.outcome == "tuned"
