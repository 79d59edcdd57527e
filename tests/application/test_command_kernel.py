"""A user's program as iotune's kernel, end to end: config, train, tune, the tuned YAML."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.config import parse_config
from iotune.errors import ConfigError
from iotune.store import Store

HERE = Path(__file__).resolve().parent
PROGRAM = f"{sys.executable} {HERE / 'hints_app.py'} {{scratch}}/data.bin 1"


def write_config(tmp_path: Path, **kernel) -> Path:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    config = {
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m"},
        "store": "store.jsonl",
        "kernel": {"command": PROGRAM, "metric": {"regex": r"write time: ([0-9.]+)"},
                   "preload": "no", **kernel},
        "space": {"cb_buffer_size": ["1MiB", "4MiB"], "romio_cb_write": ["enable", "disable"]},
        "train": {"repetitions": 1, "scales": [{"cores": 2, "design": "full"}]},
        "tune": {"repetitions": 1},
    }
    path = tmp_path / "iotune.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@pytest.mark.mpi
def test_train_then_tune_a_python_program_through_romio_hints(tmp_path):
    config = write_config(tmp_path)
    runner = CliRunner()
    trained = runner.invoke(cli, ["train", "-c", str(config), "--no-color"])
    assert trained.exit_code == 0, trained.output
    tuned_path = tmp_path / "tuned.yaml"
    tuned = runner.invoke(cli, ["tune", "-c", str(config), "--cores", "2", "--budget", "5",
                                "--strategy", "random", "-o", str(tuned_path), "--no-color"])
    assert tuned.exit_code == 0, tuned.output
    records = Store(tmp_path / "store.jsonl").records()
    assert {r["campaign"] for r in records} == {"train", "tune"}
    assert all(r["kernel"] == "command" and r["status"] == "ok" for r in records)
    for record in records:  # each run's hints reached the file the program opened
        printed = record["result"]["stdout_tail"]
        hints = record["result"]["hints_requested"]
        if "cb_buffer_size" in hints:
            assert f"hint cb_buffer_size={hints['cb_buffer_size']}" in printed
        assert record["result"]["measure"] == "regex"
    document = yaml.safe_load(tuned_path.read_text())
    assert document["kernel"] == "command"
    assert document["kernel_args"]["command"] == PROGRAM
    assert document["recommendation"] in ("tuned", "default")


@pytest.mark.mpi
def test_run_with_command_on_the_command_line(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = write_config(tmp_path)
    result = CliRunner().invoke(cli, [
        "run", "-c", str(config), "--command", PROGRAM, "--metric", r"regex:write time: (\S+)",
        "--cores", "2", "--set", "romio_cb_write=disable", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert '"measure": "regex"' in result.output
    assert "hint romio_cb_write=disable" in result.output


def test_a_failing_program_is_a_failed_record_and_a_nonzero_exit(tmp_path):
    config = write_config(tmp_path, command=f"{sys.executable} -c 'raise SystemExit(3)'",
                          metric="wall")
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--cores", "1"])
    assert result.exit_code == 1
    (record,) = Store(tmp_path / "store.jsonl").records()
    assert record["status"] == "failed" and "exit code 3" in record["error"]


def test_the_config_rejects_what_a_command_cannot_take():
    with pytest.raises(ConfigError, match=r"space\.collective: a command kernel cannot"):
        parse_config("kernel: {command: ./app}\nspace: {collective: [yes, no]}\n")
    with pytest.raises(ConfigError, match=r"kernel\.metric:"):
        parse_config("kernel: {command: ./app, metric: fast}\n")
    with pytest.raises(ConfigError, match="has no simulated access pattern"):
        from iotune.kernels import get_kernel

        get_kernel("command").sim_pattern(4, {})
