"""Running the CLI in-process and reading its one error line, for tests of bad input."""

from click.testing import CliRunner, Result

from iotune.cli.main import cli


def invoke(*args: str) -> Result:
    """``iotune ARGS`` in-process; fails the test on a traceback in the output."""
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def error_line(result: Result) -> str:
    """The text of the one ``iotune: error:`` line of ``result`` (fails unless exactly one)."""
    lines = [line for line in result.output.splitlines() if line.startswith("iotune: error:")]
    assert len(lines) == 1, result.output
    return lines[0][len("iotune: error: "):]
