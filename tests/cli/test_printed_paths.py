"""Commands that ``init`` and ``proxy`` print for the user to run quote their paths through
the one printer: a path with a space or a ``$`` comes out as one literal shell word."""

from __future__ import annotations

import shlex
from pathlib import Path

import darshan.examples
from click.testing import CliRunner

from iotune.cli.main import cli

LOG = Path(darshan.examples.__file__).parent / "example_logs" / "ior_hdf5_example.darshan"
AWKWARD = "my dir/$HOME cfg.yaml"


def _command_after(text: str, marker: str) -> list[str]:
    line = next(line for line in text.splitlines() if marker in line)
    return shlex.split(line.split(marker, 1)[1].split(";")[0])


def test_init_prints_its_run_command_with_the_config_as_one_word(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my dir").mkdir()
    made = CliRunner().invoke(cli, ["init", "-o", AWKWARD])
    assert made.exit_code == 0, made.output
    assert (tmp_path / AWKWARD).is_file()
    assert _command_after(made.output, "then run: ") == ["iotune", "run", "-c", AWKWARD]


def test_proxy_prints_its_tune_command_with_the_proxy_as_one_word(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my dir").mkdir()
    made = CliRunner().invoke(cli, ["proxy", str(LOG), "-o", AWKWARD])
    assert made.exit_code == 0, made.output
    words = _command_after(made.output, "tune it with: ")
    assert words[:4] == ["iotune", "tune", "--kernel", AWKWARD] and words[4] == "--cores"
