"""Fixtures for the Darshan features: a runner for the darshan commands, and the pattern
program's backend with a scratch folder of its own."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from iotune.cli.darshan_commands import COMMANDS
from iotune.cli.main import IotuneGroup
from iotune.config import build_config
from iotune.darshan.characterize import PatternBackend


@pytest.fixture
def run_cli():
    """``run_cli(*args)``: the darshan commands under iotune's error handling."""
    group = IotuneGroup("iotune")
    for command in COMMANDS:
        group.add_command(command)

    def run(*args: object) -> Result:
        return CliRunner().invoke(group, [str(a) for a in args], catch_exceptions=False)

    return run


@pytest.fixture
def pattern_backend(tmp_path: Path) -> PatternBackend:
    """The pattern program's backend, its runs in ``tmp_path/scratch``."""
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return PatternBackend(build_config({"system": {"scratch": str(scratch)}}, tmp_path))
