"""What a kernel process imports: no h5py and no numpy in a write-only POSIX or MPI-IO run,
nothing heavy, few iotune modules. Read from ``python -X importtime`` of a real 2-rank run,
not from timings."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from kernel_helpers import KERNELS, Run, mpiexec, run_program

from tests.importtime import imported_modules

#: Modules a kernel run must not load unless its api needs them. numpy is here too: a
#: write-only POSIX or MPI-IO run of ior makes its data without it (about 0.05 s of start-up
#: per process on an idle machine, more with two ranks importing it at once on two cores).
HEAVY = ("numpy", "h5py", "pandas", "scipy", "sklearn", "matplotlib", "yaml", "pyarrow")
#: The iotune modules the kit needs: the settings catalogue, the kernels' arguments and the
#: run-directory rules.
IOTUNE_NEEDED = {
    "iotune", "iotune.kernel_args", "iotune.errors",
    "iotune.settings", "iotune.settings.bounds", "iotune.settings.catalogue",
    "iotune.settings.units", "iotune.settings.numbers",
    "iotune.settings.in_effect",
    "iotune.execution", "iotune.execution.rundirs", "iotune.execution.scratch",
}  # fmt: skip


def ior_run(scratch: Path, api: str, *extra: str) -> Run:
    pattern = ["--block-size", "256K", "--transfer-size", "64K"]
    argv = mpiexec(2, "-X", "importtime", str(KERNELS / "ior.py"), "--api", api, *pattern,
                   "--scratch", str(scratch), *extra)  # fmt: skip
    run = run_program(argv)
    assert run.returncode == 0, run.stderr
    assert run.result()["bytes_written"] == 2 * 256 * 1024
    return run


@pytest.mark.parametrize(("api", "collective", "fpp"), [
    ("mpiio", "yes", "no"), ("mpiio", "no", "yes"), ("posix", "no", "no"),
])  # fmt: skip
def test_a_posix_or_mpiio_write_loads_no_numpy_no_h5py_and_nothing_heavy(
    scratch: Path, api: str, collective: str, fpp: str
) -> None:
    run = ior_run(scratch, api, "--collective", collective, "--file-per-process", fpp)
    modules = imported_modules(run.stderr)
    assert "mpi4py.MPI" in modules  # the parse sees the run's own imports
    loaded = sorted(name for name in modules if name.split(".")[0] in HEAVY)
    assert loaded == []


def test_an_hdf5_run_does_load_h5py_and_numpy(scratch: Path) -> None:
    # The same check on a run that needs them: the test above can fail.
    modules = imported_modules(ior_run(scratch, "hdf5").stderr)
    assert {"h5py", "numpy"} <= modules


def test_a_checked_read_loads_numpy_only_then(scratch: Path) -> None:
    # The read-back check (kit.readback) still uses numpy, imported when a read runs.
    run = ior_run(scratch, "posix", "--access", "both")
    assert run.result()["read_check"]["ok"]
    modules = imported_modules(run.stderr)
    assert "numpy" in modules and "h5py" not in modules


def test_a_kernel_run_loads_only_the_iotune_modules_it_needs(scratch: Path) -> None:
    modules = imported_modules(ior_run(scratch, "mpiio").stderr)
    iotune = {name for name in modules if name.split(".")[0] == "iotune"}
    assert iotune <= IOTUNE_NEEDED, sorted(iotune - IOTUNE_NEEDED)
    # The package version (importlib.metadata, tens of milliseconds) is read only on use.
    assert "importlib.metadata" not in modules


def test_importing_the_hdf5_layer_does_not_load_h5py_or_ctypes() -> None:
    code = (
        "import sys; sys.path.insert(0, sys.argv[1]); from kit import hdf5, harness; "
        "print(sorted(m for m in ('h5py', 'ctypes', 'mpi4py') if m in sys.modules))"
    )
    run = run_program([sys.executable, "-c", code, str(KERNELS)])
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
