"""Running ``iotune`` in-process for the report tests."""

from __future__ import annotations

from click.testing import CliRunner, Result

from iotune.cli.main import IotuneGroup, all_commands
from iotune.cli.report_commands import report_command


def invoke(args: list[str]) -> Result:
    """Run ``iotune ARGS`` in-process, with ``report`` registered in a group of its own
    (so the tests do not depend on the main group's wiring)."""
    group = IotuneGroup(name="iotune", commands={**all_commands(), "report": report_command})
    return CliRunner().invoke(group, args, prog_name="iotune")


def run_ok(args: list[str]) -> Result:
    result = invoke(args)
    assert result.exit_code == 0, result.output + str(result.exception)
    return result
