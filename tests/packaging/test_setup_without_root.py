"""scripts/setup.sh as a user without root, on a machine where MPI and parallel HDF5 are
present: it uses them, never calls apt-get or sudo, and leaves a venv whose h5py is parallel
and whose iotune runs a real kernel.

Runs as root (to create the unprivileged user), in a copy of the working tree. mpi4py and
h5py come from the wheel cache the root setup filled (``~/.cache/iotune/wheels``), copied
for the user, so no MPI build happens here unless that cache is empty.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
USER = "iotune-nonroot"
TIMEOUT_S = 900

pytestmark = [
    pytest.mark.mpi,
    pytest.mark.slow,  # a venv installed from nothing: over a minute
    pytest.mark.skipif(os.geteuid() != 0, reason="creating an unprivileged user needs root"),
    pytest.mark.skipif(shutil.which("runuser") is None, reason="runuser (util-linux) missing"),
]


def _user() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", USER], check=True,
                       capture_output=True, timeout=60)
        return pwd.getpwnam(USER)


def _copy_tree(target: Path) -> None:
    """The working tree's tracked files (what a fresh clone of it would hold)."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True,
                            check=True, timeout=60).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)


def _chown(path: Path, user: pwd.struct_passwd) -> None:
    subprocess.run(["chown", "-R", f"{user.pw_uid}:{user.pw_gid}", str(path)], check=True,
                   timeout=60)


@pytest.fixture
def user_dir():
    """A directory the unprivileged user can reach (pytest's own is root's alone)."""
    path = Path(tempfile.mkdtemp(prefix="iotune-nonroot-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_setup_uses_the_mpi_present_and_needs_no_root(user_dir):
    user = _user()
    home = user_dir / "home"
    clone = home / "iotune"
    clone.mkdir(parents=True)
    _copy_tree(clone)
    wheels = home / "wheels"
    cached = Path.home() / ".cache" / "iotune" / "wheels"
    if cached.is_dir():
        shutil.copytree(cached, wheels)
    # apt-get and sudo that leave a trace and fail: setup must not need them.
    fake = home / "bin"
    fake.mkdir()
    for tool in ("apt-get", "sudo"):
        (fake / tool).write_text(f"#!/bin/sh\necho {tool} >> {home}/called\nexit 1\n")
        (fake / tool).chmod(0o755)
    _chown(user_dir, user)
    user_dir.chmod(0o755)
    env = {"HOME": str(home), "PATH": f"{fake}:/usr/local/bin:/usr/bin:/bin",
           "IOTUNE_WHEELHOUSE": str(wheels), "LANG": "C.UTF-8"}

    def as_user(*command: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["runuser", "-u", USER, "--", "env", "-i",
                               *(f"{k}={v}" for k, v in env.items()), *command], cwd=clone,
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=False)

    done = as_user("bash", "scripts/setup.sh")
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (home / "called").exists(), (home / "called").read_text()
    assert "setup: system packages: present; MPI compiler " in done.stderr
    assert "setup: ready: .venv" in done.stderr
    check = as_user(".venv/bin/python", "-c",
                    "import h5py, mpi4py.MPI as M; assert h5py.get_config().mpi; "
                    "print(M.Get_library_version().splitlines()[0])")
    assert check.returncode == 0, check.stderr
    assert "MPICH" in check.stdout
    run = as_user(".venv/bin/iotune", "run", "--kernel", "vpic", "--cores", "2",
                  "--arg", "particles_per_rank=4096", "--no-store", "--format", "json")
    assert run.returncode == 0, run.stderr[-3000:]
    assert '"status": "ok"' in run.stdout
    again = as_user("bash", "scripts/setup.sh")  # idempotent, and nothing to build
    assert again.returncode == 0, again.stderr[-3000:]
    steps = [line for line in again.stderr.splitlines()
             if line.startswith("setup: ") and not line.startswith("setup: ready")]
    assert steps and all(": present" in line or "preload library" in line for line in steps), \
        again.stderr
