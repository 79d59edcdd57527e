"""The job script from --emit-sbatch, submitted to a real Slurm, fills the store via srun."""

from __future__ import annotations

import subprocess
import sys

import pytest

from iotune.config import load_config
from iotune.store import Store
from iotune.train import plan_campaign
from tests.slurm.submitted import run_to_end

pytestmark = [pytest.mark.slurm, pytest.mark.mpi]


def test_emitted_job_script_runs_the_campaign(slurm, write_config, tmp_path):
    config_path = write_config({
        "kernel": {"name": "vpic", "args": {"particles_per_rank": 8192, "timesteps": 1}},
        "space": {"romio_cb_write": ["enable", "disable"]},
        "train": {"repetitions": 1, "scales": [{"cores": 2, "design": "full"}]},
    })
    env = {**slurm, "PATH": f"{sys.prefix}/bin:{slurm['PATH']}"}
    script = tmp_path / "train.sbatch"
    subprocess.run([sys.executable, "-m", "iotune", "train", "-c", str(config_path),
                    "--emit-sbatch", str(script)], env=env, check=True, cwd=tmp_path)
    text = script.read_text()
    assert "#SBATCH --ntasks=2" in text and "#SBATCH --nodes=1" in text

    job, state = run_to_end(script, env)
    log = "".join(p.read_text() for p in tmp_path.glob("iotune-train-*.out"))
    assert state == "COMPLETED", f"job {job} ended {state or 'not at all'}:\n{log}"

    planned = {t.ident for p in plan_campaign(load_config(config_path)) for t in p.tasks}
    records = Store(tmp_path / "store.jsonl").records()
    assert {(r["config_key"], r["rep"]) for r in records} == planned
    assert records and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert all(r["command"][:3] == ["srun", "-n", "2"] for r in records)
    assert "inside a Slurm allocation: launching with srun" in log
