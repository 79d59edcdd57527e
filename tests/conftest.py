"""Shared fixtures: a venv-aware environment for subprocesses and small configs."""

from __future__ import annotations

import os
import shutil
import stat
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parent.parent

#: A real MPI campaign small enough for a test: 4 configurations at 2 ranks, a tiny tune.
TINY_CAMPAIGN = {
    "kernel": {"name": "vpic", "args": {"particles_per_rank": 16384, "timesteps": 1}},
    "space": {"cb_config_list": ["*:2"], "cb_nodes": [1, 2],
              "romio_cb_write": ["enable", "disable"]},
    "train": {"repetitions": 1, "seed": 3, "scales": [{"cores": 2, "design": "full"}]},
    "tune": {"top_k": 2, "top_k_refit": 1, "refit_rounds": 1, "repetitions": 1, "max_terms": 3},
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The tests that start a real Slurm (``slurm`` marker) are ``serial`` too: each starts
    munged unless it runs and stops the one it started, which another test may be using.

    On the workers of ``scripts/test.sh`` (pytest-xdist, whole files each, in the order
    collected), files holding a ``slow`` test go first: a file of minutes handed out last
    would leave the other worker idle for those minutes. The other files follow by their
    number of tests, most first, and each file's tests keep their order."""
    for item in items:
        if item.get_closest_marker("slurm"):
            item.add_marker(pytest.mark.serial)
    if os.environ.get("PYTEST_XDIST_WORKER"):
        items[:] = _longest_files_first(items)


def _longest_files_first(items: list[pytest.Item]) -> list[pytest.Item]:
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)
    ordered = sorted(files.values(), key=lambda tests: (
        not any(t.get_closest_marker("slow") for t in tests), -len(tests)))
    return [item for tests in ordered for item in tests]


@pytest.fixture
def subprocess_env() -> dict[str, str]:
    """os.environ with the test interpreter's bin dir first on PATH (for `iotune`, mpiexec)."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.fixture
def fake_program(tmp_path: Path):
    """``fake_program(name, body)``: an executable shell script ``tmp_path/name`` running
    ``body``, standing in for a site tool (squeue, lfs); returns its path as a string."""

    def make(name: str, body: str) -> str:
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)
        return str(path)

    return make


@pytest.fixture
def tiny_campaign() -> dict:
    """A fresh copy of :data:`TINY_CAMPAIGN` to pass to ``write_config``."""
    import copy

    return copy.deepcopy(TINY_CAMPAIGN)


@pytest.fixture
def hopper_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of configs/hopper-vpic.yaml in tmp_path (its store lands there too)."""
    monkeypatch.setenv("SCRATCH", str(tmp_path))
    path = tmp_path / "hopper.yaml"
    shutil.copy(REPO / "configs" / "hopper-vpic.yaml", path)
    return path


@pytest.fixture
def write_config(tmp_path: Path):
    """Write a config mapping (merged over a small local default) and return its path."""

    def write(overrides: dict | None = None, name: str = "iotune.yaml") -> Path:
        scratch = tmp_path / "scratch"
        scratch.mkdir(exist_ok=True)
        base: dict = {
            "schema_version": 1,
            "system": {"name": "testbox", "scratch": str(scratch), "launcher": "mpiexec",
                       "cores_per_node": 4, "aggregators_per_node": 4, "timeout": 120},
            "store": "store.jsonl",
            "kernel": {"name": "vpic", "args": {"particles_per_rank": 4096, "timesteps": 1}},
            "space": {"cb_nodes": [1, 2], "romio_cb_write": ["enable", "disable"]},
        }
        for key, value in (overrides or {}).items():
            if isinstance(value, dict) and isinstance(base.get(key), dict):
                base[key] = {**base[key], **value}
            else:
                base[key] = value
        path = tmp_path / name
        path.write_text(yaml.safe_dump(base, sort_keys=False))
        return path

    return write
