"""``iotune doctor`` on this machine, as a user runs it: with MPICH (the test venv), with
Open MPI (its venv and launcher), with mpi4py's binary wheel as PyPI ships it (it cannot
load Debian's MPICH), with mpi4py and the launcher of two different MPIs, and with a
scratch directory it cannot write. Each problem is one line with its fix, the checks that
depend on it are skipped, and nothing else is a problem."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.doctor.machine import Doctor, run_doctor, write_config
from tests.open_mpi import needs_open_mpi

pytestmark = pytest.mark.mpi

REPO = Path(__file__).resolve().parents[2]
OPENMPI_PYTHON = Path(os.environ.get("IOTUNE_OPENMPI_VENV", REPO / ".venv-openmpi")) / \
    "bin" / "python"
EVERY_CHECK = ["launcher", "slurm", "mpi4py", "mpi job", "h5py", "preload", "scratch",
               "mpi-io hints", "mpi-io layer", "store"]
#: Where the venv with mpi4py's binary wheel is kept between test runs (built once).
WHEEL_VENV = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "iotune" / \
    "test-venvs" / "mpi4py-binary-wheel"


def _only_problem(doctor: Doctor, name: str) -> str:
    """The text of ``name``'s problem line, after checking that it is the only problem and
    that the doctor says a tune cannot run."""
    assert list(doctor.lines) == EVERY_CHECK, doctor.stdout
    assert doctor.with_status("problem") == [name], doctor.stdout
    assert doctor.code == 1, doctor.stdout + doctor.stderr
    assert doctor.summary.startswith("iotune doctor: 1 problem to fix"), doctor.summary
    text = doctor.lines[name].text
    assert "; fix: " in text, text
    return text


def _open_mpi_path(tmp_path: Path) -> dict[str, str]:
    """The environment with Open MPI's mpiexec first on PATH, as a module would put it."""
    tools = tmp_path / "openmpi-bin"
    tools.mkdir()
    (tools / "mpiexec").symlink_to(shutil.which("mpiexec.openmpi") or "")
    return {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    path = tmp_path / "scratch"
    path.mkdir()
    return path


@pytest.fixture(scope="session")
def wheel_venv() -> Path:
    """A venv with mpi4py's binary wheel from PyPI, unpatched (what ``pip install mpi4py``
    gives a new user), built once and kept; its python."""
    python = WHEEL_VENV / "bin" / "python"
    if not python.exists():
        WHEEL_VENV.parent.mkdir(parents=True, exist_ok=True)
        building = Path(tempfile.mkdtemp(prefix=".building-", dir=WHEEL_VENV.parent))
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(building)], check=True,
                       timeout=300)
        subprocess.run([str(building / "bin" / "python"), "-m", "pip", "install", "-q",
                        "--only-binary=mpi4py", "mpi4py>=4"], check=True, timeout=600)
        # a venv's python finds its packages by the pyvenv.cfg beside it, wherever it is
        # moved (only the scripts, unused here, name the old place)
        os.replace(building, WHEEL_VENV)
    return python


def test_with_mpich_a_tune_can_run(tmp_path, scratch):
    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl")
    doctor = run_doctor(config)
    assert doctor.code == 0, doctor.stdout + doctor.stderr
    assert list(doctor.lines) == EVERY_CHECK
    assert doctor.with_status("problem") == doctor.with_status("skipped") == []
    assert "starts MPICH" in doctor.lines["launcher"].text
    assert doctor.lines["mpi4py"].text.startswith("loads MPICH")
    assert doctor.lines["mpi job"].text.startswith("2 ranks ran as one world")
    assert "is parallel, on mpi4py's MPI library" in doctor.lines["h5py"].text
    assert doctor.lines["mpi-io hints"].status == "ok"
    assert "cb_buffer_size=8388608, romio_cb_write=enable read back" in \
        doctor.lines["mpi-io hints"].text
    assert f"{scratch} is writable" in doctor.lines["scratch"].text
    assert doctor.summary.startswith("iotune doctor: a tune can run here")


