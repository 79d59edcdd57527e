"""A production job under Open MPI: ``job start`` prints lines that select Open MPI's ROMIO
layer for the program (its OMPIO ignores hints) and load a preload library built against
Open MPI (one built against MPICH crashes an Open MPI program at its first MPI_Info call).

Needs Open MPI beside MPICH (scripts/setup.sh --test installs it as root)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.open_mpi import ROOT_OK, needs_open_mpi

pytestmark = [pytest.mark.mpi, needs_open_mpi]

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "tests" / "apply" / "programs" / "show_hints.c"
#: The job script of docs/production.md, with the program's hints and the launch's
#: Open MPI I/O layer printed.
JOB = """set -euo pipefail
eval "$(iotune job start --store prod.jsonl --tag app --candidate cand.yaml)"
iotune_run mpiexec -n 2 ./show_hints out.dat
iotune_run env | grep '^OMPI_MCA_io=' || true
iotune job finish --store prod.jsonl --tag app --seconds 1
"""


def test_a_challenger_job_under_open_mpi_runs_with_its_hints_in_romio(tmp_path: Path):
    done = subprocess.run(["mpicc.openmpi", "-O2", "-o", str(tmp_path / "show_hints"),
                           str(PROGRAM)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    (tmp_path / "cand.yaml").write_text(
        "settings: {romio_cb_write: disable, cb_buffer_size: 4MiB}\n")
    tools = tmp_path / "bin"  # mpiexec is Open MPI's for these jobs, as a module load does
    tools.mkdir()
    (tools / "mpiexec").symlink_to(shutil.which("mpiexec.openmpi") or "")
    env = {**os.environ, **ROOT_OK, "PATH": f"{tools}:{Path(sys.executable).parent}:"
           f"{os.environ['PATH']}"}
    outputs = []
    for job in range(4):  # three baseline jobs of the default, then the challenger
        ran = subprocess.run(["bash", "-c", JOB], cwd=tmp_path, capture_output=True,
                             text=True, timeout=300, env={**env, "SLURM_JOB_ID": str(job)})
        assert ran.returncode == 0, ran.stderr
        outputs.append(ran.stdout)
    assert all("hint romio_cb_write" not in out for out in outputs[:3])
    challenger = outputs[3].splitlines()
    assert "hint romio_cb_write=disable" in challenger
    assert "hint cb_buffer_size=4194304" in challenger
    assert "OMPI_MCA_io=^ompio" in challenger
    assert "OMPI_MCA_io=^ompio" not in outputs[0]  # the default job runs as it is
