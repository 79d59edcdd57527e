"""Running the CLI in-process and reading its one error line, for tests of bad input."""

from pathlib import Path

import pytest
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


def assert_decided_or_spent(document: dict, budget: int, output: str) -> None:
    """A tuned document of a tune given ``--budget budget`` over real (noisy) runs: it
    recommends a change or the default, or it is undecided only with the whole budget
    spent, the default's settings kept, and the printed command continuing with a larger
    budget."""
    recommendation = document["recommendation"]
    assert recommendation in ("tuned", "default", "undecided"), recommendation
    if recommendation != "undecided":
        return
    search = document["search"]
    assert search["budget"] == budget and search["budget_spent"] == budget, search
    assert document["settings"] == {}
    more = document["undecided"]["budget_to_decide"]
    assert more > budget
    assert f"--budget {more}" in output, output


def isolate(monkeypatch: pytest.MonkeyPatch, xdg: Path) -> None:
    """No config from ``$IOTUNE_CONFIG`` or the user's config directory (``xdg`` stands in
    for it), no knowledge base from ``$IOTUNE_KNOWLEDGE`` and no Slurm job around, whatever
    the machine running the tests has."""
    monkeypatch.delenv("IOTUNE_CONFIG", raising=False)
    monkeypatch.delenv("IOTUNE_KNOWLEDGE", raising=False)  # a site-wide knowledge base
    monkeypatch.setenv("XDG_CONFIG_HOME", str(xdg))
    for variable in ("SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID"):
        monkeypatch.delenv(variable, raising=False)
