"""mpi4py in each venv of scripts/setup.sh is the system's MPI: MPI.Get_library_version()
is what a C program built with that MPI's compiler reports, and two ranks started by that
MPI's mpiexec form one world of size 2.

Holds whether setup took mpi4py's binary wheel (which loads the MPI library at run time)
or built it: .venv against MPICH (the test's own interpreter), .venv-openmpi against
Open MPI where Open MPI is installed beside MPICH. Each runs in a subprocess: the test
process never imports mpi4py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.open_mpi import ROOT_OK

REPO = Path(__file__).resolve().parents[2]
OPENMPI_PYTHON = Path(os.environ.get("IOTUNE_OPENMPI_VENV", REPO / ".venv-openmpi")) / \
    "bin" / "python"
PROGRAM = r"""
#include <mpi.h>
#include <stdio.h>
int main(void) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int n;
  MPI_Get_library_version(version, &n);
  fputs(version, stdout);
  return 0;
}
"""
#: Rank 0 alone prints (two ranks printing interleave their lines): the world's size,
#: the ranks gathered and the sum of rank + 1 over them.
WORLD = ("from mpi4py import MPI; c = MPI.COMM_WORLD; ranks = c.gather(c.Get_rank()); "
         "total = c.allreduce(c.Get_rank() + 1); "
         "c.Get_rank() == 0 and print(c.Get_size(), ranks, total)")

pytestmark = pytest.mark.mpi


def _first_line(text: str) -> str:
    # Open MPI counts the string's terminating NUL in its length, so mpi4py returns it.
    return text.replace("\0", "").strip().splitlines()[0].rstrip()


def _library_version_of_c(compiler: str, tmp_path: Path) -> str:
    source, program = tmp_path / "version.c", tmp_path / "version"
    source.write_text(PROGRAM)
    subprocess.run([compiler, "-o", str(program), str(source)], check=True, timeout=120)
    done = subprocess.run([str(program)], capture_output=True, text=True, check=True,
                          timeout=60, env={**os.environ, **ROOT_OK})
    return _first_line(done.stdout)


def _check(python: str, compiler: str, mpiexec: str, name: str, tmp_path: Path) -> None:
    env = {**os.environ, **ROOT_OK}
    reported = subprocess.run(
        [python, "-c", "from mpi4py import MPI; print(MPI.Get_library_version())"],
        capture_output=True, text=True, timeout=60, env=env, check=False)
    assert reported.returncode == 0, reported.stderr[-2000:]
    assert name in _first_line(reported.stdout)
    assert _first_line(reported.stdout) == _library_version_of_c(compiler, tmp_path)
    world = subprocess.run([mpiexec, "-n", "2", python, "-c", WORLD], capture_output=True,
                           text=True, timeout=120, env=env, check=False)
    assert world.returncode == 0, world.stderr[-2000:]
    assert world.stdout.strip() == "2 [0, 1] 3"


@pytest.mark.skipif(not all(shutil.which(t) for t in ("mpicc.mpich", "mpiexec.mpich")),
                    reason="Debian's MPICH is not installed")
def test_mpi4py_of_the_venv_is_mpich(tmp_path):
    _check(sys.executable, "mpicc.mpich", "mpiexec.mpich", "MPICH", tmp_path)


@pytest.mark.skipif(not all(shutil.which(t) for t in ("mpicc.openmpi", "mpiexec.openmpi")),
                    reason="Open MPI is not installed beside MPICH (setup.sh --test installs it)")
def test_mpi4py_of_the_open_mpi_venv_is_open_mpi(tmp_path):
    if not OPENMPI_PYTHON.exists():
        pytest.fail(f"{OPENMPI_PYTHON} missing: scripts/setup.sh --test makes it where "
                    "Open MPI is installed")
    _check(str(OPENMPI_PYTHON), "mpicc.openmpi", "mpiexec.openmpi", "Open MPI", tmp_path)
