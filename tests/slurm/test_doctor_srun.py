"""``iotune doctor --launcher srun`` against a real single-node Slurm: srun starts the
test jobs, and a tune can run."""

from __future__ import annotations

import sys

import pytest

from tests.doctor.machine import run_doctor, write_config

pytestmark = [pytest.mark.slurm, pytest.mark.mpi]


def test_doctor_with_srun(slurm, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl")
    env = {**slurm, "PATH": f"{sys.prefix}/bin:{slurm['PATH']}"}
    doctor = run_doctor(config, "--launcher", "srun", env=env, cwd=tmp_path)
    assert doctor.code == 0, doctor.stdout + doctor.stderr
    assert doctor.with_status("problem") == doctor.with_status("skipped") == []
    assert doctor.lines["launcher"].text.startswith("srun (")
    assert doctor.lines["slurm"].status == "ok"
    assert doctor.lines["slurm"].text.endswith("outside an allocation")
    assert doctor.lines["mpi job"].text.startswith("2 ranks ran as one world under srun")
    assert "read back from a 2-rank open" in doctor.lines["mpi-io hints"].text
