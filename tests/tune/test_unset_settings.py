"""Configurations that leave a setting unset (the library's default) are values of their
own: every strategy completes a tune over recorded data mixing them with set ones, and the
model predicts them (REPLAYED synthetic landscape)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iotune.backends.replay import ReplayBackend
from iotune.config import build_config
from iotune.model.from_measurements import fit_for_settings
from iotune.model.io import model_from_dict, model_to_dict
from iotune.store import Store
from iotune.tune import tune

SEEDS = range(20)


def mixed_landscape(path: Path) -> Path:
    """Collective configurations set cb_nodes and cb_buffer_size; independent ones
    (romio_cb_write=disable) leave both unset, as they do not apply there; the default
    sets nothing. The fastest is independent I/O."""
    rng = np.random.default_rng(3)
    rows = []

    def add(settings: dict, seconds: float) -> None:
        for _ in range(3):
            rows.append({"cores": 8, **settings,
                         "write_time": seconds * float(np.exp(0.05 * rng.standard_normal()))})

    add({}, 10.0)
    for nodes in (1, 2, 4):
        for buffer in (1, 4, 16):
            add({"cb_nodes": nodes, "cb_buffer_size": buffer * 2**20,
                 "romio_cb_write": "enable"}, 4 + 8 / nodes + buffer / 4)
    add({"romio_cb_write": "disable"}, 3.0)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def replay_config(tmp_path: Path, data: Path, name: str):
    config = build_config({"kernel": {"name": "vpic"}, "system": {"cores_per_node": 4},
                           "backend": {"name": "replay", "replay_data": str(data)},
                           "store": str(tmp_path / f"{name}.jsonl")}, tmp_path)
    return config, ReplayBackend(config)


@pytest.mark.parametrize("strategy", ["portfolio", "model", "genetic", "tpe", "random"])
def test_every_strategy_completes_over_configurations_with_unset_settings(tmp_path, strategy):
    data = mixed_landscape(tmp_path / "mixed.csv")
    found = []
    for seed in SEEDS:
        config, backend = replay_config(tmp_path, data, f"{strategy}-{seed}")
        # 12 runs: the search gets six configurations, the race six (the rank test decides
        # with three runs each of the leader and the default, and the leader may change)
        result = tune(config, backend, Store(config.store), kernel="vpic", cores=8,
                      strategy=strategy, budget=12, strategy_options={"seed": seed})
        found.append(dict(result.best.settings))
        assert len(result.evaluations) == 6 or strategy not in ("portfolio", "model")
    assert len(found) == len(SEEDS)
    assert any(f == {"romio_cb_write": "disable"} for f in found), found


def test_the_model_fits_and_predicts_unset_settings_as_their_own_level(tmp_path):
    frame = pd.read_csv(mixed_landscape(tmp_path / "mixed.csv"))
    names = ["cb_nodes", "cb_buffer_size", "romio_cb_write"]
    model = fit_for_settings(frame, names, max_terms=6)
    assert dict(model.unset)["cb_nodes"] == 2.0  # the median of the set values
    assert dict(model.unset)["romio_cb_write"] is None
    asked = pd.DataFrame([{"romio_cb_write": "disable"},
                          {"cb_nodes": 4, "cb_buffer_size": 2**20, "romio_cb_write": "enable"}])
    predicted = model.predict(asked)
    assert np.all(np.isfinite(predicted))
    assert predicted[0] == pytest.approx(3.0, rel=0.15)  # independent I/O, unset settings
    assert predicted[1] == pytest.approx(6.25, rel=0.15)
    again = model_from_dict(model_to_dict(model))
    assert again.unset == model.unset
    assert np.array_equal(again.predict(asked), predicted)
