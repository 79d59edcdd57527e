"""``run_once`` and ``checked_request``: one configuration measured on purpose, each
repetition recorded as it ends, bad settings refused before any run."""

from __future__ import annotations

import signal

import pytest

from iotune.backends import make_backend
from iotune.backends.measure import RUN_CAMPAIGN, checked_request, run_once
from iotune.config import load_config
from iotune.errors import ConfigError
from iotune.execution import interrupt
from iotune.store import Store


def test_each_repetition_is_recorded_as_a_run(hopper_config, tmp_path):
    config = load_config(hopper_config)
    request = checked_request(config, 32, {"stripe_count": "4", "cb_nodes": 2}, {})
    assert request.settings == {"stripe_count": 4, "cb_nodes": 2}  # canonical form
    store = Store(tmp_path / "runs.jsonl")
    said: list[str] = []
    records = run_once(make_backend(config, "sim"), request, 3, store, say=said.append)
    assert [r["rep"] for r in records] == [0, 1, 2]
    assert [r["campaign"] for r in store.records()] == [RUN_CAMPAIGN] * 3
    assert said[-1].startswith("iotune: run 3/3: vpic at 32 ranks (sim)")


def test_a_stop_between_repetitions_keeps_what_was_measured(hopper_config, tmp_path,
                                                           monkeypatch):
    config = load_config(hopper_config)
    request = checked_request(config, 32, {}, {})
    store = Store(tmp_path / "runs.jsonl")
    calls = {"n": 0}

    def stop_after_two() -> None:
        calls["n"] += 1
        if calls["n"] > 2:
            raise interrupt.Interrupted(signal.SIGTERM)

    monkeypatch.setattr(interrupt, "check", stop_after_two)
    with pytest.raises(interrupt.Interrupted):
        run_once(make_backend(config, "sim"), request, 5, store)
    assert len(store.records()) == 2


def test_a_setting_the_kernel_cannot_take_is_refused_naming_the_option(hopper_config):
    config = load_config(hopper_config)
    with pytest.raises(ConfigError, match="--set"):
        checked_request(config, 32, {"stripe_count": -1}, {})
    with pytest.raises(ConfigError, match="--arg"):
        checked_request(config, 32, {}, {"no_such_argument": 1})
