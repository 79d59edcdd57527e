"""``iotune init --command`` on a real program: the config it writes validates, and
``iotune run -c`` with it runs the program at 2 ranks with aggregators the space offers in
effect (ROMIO's default cb_config_list would cap cb_nodes=2 at 1 on this one node)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

TIMEOUT_S = 180


def iotune(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    return subprocess.run([sys.executable, "-m", "iotune", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=TIMEOUT_S, check=False)


@pytest.mark.mpi
def test_the_config_written_runs_the_program_with_its_space_in_effect(tmp_path, show_hints):
    shutil.copy(show_hints, tmp_path / "show_hints")
    made = iotune("init", "--command", "mpiexec -n 2 ./show_hints {scratch}/out.dat",
                  cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    assert "iotune run -c iotune.yaml --cores 2 --dry-run" in made.stderr
    space = yaml.safe_load((tmp_path / "iotune.yaml").read_text())["space"]
    assert space["cb_config_list"] == ["*:2"] and space["cb_nodes"] == [1, 2]
    plan = iotune("train", "-c", "iotune.yaml", "--dry-run", cwd=tmp_path)
    assert plan.returncode == 0, plan.stderr
    assert "24 runs" in plan.stdout  # 2 x 3 x 2 configurations, twice each
    # The space's values, run as the search would run one of its configurations.
    ran = iotune("run", "-c", "iotune.yaml", "--cores", "2", "--set", "cb_nodes=2",
                 "--set", "cb_config_list=*:2", "--set", "romio_cb_write=enable",
                 "--format", "json", cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    record = json.loads(ran.stdout)
    assert record["status"] == "ok" and record["kernel"] == "command"
    assert record["result"]["hints_in_effect"]["cb_nodes"] == "2"
    effects = record["result"]["settings_effect"]
    assert {k: v["status"] for k, v in effects.items()} == dict.fromkeys(
        ["cb_nodes", "cb_config_list", "romio_cb_write"], "in_effect")
    # The control: without the space's cb_config_list ROMIO caps the aggregators at 1.
    capped = iotune("run", "-c", "iotune.yaml", "--cores", "2", "--set", "cb_nodes=2",
                    "--set", "romio_cb_write=enable", "--format", "json", "--no-store",
                    cwd=tmp_path)
    assert capped.returncode == 0, capped.stderr
    assert json.loads(capped.stdout)["result"]["hints_in_effect"]["cb_nodes"] == "1"
