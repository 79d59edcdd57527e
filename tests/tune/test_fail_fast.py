"""A broken environment stops ``tune`` after the default's first run and ``train`` after a
worker's first, with the error and its fix in one line, instead of spending the budget on
runs that cannot work. Real runs: mpi4py pointed at an MPI library this machine lacks (as
a wheel built for another MPI looks for ``libmpi.so.12``), and a command that names no
program."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from iotune.store import Store
from tests.cli_result import error_line, invoke

#: mpi4py loads this library instead of the one it was built with: not on this machine.
MISSING_MPI = {"MPI4PY_LIBMPI": "libmpi.so.12"}


def _config(tmp_path: Path, kernel: dict, env: dict | None = None) -> Path:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    config = {"system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m",
                         "env": env or {}},
              "store": str(tmp_path / "store.jsonl"), "kernel": kernel,
              "space": {"romio_cb_write": ["enable", "disable"],
                        "cb_buffer_size": ["1MiB", "4MiB"]},
              "train": {"repetitions": 1, "scales": [{"cores": 2, "design": "full"}]},
              "tune": {"repetitions": 1}}
    path = tmp_path / "iotune.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


VPIC = {"name": "vpic", "args": {"particles_per_rank": 4096, "fsync": False}}


@pytest.mark.mpi
def test_a_tune_whose_mpi_library_cannot_load_stops_after_the_default_run(tmp_path):
    config = _config(tmp_path, VPIC, MISSING_MPI)
    tuned = tmp_path / "tuned.yaml"
    result = invoke("tune", "-c", str(config), "--cores", "2", "--budget", "8", "-o",
                    str(tuned))
    assert result.exit_code == 5, result.output
    assert error_line(result) == (
        "tune: stopped after the default's first run at 2 ranks, which failed before "
        "measuring anything: exit code 1: libmpi.so.12: cannot open shared object file: No "
        "such file or directory (a library cannot load; run `iotune doctor` to check the "
        "environment, and which MPI library and Python the runs use: system.python, "
        "system.env); no tuned file written")
    records = Store(tmp_path / "store.jsonl").records()
    assert [(r["settings"], r["status"]) for r in records] == [({}, "failed")]
    assert not tuned.exists()
    # Fixed, the same tune measures the default afresh: the failure was the environment's,
    # not the default's answer to reuse.
    _config(tmp_path, VPIC)
    again = invoke("tune", "-c", str(config), "--cores", "2", "--budget", "3", "-o",
                   str(tuned))
    assert again.exit_code == 0, again.output
    records = Store(tmp_path / "store.jsonl").records()
    assert records[1]["settings"] == {} and records[1]["status"] == "ok"
    assert tuned.exists()


@pytest.mark.mpi
def test_a_tune_of_a_program_that_does_not_exist_stops_after_the_default_run(tmp_path):
    config = _config(tmp_path, {"command": "./no_such_program {scratch}/out.dat",
                                "metric": "wall", "preload": "no"})
    result = invoke("tune", "-c", str(config), "--cores", "2", "--budget", "8")
    assert result.exit_code == 5, result.output
    line = error_line(result)
    assert line.startswith("tune: stopped after the default's first run at 2 ranks, which "
                           "failed before measuring anything: exit code 255: ")
    assert "execvp error on file ./no_such_program (No such file or directory)" in line
    assert line.endswith("(the program cannot start; check that the command's program "
                         "exists and can run; a relative path is taken from the config's "
                         "directory); no tuned file written")
    assert len(Store(tmp_path / "store.jsonl").records()) == 1


@pytest.mark.mpi
def test_train_stops_after_its_first_run_and_measures_it_again_once_fixed(tmp_path):
    config = _config(tmp_path, VPIC, MISSING_MPI)
    result = invoke("train", "-c", str(config))
    assert result.exit_code == 5, result.output
    assert error_line(result).startswith(
        "train: stopped after this worker's first run, which failed before measuring "
        "anything: exit code 1: libmpi.so.12: cannot open shared object file")
    records = [r for r in Store(tmp_path / "store.jsonl").records()
               if r.get("campaign") == "train"]
    assert [r["status"] for r in records] == ["failed"]
    status = invoke("status", "-c", str(config), "--format", "json")
    assert status.exit_code == 0, status.output
    scale = json.loads(status.stdout)["scales"][0]
    assert (scale["done"], scale["failed"], scale["left"]) == (0, 0, 4)
    _config(tmp_path, VPIC)
    fixed = invoke("train", "-c", str(config))
    assert fixed.exit_code == 0, fixed.output
    records = [r for r in Store(tmp_path / "store.jsonl").records()
               if r.get("campaign") == "train"]
    assert [r["status"] for r in records] == ["failed"] + ["ok"] * 4


def test_a_configurations_own_failure_does_not_stop_the_tune(tmp_path):
    # The program runs and exits 3 whatever the settings: a failure the tune records as
    # each configuration's answer, as before, and ends with its own one line.
    config = _config(tmp_path, {"command": "python3 -c 'raise SystemExit(3)'",
                                "metric": "wall", "preload": "no"})
    result = invoke("tune", "-c", str(config), "--cores", "1", "--budget", "3",
                    "--strategy", "random")
    assert result.exit_code != 0, result.output
    assert "every one of the" in error_line(result)
    assert len(Store(tmp_path / "store.jsonl").records()) > 1
