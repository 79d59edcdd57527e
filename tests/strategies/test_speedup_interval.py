"""The printed speedup and the best found's interval: estimates at their stated level that
allow for the selection of the best found, never a point while runs differ, and never the
decision (the race's rank test decides)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iotune.strategies.base import Evaluation
from iotune.strategies.racing import (
    CONFIDENCE,
    Noise,
    best_found_interval,
    pooled_noise,
    race,
    selection_free_logs,
    shown_estimates,
    shrunken_estimates,
    speedup_interval,
    typical_interval,
)


def _evaluation(key: str, times: list[float], order: int = 0) -> Evaluation:
    return Evaluation({"x": key}, key, times=list(times), order=order)


def test_the_selecting_run_is_left_out_of_the_best_founds_speedup():
    default = _evaluation("d", [10.0, 11.0, 9.0])
    best = _evaluation("b", [2.0, 8.0, 8.0], order=1)  # 2.0: the lucky draw that led
    noise = Noise(0.2, 10)
    gain = speedup_interval(default, best, noise)
    assert gain is not None and gain.low is not None and gain.high is not None
    assert list(selection_free_logs(best)) == pytest.approx([math.log(8.0)] * 2)
    expected = np.exp(np.mean(np.log([10.0, 11.0, 9.0]))) / 8.0
    assert gain.value == pytest.approx(expected)
    half = noise.quantile * 0.2 * math.sqrt(1 / 3 + 1 / 2)
    assert math.log(gain.high / gain.low) == pytest.approx(2 * half)
    assert gain.low < gain.value < gain.high


def test_a_best_found_run_once_keeps_its_one_run_and_unknown_noise_is_unbounded():
    default = _evaluation("d", [10.0, 12.0])
    lone = _evaluation("b", [5.0], order=1)
    gain = speedup_interval(default, lone, Noise(0.3, 1))
    assert gain is not None and gain.value == pytest.approx(math.sqrt(120.0) / 5.0)
    unknown = speedup_interval(default, lone, Noise(None, 0))
    assert unknown is not None and unknown.low is None and unknown.high is None
    assert speedup_interval(_evaluation("d", []), lone, Noise(0.3, 1)) is None


@pytest.mark.parametrize("seed", range(20))
def test_no_interval_is_a_point_while_runs_differ(seed):
    rng = np.random.default_rng(seed)
    default = _evaluation("d", list(np.exp(rng.normal(0.0, 1e-3, 3))))
    best = _evaluation("b", list(np.exp(rng.normal(-0.5, 1e-3, 3))), order=1)
    noise = pooled_noise([default, best])
    gain = speedup_interval(default, best, noise)
    assert gain is not None and gain.low is not None and gain.high is not None
    assert gain.low < gain.value < gain.high
    found = best_found_interval(best, noise, float(np.exp(-0.5)))
    assert found is not None and found.low_s is not None and found.high_s is not None
    assert found.low_s < found.high_s
    assert found.low_s <= found.time_s <= found.high_s


def test_only_the_best_founds_row_is_adjusted_and_centres_are_unchanged():
    rng = np.random.default_rng(3)
    pool = [_evaluation(str(i), list(np.exp(rng.normal(0.0, 0.5, n))), order=i)
            for i, n in enumerate([3, 1, 1, 3, 1, 2])]
    noise = pooled_noise(pool)
    plain, shown = shrunken_estimates(pool, noise), shown_estimates(pool, noise, pool[0])
    assert [p.time_s for p in plain if p] == [s.time_s for s in shown if s]
    first = min(range(len(pool)), key=lambda i: (plain[i].time_s, i))  # type: ignore[union-attr]
    for i, (p, s) in enumerate(zip(plain, shown, strict=True)):
        if i != first or pool[i] is pool[0]:
            assert s == p
    # the default ranked first is never adjusted: its first run is the baseline
    assert shown_estimates(pool, noise, pool[first]) == plain


def _simulated_race(rng: np.random.Generator, sigma: float, flat: bool,
                    budget: int = 8, heavy: bool = False,
                    ) -> tuple[float, float, list[Evaluation], Evaluation, Noise] | None:
    """A search of 9 configurations run once each beside a default run twice, then the
    real race over ``budget`` more runs; returns the truths, every configuration (the
    default first), the best found and the noise when the best found is not the
    default. ``heavy``: log noise is Student's t with 3 degrees of freedom scaled to sd
    ``sigma`` (symmetric, so the truth is still the median)."""
    medians = np.zeros(10) if flat else np.concatenate([[0.0], rng.normal(0.0, 0.4, 9)])

    def draw(i: int) -> float:
        noise = (rng.standard_t(3) * sigma / math.sqrt(3)) if heavy else rng.normal(0.0, sigma)
        return float(np.exp(medians[i] + noise))

    default = _evaluation("0", [draw(0), draw(0)])
    pool = [_evaluation(str(i), [draw(i)], order=i) for i in range(1, 10)]

    def again(e: Evaluation) -> bool:
        e.times.append(draw(int(e.key)))
        return True

    choice = race(default, lambda: pool, again, budget)
    best = choice.best
    if best is None or best is default:
        return None
    return (math.exp(medians[0]), math.exp(medians[int(best.key)]), [default, *pool], best,
            choice.noise)


@pytest.mark.parametrize(("sigma", "heavy"), [(0.1, False), (0.5, False), (1.0, False),
                                            (0.5, True), (1.0, True)])
def test_printed_speedups_and_best_found_rows_cover_at_about_their_level(sigma, heavy):
    # The real race picks the best found from 9 configurations run once (the winner's
    # curse at its strongest on flat landscapes); its printed speedup interval and its row
    # must hold the truth at about CONFIDENCE, heavy-tailed noise included. Seeded: the
    # same draws every run.
    rng = np.random.default_rng(44)
    gains = rows = gains_covered = rows_covered = 0
    for trial in range(100):
        found = _simulated_race(rng, sigma, flat=trial % 2 == 0, heavy=heavy)
        if found is None:
            continue
        true_default, true_best, every, best, noise = found
        gain = speedup_interval(every[0], best, noise, every)
        assert gain is not None and gain.low is not None and gain.high is not None
        gains += 1
        gains_covered += gain.low <= true_default / true_best <= gain.high
        row = shown_estimates(every, noise, every[0])[every.index(best)]
        assert row is not None and row.low_s is not None and row.high_s is not None
        rows += 1
        rows_covered += row.low_s <= true_best <= row.high_s
    assert gains >= 60
    assert CONFIDENCE - 0.08 <= gains_covered / gains <= 0.99
    assert rows_covered / rows >= CONFIDENCE - 0.08



def test_the_speedup_interval_holds_the_ratio_of_the_rows_printed_centres():
    # Flat: every configuration as fast as the default. The best found led by luck and its
    # later runs stayed lucky; the rows' shrunken centres, pulled toward what the others
    # say, are nearly equal, and the printed speedup's interval must hold their ratio.
    default = _evaluation("d", [1.0, 1.1, 0.95])
    best = _evaluation("b", [0.4, 0.7, 0.72], order=1)
    others = [_evaluation(str(i), [t], order=i + 2)
              for i, t in enumerate([0.98, 1.02, 1.0, 0.99, 1.01, 1.03] * 2)]
    pool = [default, best, *others]
    noise = Noise(0.15, 20)
    alone = speedup_interval(default, best, noise)
    gain = speedup_interval(default, best, noise, pool)
    assert alone is not None and gain is not None
    assert alone.low is not None and gain.low is not None and gain.high is not None
    rows = shrunken_estimates(pool, noise)
    assert rows[0] is not None and rows[1] is not None
    shrunk = rows[0].time_s / rows[1].time_s
    assert shrunk < alone.low  # the lucky runs alone claim more than the rows do
    assert gain.low == pytest.approx(shrunk)
    assert gain.value == alone.value and gain.high == alone.high
    # without the pool (or with the pair alone: nothing to shrink toward) it is unchanged
    assert speedup_interval(default, best, noise, [default, best]) == alone


def test_intervals_hold_the_runs_median_when_one_run_is_far_out():
    # Two runs agree and one hit a busy file system: the mean of the logs sits far above
    # the median the interval states, by more than the quiet pooled noise allows.
    noise = Noise(0.05, 30)
    skewed = _evaluation("s", [1.0, 1.05, 20.0])
    row = typical_interval(skewed, noise)
    assert row is not None and row.low_s is not None and row.high_s is not None
    own = math.exp(float(np.mean(np.log([1.0, 1.05, 20.0]))))
    assert row.low_s <= 1.05 < own * math.exp(-noise.quantile * 0.05 / math.sqrt(3))
    assert row.high_s > own
    # symmetric runs: the median lies inside the t interval, nothing widens
    even = _evaluation("e", [1.0, 1.05, 1.1])
    plain = typical_interval(even, noise)
    centre = float(np.mean(np.log([1.0, 1.05, 1.1])))
    half = noise.quantile * 0.05 / math.sqrt(3)
    assert plain is not None and plain.low_s == pytest.approx(math.exp(centre - half))
    assert plain.high_s == pytest.approx(math.exp(centre + half))
    default = _evaluation("d", [2.0, 2.1, 40.0])
    best = _evaluation("b", [0.5, 1.0, 1.0], order=1)  # 0.5: the selecting run
    gain = speedup_interval(default, best, noise)
    assert gain is not None and gain.low is not None and gain.high is not None
    assert gain.low <= 2.1 / 1.0 <= gain.high


def test_with_two_configurations_a_row_holds_its_runs_median_to_the_last_digit():
    # Two configurations, nothing to shrink towards: each row is its own runs' interval.
    # Recorded three times with one run far out, the default's median is one of its runs'
    # times, and the interval must hold that very time (not its exp(log()) neighbour).
    default = _evaluation("d", [294.053, 663.763, 286.632] * 2)
    other = _evaluation("o", [120.0, 131.0, 118.0, 125.0], order=1)
    pool = [default, other]
    rows = shown_estimates(pool, pooled_noise(pool), default)
    assert rows[0] is not None and rows[0].low_s is not None and rows[0].high_s is not None
    assert rows[0].low_s <= 294.053 <= rows[0].high_s
    assert rows[0].low_s == 294.053  # the t interval alone starts above the median
