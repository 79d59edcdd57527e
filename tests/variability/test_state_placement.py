"""Placement: alpha of Wan et al.'s equation 3 and the speedup over even placement."""

from __future__ import annotations

import pytest

from iotune.errors import ConfigError
from iotune.variability import idle_share, placement


def test_hand_computed_titan_like_case() -> None:
    # 120 idle and 36 busy targets, 1.9 s and 2.7 s per unit of data:
    # alpha = 120*2.7 / (120*2.7 + 36*1.9) = 324 / 392.4
    # speedup = (324 + 68.4) * 2.7 / (156 * 1.9 * 2.7) = 392.4 / 296.4
    advice = placement(120, 36, 1.9, 2.7)
    assert advice.alpha == pytest.approx(324 / 392.4, rel=1e-12)
    assert advice.speedup == pytest.approx(392.4 / 296.4, rel=1e-12)
    assert advice.idle_share == pytest.approx(324 / 392.4 / 120)
    assert advice.busy_share == pytest.approx((1 - 324 / 392.4) / 36)
    assert advice.even_time == pytest.approx(2.7 / 156)


def test_both_groups_finish_together() -> None:
    advice = placement(7, 3, 0.004, 0.0063)
    idle_time = advice.t_idle * advice.alpha / advice.n_idle
    busy_time = advice.t_busy * (1 - advice.alpha) / advice.n_busy
    assert idle_time == pytest.approx(busy_time) == pytest.approx(advice.placed_time)


def test_half_idle_half_busy_speedup_is_the_mean_of_one_and_the_ratio() -> None:
    assert placement(10, 10, 1.0, 1.45).speedup == pytest.approx((1.45 + 1) / 2)
    assert idle_share(1, 1, 1.0, 3.0) == pytest.approx(0.75)


@pytest.mark.parametrize(("n_idle", "n_busy", "alpha"), [(5, 0, 1.0), (0, 5, 0.0)])
def test_one_state_only_gives_even_placement(n_idle: int, n_busy: int, alpha: float) -> None:
    advice = placement(n_idle, n_busy, 1.0, 2.0)
    assert advice.alpha == alpha and advice.speedup == pytest.approx(1.0)


def test_equal_times_split_by_count_without_gain() -> None:
    advice = placement(3, 1, 2.0, 2.0)
    assert advice.alpha == pytest.approx(0.75) and advice.speedup == pytest.approx(1.0)


@pytest.mark.parametrize(("args", "message"), [
    ((0, 0, 1.0, 2.0), r"^--idle/--busy: 0 targets"),
    ((-1, 2, 1.0, 2.0), r"^--idle: -1 is not a target count"),
    ((1, 2, 0.0, 2.0), r"^--t-idle: 0.0 is not a positive time"),
    ((1, 2, 1.0, float("nan")), r"^--t-busy: nan is not a positive time"),
])
def test_bad_input(args: tuple, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        placement(*args)
