"""A training campaign around ``slow_app.py`` (runs as long as a test asks), for the tests
of interrupted and parallel ``iotune train``."""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

SLOW_APP = Path(__file__).resolve().parent / "slow_app.py"


def write_slow_config(tmp_path: Path, seconds: float, repetitions: int) -> Path:
    """Write ``tmp_path/iotune.yaml``: 2 configurations x ``repetitions`` runs at 1 core of
    ``slow_app.py``, each run taking ``seconds`` and leaving its pid in ``tmp_path/pids``.
    Writing it again changes only the seconds (and repetitions) of the runs to come."""
    scratch, pids = tmp_path / "scratch", tmp_path / "pids"
    scratch.mkdir(exist_ok=True)
    pids.mkdir(exist_ok=True)
    (pids / "seconds").write_text(str(seconds))
    program = f"{sys.executable} {SLOW_APP} {{scratch}}/out.bin {pids}"
    path = tmp_path / "iotune.yaml"
    path.write_text(yaml.safe_dump({
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m"},
        "store": "store.jsonl",
        "kernel": {"command": program, "metric": {"regex": r"write time: ([0-9.]+)"},
                   "preload": "no"},
        "space": {"romio_cb_write": ["enable", "disable"]},
        "train": {"repetitions": repetitions, "scales": [{"cores": 1, "design": "full"}]},
    }))
    return path
