"""Fixtures for the report tests: a small simulated campaign, and the report command.

The simulated campaign is built once per session (in-process, about a second): VPIC-IO on
the simulated Hopper over a reduced space, trained at 128 and 256 ranks, tuned at 512
ranks by the model-guided search and by a random search, two noisy repetitions each.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from report_helpers import run_ok

SIM_CONFIG = {
    "schema_version": 1,
    "system": {"name": "hopper", "scratch": "scratch", "launcher": "mpiexec",
               "cores_per_node": 24, "ost_count": 156, "aggregators_per_node": 1},
    "store": "store.jsonl",
    "kernel": {"name": "vpic", "args": {"particles_per_rank": 8388608, "timesteps": 1}},
    "space": {"stripe_count": [4, 16, 64, 156], "stripe_size": ["1MiB", "8MiB", "32MiB"],
              "cb_nodes": [2, 8, 16]},
    "train": {"repetitions": 1, "seed": 1,
              "scales": [{"cores": 128, "design": "full"}, {"cores": 256, "design": "full"}]},
    "tune": {"top_k": 6, "top_k_refit": 3, "refit_rounds": 1, "repetitions": 2,
             "max_terms": 5},
    "backend": {"name": "sim", "system": "hopper", "noise": 1.0},
}


@pytest.fixture(scope="session")
def sim_campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with ``iotune.yaml``, ``store.jsonl`` and ``tuned.yaml`` (simulated)."""
    root = tmp_path_factory.mktemp("sim-campaign")
    (root / "scratch").mkdir()
    config = root / "iotune.yaml"
    config.write_text(yaml.safe_dump(SIM_CONFIG, sort_keys=False))
    run_ok(["train", "-c", str(config)])
    run_ok(["tune", "-c", str(config), "--cores", "512", "-o", str(root / "tuned.yaml")])
    run_ok(["tune", "-c", str(config), "--cores", "512", "--strategy", "random",
            "--budget", "8", "--fresh"])
    return root


@pytest.fixture(autouse=True)
def no_default_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No ./iotune.yaml, $IOTUNE_CONFIG or user config is found by accident."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("IOTUNE_CONFIG", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
