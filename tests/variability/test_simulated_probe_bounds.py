"""A simulated probe is counted before any latency is drawn or stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_PROBE_ROUNDS, MAX_SIMULATED_PROBES
from iotune.sim import load_system
from iotune.store import Store
from iotune.variability.probe import ProbeSettings
from iotune.variability.simulate import record_simulated_probe, simulated_round_count


def test_the_rounds_a_duration_gives_are_bounded() -> None:
    assert simulated_round_count(ProbeSettings(interval_s=30, duration_s=3600)) == 120
    every_second = ProbeSettings(interval_s=1, duration_s=MAX_PROBE_ROUNDS + 1)
    with pytest.raises(ConfigError, match=r"^--duration/--interval: 1,000,001 simulated "
                                          r"rounds is above the limit of 1,000,000"):
        simulated_round_count(every_second)


def test_rounds_times_targets_is_bounded() -> None:
    rounds = ProbeSettings(rounds=1000)
    assert simulated_round_count(rounds, MAX_SIMULATED_PROBES // 1000) == 1000
    with pytest.raises(ConfigError, match=r"^--targets: 10001 targets x 1000 rounds is "
                                          r"10,001,000 simulated latencies"):
        simulated_round_count(rounds, MAX_SIMULATED_PROBES // 1000 + 1)


def test_a_refused_simulated_probe_writes_no_store(tmp_path: Path) -> None:
    store = Store(tmp_path / "p.jsonl")
    with pytest.raises(ConfigError, match="simulated latencies"):
        record_simulated_probe(load_system("hopper"), store, ProbeSettings(rounds=1000),
                               targets=20_000)
    assert list(tmp_path.iterdir()) == []
