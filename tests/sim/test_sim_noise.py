"""Noise: seeded, off at level 0, and a two-state mixture with the preset's busy share."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.errors import ConfigError
from iotune.kernel_specs.vpic import vpic_pattern
from iotune.sim import load_system, simulate_times

PATTERN = vpic_pattern(512)
CONFIGS = {"stripe_count": np.full(20000, 64)}


def test_same_seed_same_times() -> None:
    a = simulate_times("hopper", PATTERN, CONFIGS, noise=1.0, rng=np.random.default_rng(7))
    b = simulate_times("hopper", PATTERN, CONFIGS, noise=1.0, rng=np.random.default_rng(7))
    c = simulate_times("hopper", PATTERN, CONFIGS, noise=1.0, rng=np.random.default_rng(8))
    assert np.array_equal(a.time_s, b.time_s) and np.array_equal(a.state, b.state)
    assert not np.array_equal(a.time_s, c.time_s)


def test_noise_zero_is_deterministic_and_stateless() -> None:
    r = simulate_times("hopper", PATTERN, CONFIGS, noise=0.0, rng=np.random.default_rng(1))
    assert np.array_equal(r.time_s, r.model_time_s)
    assert set(r.state) == {"none"}
    assert len(set(np.round(r.time_s, 9))) == 1


def test_busy_share_is_close_to_p_busy() -> None:
    p_busy = load_system("hopper").noise.p_busy
    r = simulate_times("hopper", PATTERN, CONFIGS, noise=1.0, rng=np.random.default_rng(3))
    busy = r.state == "busy"
    assert set(r.state) == {"idle", "busy"}
    assert abs(busy.mean() - p_busy) < 0.015  # 20000 draws: ~4.7 standard errors


def test_busy_measurements_are_slower_with_the_presets_mean() -> None:
    noise = load_system("hopper").noise
    r = simulate_times("hopper", PATTERN, CONFIGS, noise=1.0, rng=np.random.default_rng(4))
    factor = r.time_s / r.model_time_s
    busy = r.state == "busy"
    assert abs(factor[~busy].mean() - 1.0) < 0.01
    assert abs(factor[busy].mean() - noise.busy_mean) < 0.03
    assert np.log(factor[busy]).std() > np.log(factor[~busy]).std()


def test_noise_level_scales_the_dispersion() -> None:
    small = simulate_times("hopper", PATTERN, CONFIGS, noise=0.2, rng=np.random.default_rng(5))
    large = simulate_times("hopper", PATTERN, CONFIGS, noise=1.0, rng=np.random.default_rng(5))
    spread = [np.log(r.time_s / r.model_time_s).std() for r in (small, large)]
    assert spread[0] < spread[1]


@pytest.mark.parametrize("level", [-0.1, float("nan"), float("inf"), True])
def test_bad_noise_level(level: float) -> None:
    with pytest.raises(ConfigError, match=r"^noise: "):
        simulate_times("hopper", PATTERN, None, noise=level)
