"""A failed run's environment failures told apart from its configuration's, on the
messages real launchers, loaders and Python print (recorded from runs on this machine)."""

from __future__ import annotations

import pytest

from iotune.execution.failures import (
    CHECK_COMMAND,
    CHECK_ENVIRONMENT,
    environment_failure,
    environment_failure_of,
)

HYDRA = ("[proxy:0:0@vm] HYDU_create_process (utils/launch/launch.c:73): execvp error on "
         "file ./no_such_program (No such file or directory)")
MPI4PY_TAIL = ("  File \"mpi4py/_mpiabi.py\", line 210, in _dlopen_libmpi\n"
               "    raise RuntimeError(\"\\n\".join(errors))\n"
               "RuntimeError: cannot load MPI library\n"
               "libmpi.so.12: cannot open shared object file: No such file or directory\n")


@pytest.mark.parametrize(("error", "tail", "what", "fix"), [
    ("exit code 1: libmpi.so.12: cannot open shared object file: No such file or directory",
     MPI4PY_TAIL, "a library cannot load", CHECK_ENVIRONMENT),
    ("exit code 127: ./app: error while loading shared libraries: libhdf5.so.103: cannot "
     "open shared object file: No such file or directory", "", "a library cannot load",
     CHECK_ENVIRONMENT),
    ("exit code 1: ModuleNotFoundError: No module named 'numpy'", "",
     "a Python module cannot load", CHECK_ENVIRONMENT),
    (f"exit code 255: {HYDRA}", HYDRA, "the program cannot start", CHECK_COMMAND),
    ("exit code 2: python3: can't open file '/tmp/x/app.py': [Errno 2] No such file or "
     "directory", "", "a file the command names is missing", CHECK_COMMAND),
    ("exit code 127: sh: 1: my_app: not found", "", "the program cannot start",
     CHECK_COMMAND),
    ("cannot start mpiexec: No such file or directory", "", "the launcher cannot start",
     "check system.launcher and that it is on PATH"),
])
def test_an_environment_failure_is_named_with_its_fix(error, tail, what, fix):
    failure = environment_failure(error, tail)
    assert failure is not None
    assert (failure.what, failure.fix, failure.line) == (what, fix, error)
    assert failure.text() == f"{error} ({what}; {fix})"


def test_a_launchers_last_line_does_not_hide_the_programs_message():
    # Open MPI's mpirun prints its own summary after the program's ImportError.
    failure = environment_failure(
        "exit code 1: mpirun detected that one or more processes exited with non-zero status",
        "ImportError: libmpi.so.40: file too short\n--------\nmpirun detected that one or "
        "more processes exited with non-zero status\n")
    assert failure is not None and failure.what == "a library cannot load"
    assert failure.line == "ImportError: libmpi.so.40: file too short"


@pytest.mark.parametrize("error", [
    "timed out after 120 s",
    "exit code 1: MPI_File_open: Invalid argument, error stack: cb_nodes out of range",
    "exit code 3: write failed: No space left on device",
    "no JSON result object on stdout",
])
def test_a_configurations_own_failure_is_not_the_environments(error):
    assert environment_failure(error, "") is None


def test_only_a_failed_record_has_an_environment_failure():
    error = "exit code 1: ModuleNotFoundError: No module named 'h5py'"
    assert environment_failure_of({"status": "failed", "error": error}) is not None
    assert environment_failure_of({"status": "interrupted", "error": error}) is None
    assert environment_failure_of({"status": "ok"}) is None
