"""Fixtures of the tests that tune real programs (``vendored.py`` says where they are)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from tests.programs.vendored import program_path


@pytest.fixture(scope="session")
def program():
    """``program(name)``: the path of a built vendored program, as text; skips the test,
    naming the command that builds it, when it is not built (pytest run without setup)."""

    def find(name: str) -> str:
        path = program_path(name)
        if not os.access(path, os.X_OK):
            pytest.skip(f"{name} is not built ({path} missing): 'make test' or "
                        "'scripts/setup.sh --test' builds the programs in vendor/")
        return str(path)

    return find


@pytest.fixture
def program_config(tmp_path: Path):
    """``program_config(command, metric, space)``: a config tuning ``command`` as a command
    kernel at 2 ranks with the preload library, its store and scratch in ``tmp_path``."""

    def write(command: str, metric: str, space: dict) -> Path:
        scratch = tmp_path / "scratch"
        scratch.mkdir(exist_ok=True)
        path = tmp_path / "iotune.yaml"
        path.write_text(yaml.safe_dump({
            "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m"},
            "store": "store.jsonl",
            "kernel": {"command": command, "metric": metric, "preload": "yes"},
            "space": space,
            "tune": {"repetitions": 1},
        }))
        return path

    return write
