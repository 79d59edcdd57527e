"""Fixtures for the Darshan features: a runner for the darshan commands."""

from __future__ import annotations

import pytest
from click.testing import CliRunner, Result

from iotune.cli.darshan_commands import COMMANDS
from iotune.cli.main import IotuneGroup


@pytest.fixture
def run_cli():
    """``run_cli(*args)``: the darshan commands under iotune's error handling."""
    group = IotuneGroup("iotune")
    for command in COMMANDS:
        group.add_command(command)

    def run(*args: object) -> Result:
        return CliRunner().invoke(group, [str(a) for a in args], catch_exceptions=False)

    return run
