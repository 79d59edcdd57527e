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
from tests.cli_result import assert_decided_or_spent

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
    # real runs may not decide in five runs: then undecided, with the whole budget spent
    assert_decided_or_spent(document, 5, tuned.output)


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
        from iotune.kernel_specs import get_kernel

        get_kernel("command").sim_pattern(4, {})


def test_dry_run_prints_the_users_program_with_what_carries_the_settings(tmp_path):
    config = write_config(tmp_path, output_dir="out")
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--cores", "2", "--dry-run",
                                      "--set", "cb_buffer_size=4MiB",
                                      "--set", "stripe_count=4"])
    assert result.exit_code == 0, result.output
    lines = result.output.strip().splitlines()
    command = lines[-1]
    run_dir = tmp_path / "scratch" / "iotune-app-XXXXXXXX"
    # The user's program, not iotune's launcher of it, with {scratch} replaced.
    assert "hints_app.py" in command and "kernels" not in command
    assert f"{run_dir}/out/data.bin" in command
    assert command.startswith(f"env ROMIO_HINTS={run_dir}/romio-hints ")
    assert "'MPICH_MPIIO_HINTS=*:cb_buffer_size=4194304:striping_factor=4'" in command
    assert "LD_PRELOAD" not in command  # preload: no
    assert "#   cb_buffer_size 4194304" in lines
    assert any(line.startswith("# striping not applied:") for line in lines)
    assert not run_dir.exists()  # nothing ran
    assert not (tmp_path / "store.jsonl").exists()


@pytest.mark.mpi
def test_metric_applies_to_the_configs_own_command(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = write_config(tmp_path, metric="wall")
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--cores", "2",
                                      "--metric", r"regex:write time: (\S+)",
                                      "--format", "json"])
    assert result.exit_code == 0, result.output
    (record,) = Store(tmp_path / "store.jsonl").records()
    assert record["result"]["measure"] == "regex"
    assert record["params"]["command"] == PROGRAM


def test_metric_for_a_builtin_kernel_is_one_clear_error(tmp_path):
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({"system": {"scratch": str(tmp_path)},
                                      "kernel": {"name": "vpic"}}))
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--cores", "2",
                                      "--metric", "wall", "--dry-run"])
    assert result.exit_code != 0
    assert "--metric: only for a command kernel" in result.output
    assert "vpic" in result.output and "Traceback" not in result.output
