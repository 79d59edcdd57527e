"""Placement replayed over probe rounds: the gain the tool's own data give, beside eq. 3."""

from __future__ import annotations

import numpy as np
import pytest

from iotune.errors import ConfigError, DataError
from iotune.sim import load_system
from iotune.variability.analysis import replay_document
from iotune.variability.replay import HINDSIGHT, PERSISTENCE, replay_placement
from iotune.variability.samples import probe_samples
from iotune.variability.simulate import simulate_probe_trace


@pytest.fixture(scope="module")
def hopper_rounds() -> list[dict]:
    """300 simulated rounds of 8 targets of the Hopper preset (states change often)."""
    return simulate_probe_trace(load_system("hopper"), 300, np.random.default_rng(1),
                                targets=8)


def blocky_rounds(rounds: int = 200, targets: int = 6, block: int = 25) -> list[dict]:
    """Rounds where each target stays idle or busy (2x slower) for ``block`` rounds at a
    time, offset per target, with 3% noise: states that persist, so a forecast pays."""
    rng = np.random.default_rng(3)
    records = []
    for r in range(rounds):
        entries = []
        for k in range(targets):
            busy = ((r + 7 * k) // block) % 3 == 0
            latency = 0.004 * (2.0 if busy else 1.0) * float(np.exp(rng.normal(0, 0.03)))
            entries.append({"target": f"OST{k:04x}", "at": 1000.0 + 30 * r,
                            "latency_s": latency})
        records.append({"campaign": "probe", "kind": "latency", "backend": "sim",
                        "probe_id": "p1", "round": r, "time": 1000.0 + 30 * r,
                        "size_bytes": 2**20, "targets": entries})
    return records


def test_frequent_state_changes_make_placement_lose(hopper_rounds: list[dict]) -> None:
    replay = replay_placement(probe_samples(hopper_rounds), classifier="svm")
    persistence = replay.forecast(PERSISTENCE)
    assert len(persistence.rounds) == 60  # the last 20% of 300 rounds, each after another
    assert {len(f.rounds) for f in replay.forecasts} == {60}
    assert persistence.mean_gain < 1 and persistence.slower > persistence.faster
    assert replay.forecast(HINDSIGHT).mean_gain > 1.1  # the states are worth knowing...
    assert replay.forecast(HINDSIGHT).accuracy == 1.0
    assert not replay.pays  # ...but no forecast knows them well enough
    verdict = replay.verdict()
    assert verdict.startswith("does not pay on these probes")
    assert "hindsight" not in verdict.split(":")[0]
    assert "would gain" in verdict


def test_a_round_is_timed_by_its_slowest_target(hopper_rounds: list[dict]) -> None:
    samples = probe_samples(hopper_rounds)
    replay = replay_placement(samples, classifier="svm")
    for placed in replay.forecast(HINDSIGHT).rounds:
        latencies = samples.frame.loc[samples.frame["time"] == placed.time, "latency"]
        assert placed.even_bytes_s == pytest.approx(8 * 2**20 / latencies.max())
        if placed.n_idle and placed.n_busy:
            assert placed.alpha > placed.n_idle / 8  # idle targets take more than even
        else:
            assert placed.gain == pytest.approx(1.0)


def test_persistent_states_make_placement_pay() -> None:
    replay = replay_placement(probe_samples(blocky_rounds()), classifier="rf")
    persistence = replay.forecast(PERSISTENCE)
    assert persistence.accuracy > 0.9 and replay.busy_persistence > 0.9
    assert persistence.mean_gain > 1.2 and replay.pays
    assert replay.verdict().startswith("pays:")
    assert replay.forecast("rf").mean_gain > 1.2


def test_replay_needs_rounds_and_known_options(hopper_rounds: list[dict]) -> None:
    with pytest.raises(ConfigError, match="--classifier: 'knn' is not one of"):
        replay_placement(probe_samples(hopper_rounds), classifier="knn")
    with pytest.raises(DataError, match=r"5 probe rounds after the first 80% \(at least 10"):
        replay_placement(probe_samples(blocky_rounds(rounds=25)))
    assert replay_document("store x: no such file", None, "svm") == {
        "not_replayed": "store x: no such file"}
    assert "not_replayed" in replay_document(blocky_rounds(rounds=25), None, "svm")
