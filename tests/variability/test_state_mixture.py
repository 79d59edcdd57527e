"""The two-state log-normal mixture recovers the simulated system's idle and busy states."""

from __future__ import annotations

import math

import numpy as np
import pytest

from iotune.errors import DataError
from iotune.kernel_specs.vpic import vpic_pattern
from iotune.sim import load_system, simulate_times
from iotune.variability import fit_mixture, fit_state_model, simulated_probe_latencies
from iotune.variability.simulate import expected_components

HOPPER = load_system("hopper")


def _probe_truth(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    states = np.where(rng.random(n) < HOPPER.noise.p_busy, "busy", "idle")
    return simulated_probe_latencies(HOPPER.noise, states, rng), states


@pytest.mark.parametrize("seed", [1, 2])
def test_recovers_the_simulated_probe_mixture(seed: int) -> None:
    latencies, _ = _probe_truth(3000, seed)
    fit = fit_mixture(latencies)
    truth = expected_components(HOPPER.noise)
    assert fit.converged and fit.bimodal
    for component in fit.components:
        expected = truth[component.name]
        assert component.weight == pytest.approx(expected["weight"], abs=0.03)
        assert component.median == pytest.approx(expected["median"], rel=0.03)
        assert component.sigma == pytest.approx(expected["sigma"], rel=0.15)


def test_recovers_the_sim_backend_noise_of_write_times() -> None:
    """Write times of one configuration: T0 times the preset's idle/busy factors."""
    noise = HOPPER.noise
    sim = simulate_times(HOPPER, vpic_pattern(512), {"stripe_count": np.full(3000, 64)},
                         noise=1.0, rng=np.random.default_rng(11))
    t0 = float(sim.model_time_s[0])
    fit = fit_mixture(sim.time_s)
    assert fit.idle.weight == pytest.approx(1 - noise.p_busy, abs=0.03)
    assert fit.idle.median == pytest.approx(t0 * math.exp(-noise.idle_sigma**2 / 2), rel=0.02)
    assert fit.busy.median == pytest.approx(
        t0 * noise.busy_mean * math.exp(-noise.busy_sigma**2 / 2), rel=0.04)
    assert fit.idle.sigma == pytest.approx(noise.idle_sigma, rel=0.15)
    assert fit.busy.sigma == pytest.approx(noise.busy_sigma, rel=0.15)
    assert fit.busy.mean / fit.idle.mean == pytest.approx(noise.busy_mean, rel=0.05)


def test_map_labels_match_the_true_states_and_sampled_labels_are_seeded() -> None:
    latencies, states = _probe_truth(2000, 3)
    model = fit_state_model(latencies)
    assert np.mean(np.array(model.labels(latencies)) == states) > 0.85
    assert model.label(float(np.min(latencies[states == "idle"]))) in ("idle", "busy")
    assert model.label(0.0043) == "idle" and model.label(0.012) == "busy"
    first = model.labels(latencies, "sample", np.random.default_rng(5))
    again = model.labels(latencies, "sample", np.random.default_rng(5))
    other = model.labels(latencies, "sample", np.random.default_rng(6))
    assert first == again and first != other
    assert first.count("busy") / len(first) == pytest.approx(model.mixture.busy.weight, abs=0.03)


def test_posterior_rises_with_latency_above_the_idle_median() -> None:
    model = fit_state_model(_probe_truth(1000, 4)[0])
    grid = np.linspace(model.mixture.idle.median, 3 * model.mixture.busy.median, 50)
    posterior = model.posteriors(grid)
    assert np.all(np.diff(posterior) >= -1e-12)
    assert posterior[0] < 0.2 and posterior[-1] > 0.99
    assert model.posterior_busy(float(grid[-1])) == pytest.approx(posterior[-1])


def test_one_state_is_not_called_bimodal_and_labels_everything_idle() -> None:
    rng = np.random.default_rng(8)
    latencies = np.exp(rng.normal(-5.0, 0.1, 800))
    model = fit_state_model(latencies)
    assert not model.bimodal and model.mixture.bic_one < model.mixture.bic + 10
    assert set(model.labels(latencies)) == {"idle"}
    assert model.posterior_busy(float(latencies.max())) == 0.0


def test_identical_latencies_fit_without_error() -> None:
    fit = fit_mixture([0.004] * 30)
    assert not fit.bimodal and fit.idle.median == pytest.approx(0.004)


def test_too_few_or_bad_latencies_are_data_errors() -> None:
    with pytest.raises(DataError, match=r"^state model: 5 samples are too few; .* at least 20"):
        fit_state_model([0.01] * 5)
    with pytest.raises(DataError, match=r"^mixture: 12 samples are too few"):
        fit_mixture([0.01] * 12)
    with pytest.raises(DataError, match=r"^mixture: time -1.0 is not a positive finite number"):
        fit_mixture([0.01] * 30 + [-1.0])


def test_state_model_round_trips_through_a_dict() -> None:
    from iotune.variability import StateModel

    model = fit_state_model(_probe_truth(500, 9)[0], size_bytes=2**20)
    again = StateModel.from_dict(model.to_dict())
    assert again == model
    with pytest.raises(DataError, match="schema_version"):
        StateModel.from_dict({"mixture": {}})


def test_guards_refuse_a_point_mass_and_a_handful_of_outliers() -> None:
    from iotune.variability.mixture import MIN_RELATIVE_SIGMA, MIN_WEIGHT

    rng = np.random.default_rng(12)
    spread_out = np.exp(rng.normal(0.0, 0.2, 200))
    point_mass = fit_mixture(np.r_[np.ones(100), spread_out])
    assert not point_mass.bimodal
    x = np.log(np.r_[np.ones(100), spread_out])
    assert point_mass.idle.sigma >= MIN_RELATIVE_SIGMA * x.std()
    outliers = fit_mixture(np.r_[np.exp(rng.normal(0.0, 0.1, 995)), np.full(5, 20.0)])
    assert not outliers.bimodal or min(outliers.idle.weight, outliers.busy.weight) >= MIN_WEIGHT


def test_busy_is_the_slower_component_and_fits_are_reproducible() -> None:
    rng = np.random.default_rng(13)
    # the wide component is the faster one here: busy is still the one with the larger median
    times = np.exp(np.r_[rng.normal(-0.4, 0.4, 600), rng.normal(0.0, 0.05, 400)])
    fit = fit_mixture(times)
    assert fit.bimodal and fit.idle.median < fit.busy.median
    assert fit.idle.sigma == pytest.approx(0.4, rel=0.15)
    assert fit.busy.sigma == pytest.approx(0.05, rel=0.2)
    assert fit_mixture(times) == fit