def test_more_ranks(tmp_path, scratch):
    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl")
    doctor = run_doctor(config, "--ranks", "3")
    assert doctor.code == 0, doctor.stdout
    assert doctor.lines["mpi job"].text.startswith("3 ranks ran as one world")
    assert "from a 3-rank open" in doctor.lines["mpi-io hints"].text


@needs_open_mpi
def test_with_open_mpi_the_layer_is_named_and_a_tune_can_run(tmp_path, scratch):
    assert OPENMPI_PYTHON.exists(), "scripts/setup.sh --test makes it where Open MPI is"
    env = _open_mpi_path(tmp_path)
    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl",
                          python=str(OPENMPI_PYTHON))
    doctor = run_doctor(config, env=env)
    assert doctor.code == 0, doctor.stdout + doctor.stderr
    assert doctor.with_status("problem") == doctor.with_status("skipped") == []
    assert "starts Open MPI" in doctor.lines["launcher"].text
    assert doctor.lines["mpi4py"].text.startswith("loads Open MPI")
    assert "libhdf5_openmpi" in doctor.lines["h5py"].text
    assert "Open MPI reads back the hints given" in doctor.lines["mpi-io hints"].text
    layer = doctor.lines["mpi-io layer"]
    assert layer.status == "warning"
    assert layer.text.endswith("fix: set system.mpi_io: romio in iotune.yaml (it selects ROMIO)")

    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl",
                          python=str(OPENMPI_PYTHON), mpi_io="romio")
    doctor = run_doctor(config, env=env)
    assert doctor.code == 0, doctor.stdout
    assert doctor.lines["mpi-io layer"].status == "ok"
    assert "ROMIO selected" in doctor.lines["mpi-io layer"].text


def test_mpi4py_binary_wheel_that_cannot_load_the_mpi(tmp_path, scratch, wheel_venv):
    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl",
                          python=str(wheel_venv))
    doctor = run_doctor(config)
    text = _only_problem(doctor, "mpi4py")
    assert text.startswith(f"{wheel_venv} cannot load it: ImportError: libmpi.so.12"), text
    assert "fix: scripts/setup.sh" in text and "--no-binary=mpi4py" in text
    assert doctor.lines["mpi job"].status == doctor.lines["h5py"].status == "skipped"
    assert doctor.lines["mpi job"].text == "needs mpi4py"
    assert doctor.lines["mpi-io hints"].text == "needs mpi job"


@needs_open_mpi
def test_mpi4py_of_another_mpi_than_the_launcher(tmp_path, scratch):
    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl")
    doctor = run_doctor(config, env=_open_mpi_path(tmp_path))
    text = _only_problem(doctor, "mpi4py")
    assert text.startswith("loads MPICH 4"), text
    assert "but mpiexec starts Open MPI 4" in text
    assert "fix: put the mpiexec of MPICH" in text
    assert doctor.lines["mpi job"].text == "needs mpi4py"


def test_scratch_it_cannot_write(tmp_path, scratch):
    # Root ignores permission bits: an immutable directory is one even root cannot write.
    locked = ["chattr", "+i", str(scratch)] if os.geteuid() == 0 else None
    if locked:
        subprocess.run(locked, check=True, timeout=30)
    else:
        scratch.chmod(0o555)
    try:
        config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl")
        doctor = run_doctor(config)
    finally:
        if locked:
            subprocess.run(["chattr", "-i", str(scratch)], check=True, timeout=30)
        scratch.chmod(0o755)
    text = _only_problem(doctor, "scratch")
    assert text.startswith(f"system.scratch: {scratch} is not writable by this user"), text
    assert "fix: make it a directory this user can write" in text
    assert doctor.lines["mpi-io hints"].status == "skipped"
    assert doctor.lines["mpi-io hints"].text == "needs scratch"
    assert doctor.lines["mpi job"].status == "ok"
