"""The doctor's parts without MPI: reading MPI names and versions, the order and skipping
of checks, the line format, and the checks of the file system and the store on made-up
mounts, a stand-in ``lfs`` and damaged stores."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from iotune.doctor.checks import scratch as scratch_check
from iotune.doctor.checks import store as store_check
from iotune.doctor.context import DoctorContext
from iotune.doctor.mpi_identity import MpiIdentity, identify, same_mpi
from iotune.doctor.registry import OK, PROBLEM, SKIPPED, WARNING, Finding, registered_checks
from iotune.doctor.run import Result, can_tune, format_result, run_checks, summary
from iotune.execution.launchers import MpiexecLauncher

HYDRA = """HYDRA build details:
    Version:                                 4.0.2
    Release Date:                            Thu Apr  7 12:34:45 CDT 2022
"""


@pytest.mark.parametrize(("text", "family", "version"), [
    (HYDRA, "MPICH", "4.0.2"),
    ("MPICH Version: 4.0.2", "MPICH", "4.0.2"),
    ("mpiexec.openmpi (OpenRTE) 4.1.4\n\nReport bugs to http://www.open-mpi.org/", "Open MPI",
     "4.1.4"),
    ("Open MPI v4.1.4, package: Debian OpenMPI, ident: 4.1.4, repo rev: v4.1.4", "Open MPI",
     "4.1.4"),
    ("mpiexec (Open MPI) 5.0.3", "Open MPI", "5.0.3"),
    ("MVAPICH2 Version      :\t2.3.7", "MVAPICH", "2.3.7"),
    ("Intel(R) MPI Library 2021.10 for Linux* OS", "Intel MPI", "2021.10"),
    ("something else", "unknown", ""),
])
def test_identify(text, family, version):
    assert identify(text) == MpiIdentity(family, version)


def test_same_mpi_needs_the_family_and_any_version_given():
    assert same_mpi(MpiIdentity("MPICH", "4.0.2"), MpiIdentity("MPICH", "4.0.2"))
    assert same_mpi(MpiIdentity("MPICH", ""), MpiIdentity("MPICH", "4.0.2"))
    assert not same_mpi(MpiIdentity("MPICH", "4.0.2"), MpiIdentity("MPICH", "4.1.0"))
    assert not same_mpi(MpiIdentity("MPICH", "4.0.2"), MpiIdentity("Open MPI", "4.0.2"))


def test_checks_run_in_order_each_after_those_it_needs():
    checks = registered_checks()
    names = [c.name for c in checks]
    assert names == ["launcher", "slurm", "mpi4py", "mpi job", "h5py", "preload", "scratch",
                     "mpi-io hints", "mpi-io layer", "store"]
    for i, check in enumerate(checks):
        assert set(check.needs) <= set(names[:i]), check


def _context(tmp_path: Path, **kwargs) -> DoctorContext:
    defaults = {"python": sys.executable, "launcher": MpiexecLauncher("mpich", False),
                "launcher_name": "mpiexec", "ranks": 2, "scratch": tmp_path,
                "store": tmp_path / "store.jsonl"}
    return DoctorContext(**{**defaults, **kwargs})


def test_a_check_is_skipped_when_one_it_needs_found_a_problem(tmp_path, monkeypatch):
    from iotune.doctor import registry

    ran = []

    def finding(name, status):
        def run(context):
            ran.append(name)
            return Finding(status, f"{name} seen", "do this" if status != OK else "")
        return run

    monkeypatch.setattr(registry, "_REGISTRY", {})
    registry.register_check("a")(finding("a", PROBLEM))
    registry.register_check("b", needs=("a",))(finding("b", OK))
    registry.register_check("c", needs=("b",))(finding("c", OK))
    registry.register_check("d")(finding("d", WARNING))
    with pytest.raises(ValueError, match="not registered before it"):
        registry.register_check("e", needs=("z",))(finding("e", OK))
    results = run_checks(_context(tmp_path))
    assert ran == ["a", "d"]
    assert [(r.name, r.finding.status, r.finding.detail) for r in results] == [
        ("a", PROBLEM, "a seen"), ("b", SKIPPED, "needs a"), ("c", SKIPPED, "needs b"),
        ("d", WARNING, "d seen")]
    assert not can_tune(results)
    assert summary(results) == "iotune doctor: 1 problem to fix before a tune can run " \
                               "(1 warning)"
    assert format_result(results[0]) == "problem  a             a seen; fix: do this"
    assert can_tune(results[1:])
    assert summary(results[3:]) == "iotune doctor: a tune can run here (1 warning)"


def test_a_line_stays_one_line():
    line = format_result(Result("store", Finding(PROBLEM, "a\nb", "c")))
    assert "\n" not in line and line.endswith("a\\nb; fix: c")


def _mounts(tmp_path: Path, fstype: str) -> str:
    mounts = tmp_path / "mounts"
    mounts.write_text(f"/dev/root / ext4 rw 0 0\nfs {tmp_path} {fstype} rw 0 0\n")
    return str(mounts)


LFS_OSTS = ("#!/bin/sh\necho 'OBDS:'\necho '0: lustre-OST0000_UUID ACTIVE'\n"
            "echo '1: lustre-OST0001_UUID ACTIVE'\necho '2: lustre-OST0002_UUID ACTIVE'\n")


def _lfs(tmp_path: Path, body: str) -> dict[str, str]:
    tools = tmp_path / "tools"
    tools.mkdir(exist_ok=True)
    lfs = tools / "lfs"
    lfs.write_text(body)
    lfs.chmod(0o755)
    return {"PATH": str(tools)}


def test_scratch_on_lustre_counts_the_osts_and_compares_the_config(tmp_path):
    env = _lfs(tmp_path, LFS_OSTS)
    mounts = _mounts(tmp_path, "lustre")
    unset = scratch_check.check(_context(tmp_path, env=env, mounts=mounts))
    assert unset.status == WARNING
    assert unset.detail.startswith(f"{tmp_path} is writable, on Lustre ({tmp_path}, 3 OSTs)")
    assert unset.fix == "set system.ost_count: 3 in iotune.yaml"
    other = scratch_check.check(_context(tmp_path, env=env, mounts=mounts, ost_count=156))
    assert (other.status, other.fix) == (WARNING, "set system.ost_count: 3 in iotune.yaml")
    assert other.detail.endswith("but system.ost_count is 156")
    same = scratch_check.check(_context(tmp_path, env=env, mounts=mounts, ost_count=3))
    assert same == Finding(OK, f"{tmp_path} is writable, on Lustre ({tmp_path}, 3 OSTs)")


def test_scratch_on_lustre_without_lfs_or_its_answer(tmp_path):
    mounts = _mounts(tmp_path, "lustre")
    empty = tmp_path / "empty"
    empty.mkdir()
    missing = scratch_check.check(_context(tmp_path, env={"PATH": str(empty)}, mounts=mounts))
    assert missing.status == WARNING and "lfs is not on PATH" in missing.detail
    assert missing.fix == "load the Lustre client tools (lfs)"
    broken = _lfs(tmp_path, "#!/bin/sh\necho 'lfs: cannot reach the MDS' >&2\nexit 1\n")
    silent = scratch_check.check(_context(tmp_path, env=broken, mounts=mounts))
    assert silent.status == WARNING and "listed no OST" in silent.detail


def test_scratch_on_gpfs_and_local_disks_has_no_striping(tmp_path):
    gpfs = scratch_check.check(_context(tmp_path, mounts=_mounts(tmp_path, "gpfs")))
    assert gpfs.status == OK and f"on GPFS ({tmp_path}): striping does not apply" in gpfs.detail
    local = scratch_check.check(_context(tmp_path, mounts=_mounts(tmp_path, "xfs")))
    assert local.status == OK and "on xfs" in local.detail


def test_scratch_that_is_missing_is_a_problem(tmp_path):
    found = scratch_check.check(_context(tmp_path, scratch=tmp_path / "nowhere"))
    assert found.status == PROBLEM
    assert found.detail.startswith(f"system.scratch: {tmp_path / 'nowhere'} does not exist")


def _record(tmp_path: Path) -> Path:
    store = tmp_path / "store.jsonl"
    done = subprocess.run([sys.executable, "-m", "iotune", "run", "--backend", "sim",
                           "--system", "hopper", "--cores", "128", "--store", str(store)],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path,
                          check=False)
    assert done.returncode == 0, done.stderr
    return store


def test_store_clean_damaged_and_missing(tmp_path):
    store = _record(tmp_path)
    clean = store_check.check(_context(tmp_path, store=store))
    assert clean == Finding(OK, f"{store}: 1 records, clean, writable")
    before = store.read_bytes()
    with store.open("ab") as f:
        f.write(b"not json\n")
    damaged = store_check.check(_context(tmp_path, store=store))
    assert damaged.status == PROBLEM and "1 damaged line" in damaged.detail
    assert damaged.fix == (f"iotune store check --store {store} --repair moves the bad lines "
                           "to a side file")
    assert store.read_bytes() == before + b"not json\n"  # checking changed nothing
    fresh = store_check.check(_context(tmp_path, store=tmp_path / "new" / "s.jsonl"))
    assert fresh == Finding(OK, f"{tmp_path / 'new' / 's.jsonl'} does not exist yet; its "
                                "directory is writable")
    assert not (tmp_path / "new").exists()


def test_store_that_cannot_be_written(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    found = store_check.check(_context(tmp_path, store=blocker / "s.jsonl"))
    assert found.status == PROBLEM
    assert found.detail.startswith(f"{blocker / 's.jsonl'} cannot be written: {blocker} is "
                                   "not a directory")
    assert found.fix.startswith("make it writable, or name another store")
