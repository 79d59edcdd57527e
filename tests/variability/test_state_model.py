"""Simulated probes have a known truth; the tracker tags, repeats and ranks as documented."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.errors import ConfigError, DataError
from iotune.sim import load_system
from iotune.store import Store
from iotune.variability import (
    StatePolicy,
    StateTracker,
    Tag,
    model_from_store,
    probe_base_latency,
    ranking_times,
    should_repeat,
    simulated_probe_latencies,
    simulated_probe_latency,
)
from iotune.variability.simulate import markov_states, simulate_probe_trace

HOPPER = load_system("hopper")


def test_simulated_probe_follows_the_state() -> None:
    rng = np.random.default_rng(0)
    base = probe_base_latency(HOPPER)
    assert base == pytest.approx(0.0007 + 1 / HOPPER.ost_bandwidth_mib_s)
    assert simulated_probe_latency(HOPPER.noise, "none", rng) == pytest.approx(base)
    idle = simulated_probe_latencies(HOPPER.noise, ["idle"] * 20000, rng)
    busy = simulated_probe_latencies(HOPPER.noise, ["busy"] * 20000, rng)
    assert idle.mean() == pytest.approx(base, rel=0.01)
    assert busy.mean() == pytest.approx(base * HOPPER.noise.busy_mean, rel=0.02)
    assert np.log(idle).std() == pytest.approx(HOPPER.noise.idle_sigma, rel=0.03)
    quiet = simulated_probe_latencies(HOPPER.noise, ["busy"] * 20000, rng, noise=0.5)
    assert quiet.mean() == pytest.approx(base * HOPPER.noise.busy_mean**0.5, rel=0.02)


def test_simulated_probe_is_seeded_and_validated() -> None:
    a = simulated_probe_latency(HOPPER.noise, "busy", np.random.default_rng(3), 4096)
    b = simulated_probe_latency(HOPPER.noise, "busy", np.random.default_rng(3), 4096)
    assert a == b
    with pytest.raises(ConfigError, match=r"^state: 'calm' is not one of none, idle, busy"):
        simulated_probe_latency(HOPPER.noise, "calm", np.random.default_rng(0))
    with pytest.raises(ConfigError, match=r"^size: 0 is not a positive number of bytes"):
        simulated_probe_latency(HOPPER.noise, "idle", np.random.default_rng(0), 0)


def test_markov_states_keep_the_busy_share_and_persist() -> None:
    states = markov_states(20000, 0.3, 0.9, np.random.default_rng(1)) == "busy"
    assert states.mean() == pytest.approx(0.3, abs=0.05)
    assert np.corrcoef(states[:-1], states[1:])[0, 1] == pytest.approx(0.9, abs=0.03)


def test_tracker_is_unknown_until_enough_probes_then_labels() -> None:
    rng = np.random.default_rng(2)
    states = np.where(rng.random(200) < 0.3, "busy", "idle")
    latencies = simulated_probe_latencies(HOPPER.noise, states, rng)
    tracker = StateTracker(StatePolicy(min_probes=30, refit_every=20))
    tags = [tracker.observe(float(v)) for v in latencies]
    assert {t.state for t in tags[:29]} == {"unknown"} and tags[0].posterior_busy is None
    assert tracker.model is not None and tracker.model.bimodal
    later = tags[60:]
    agreement = np.mean([t.state == s for t, s in zip(later, states[60:], strict=True)])
    assert agreement > 0.85
    posteriors = [t.posterior_busy for t in later if t.posterior_busy is not None]
    assert posteriors and all(0 <= p <= 1 for p in posteriors)
    assert tags[100].as_record(2**20)["state"] == tags[100].state


def test_repeat_and_ranking_rules() -> None:
    policy = StatePolicy(max_repeats=2, min_idle=2)
    assert should_repeat(Tag(0.01, "busy", 0.9), 0, policy)
    assert should_repeat("busy", 1, policy) and not should_repeat("busy", 2, policy)
    assert not should_repeat("idle", 0, policy) and not should_repeat("unknown", 0, policy)
    assert ranking_times([1.0, 1.5, 1.1], ["idle", "busy", "unknown"], 2) == [1.0, 1.1]
    assert ranking_times([1.0, 1.5, 1.6], ["idle", "busy", "busy"], 2) == [1.0, 1.5, 1.6]
    with pytest.raises(DataError, match="2 times but 1 states"):
        ranking_times([1.0, 2.0], ["idle"], 1)
    with pytest.raises(ConfigError, match=r"^state.min_idle: 0 is not an integer >= 1"):
        StatePolicy(min_idle=0)


def test_model_from_store_uses_probe_rounds_of_one_backend_and_size(tmp_path) -> None:
    store = Store(tmp_path / "s.jsonl")
    with pytest.raises(DataError, match=r"0 probe latencies of 1048576 bytes \(backend sim\)"):
        model_from_store(store, backend="sim")
    for record in simulate_probe_trace(HOPPER, 60, np.random.default_rng(4), targets=2):
        store.append(record)
    model = model_from_store(store, backend="sim")
    assert model.mixture.n == 120 and model.size_bytes == 2**20
    with pytest.raises(DataError, match="0 probe latencies"):
        model_from_store(store, backend="probe")
