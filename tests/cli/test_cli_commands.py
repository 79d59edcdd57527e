"""run / results / init / train --dry-run through the CLI, with real MPI runs where they run."""

import json
import stat
import sys

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.config import load_config
from iotune.store import Store


def invoke(*args, env=None):
    result = CliRunner().invoke(cli, list(args), env=env)
    assert "Traceback" not in result.output, result.output
    return result


@pytest.mark.mpi
def test_run_records_a_real_measurement_with_hints_read_back(write_config, tmp_path):
    config = write_config()
    result = invoke("run", "-c", str(config), "--cores", "2", "--set", "cb_nodes=2",
                    "--set", "cb_config_list=*:2", "--set", "romio_cb_write=disable",
                    "--set", "cb_buffer_size=1MiB", "--set", "hint.romio_no_such_hint=7",
                    "--format", "json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.output[result.output.index("{"):result.output.rindex("}") + 1])
    assert record["status"] == "ok" and record["provenance"] == "measured"
    hints = record["result"]["hints_in_effect"]
    assert hints["romio_cb_write"] == "disable"
    assert hints["cb_buffer_size"] == "1048576"
    assert hints["cb_nodes"] == "2"
    assert record["result"]["bytes_written"] == 32 * 4096 * 2
    assert [r["id"] for r in Store(tmp_path / "store.jsonl").records()] == [record["id"]]
    assert not any((tmp_path / "scratch").iterdir())  # the kernel cleaned up after itself

    assert "romio_no_such_hint" not in hints  # ROMIO drops a hint it does not know

    table = invoke("results", "-c", str(config))
    assert table.exit_code == 0
    assert "romio_cb_write" in table.output and "disable" in table.output
    # The table names what did not take effect, and only that.
    assert "romio_no_such_hint=7 (absent)" in table.output
    assert "cb_nodes=2 (" not in table.output
    rows = json.loads(invoke("results", "-c", str(config), "--format", "json").output)
    assert rows[0]["in_effect.romio_cb_write"] == "disable"
    assert rows[0]["in_effect.cb_nodes"] == "2"
    export = tmp_path / "runs.csv"
    assert invoke("results", "-c", str(config), "--export", str(export)).exit_code == 0
    frame = pd.read_csv(export)
    assert list(frame["cb_nodes"]) == [2]
    assert frame.loc[0, "write_time"] > 0
    assert list(frame["in_effect.cb_buffer_size"]) == [1048576]
    parquet = tmp_path / "runs.parquet"
    assert invoke("results", "-c", str(config), "--export", str(parquet)).exit_code == 0
    read_back = pd.read_parquet(parquet)
    assert list(read_back["write_time"]) == list(frame["write_time"])
    assert list(read_back["in_effect.romio_cb_write"]) == ["disable"]
    bad = invoke("results", "-c", str(config), "--export", str(tmp_path / "runs.xlsx"))
    assert bad.exit_code == 2 and "the file must end in .csv or .parquet" in bad.output


def _fake_python(tmp_path, body):
    script = tmp_path / "fakepython"
    script.write_text(f'#!/bin/sh\ncase "$*" in\n  *disable*) {body};;\n'
                      f'  *) exec {sys.executable} "$@";;\nesac\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return str(script)


@pytest.mark.mpi
@pytest.mark.serial  # the real runs beside the failing ones have the 3 s timeout too
@pytest.mark.parametrize(("body", "reason"), [
    ("echo 'kernel: disk error' >&2; exit 7", "exit code 7: kernel: disk error"),
    ("sleep 60", "timed out after 3 s"),
])
def test_crash_or_hang_becomes_a_failed_record_and_train_goes_on(write_config, tmp_path,
                                                                 body, reason):
    config = write_config({
        "system": {"python": _fake_python(tmp_path, body), "timeout": 3},
        "space": {"romio_cb_write": ["disable", "enable"]},
        "train": {"scales": [{"cores": 2, "design": "full"}]},
    })
    result = invoke("train", "-c", str(config))
    assert result.exit_code == 0, result.output
    records = Store(tmp_path / "store.jsonl").records()
    assert len(records) == 4  # cb_nodes 1, 2 x romio_cb_write disable, enable
    for record in records:
        if record["settings"]["romio_cb_write"] == "disable":
            assert (record["status"], record["error"]) == ("failed", reason)
        else:
            assert record["status"] == "ok"
    assert "2 failed" in result.output


def test_train_dry_run_prints_the_plan(write_config):
    config = write_config({"train": {"repetitions": 3,
                                     "scales": [{"cores": 2}, {"cores": 4, "design": "lhs",
                                                               "runs": 3}]}})
    result = invoke("train", "-c", str(config), "--dry-run")
    assert result.exit_code == 0
    lines = result.output.splitlines()
    assert lines[0].split() == ["cores", "design", "configurations", "repetitions", "runs",
                                "already_done"]
    assert lines[2].split() == ["2", "full", "4", "3", "12", "0"]
    assert lines[3].split() == ["4", "lhs", "3", "3", "9", "0"]
    assert "21 runs" in result.output and "core-hours" in result.output


def test_init_writes_a_config_that_loads(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert invoke("init").exit_code == 0
    config = load_config(tmp_path / "iotune.yaml")
    assert config.kernel.name == "vpic" and config.space.names
    again = invoke("init")
    assert again.exit_code == 2 and "already exists; pass --force" in again.output
    assert yaml.safe_load((tmp_path / "iotune.yaml").read_text())["schema_version"] == 1


def test_init_command_parses_the_launch_line_into_a_space_that_can_take_effect(tmp_path,
                                                                             monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = invoke("init", "-o", "app.yaml", "--command",
                 "srun -N 2 --ntasks=16 ./sim 'in put.deck' -o {scratch}/x.h5")
    assert out.exit_code == 0, out.output
    config = load_config(tmp_path / "app.yaml")
    assert config.kernel.name == "command" and config.system.launcher == "srun"
    assert config.kernel.args["command"] == "./sim 'in put.deck' -o '{scratch}/x.h5'"
    assert config.system.cores_per_node == 8 and config.system.aggregators_per_node == 8
    space = dict(config.space.values)
    assert space["cb_config_list"] == ("*:8",)  # ROMIO's default *:1 would cap cb_nodes at 2
    assert space["cb_nodes"] == (1, 2, 4, 8, 16)
    assert [s.cores for s in config.train.scales] == [16]
