"""The job script from ``tune --emit-sbatch``, submitted to a real Slurm, runs the tune and
writes the tuned file (simulated runs: the test is about the script, not the machine)."""

from __future__ import annotations

import subprocess
import sys

import pytest
import yaml

from tests.slurm.submitted import run_to_end

pytestmark = [pytest.mark.slurm]


def test_emitted_tune_script_runs_the_tune_in_an_allocation(slurm, tmp_path):
    env = {**slurm, "PATH": f"{sys.prefix}/bin:{slurm['PATH']}"}
    script = tmp_path / "tune.sbatch"
    subprocess.run([sys.executable, "-m", "iotune", "tune", "--backend", "sim", "--system",
                    "hopper", "--cores", "2", "--budget", "4", "-o", "tuned.yaml",
                    "--emit-sbatch", str(script), "--partition", "debug", "--time", "10"],
                   env=env, check=True, cwd=tmp_path)
    text = script.read_text()
    assert "#SBATCH --ntasks=2" in text and "#SBATCH --partition=debug" in text

    job, state = run_to_end(script, env)
    log = "".join(p.read_text() for p in tmp_path.glob("iotune-tune-*.out"))
    assert state == "COMPLETED", f"job {job} ended {state or 'not at all'}:\n{log}"
    tuned = yaml.safe_load((tmp_path / "tuned.yaml").read_text())
    assert tuned["cores"] == 2 and tuned["provenance"] == "simulated"
    assert "tune took" in log
