"""Why a run failed: because of its environment, or (as far as iotune can tell) its settings.

A failed run is recorded as data (:mod:`iotune.execution.runner`: ``status`` ``failed``, a
one-line ``error`` and the end of the program's standard error as ``stderr_tail``). Most
failures are a fact about the configuration measured (a hint the MPI library refuses, a
run over its time limit) and count as its answer. Some say nothing about any
configuration: the launcher or program cannot start, a library or Python module cannot
load, a file the command names is missing. Every run in that environment fails the same
way, so a tune stops after the default's first runs (:func:`iotune.tune.run.tune`) and
``train`` after a worker's first run (:mod:`iotune.train.run`), each with the error and
its fix in one line, instead of spending the budget on runs that cannot work; and such a
failure is never reused as a configuration's answer.

:func:`environment_failure` recognises them by the messages the launchers, the dynamic
loader and Python print (:data:`ENVIRONMENT_FAILURES`); a failure it does not recognise
counts as the configuration's, as every failure did before.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

#: The fix of a failure to load a library or module: the environment's MPI and Python.
CHECK_ENVIRONMENT = ("run `iotune doctor` to check the environment, and which MPI library "
                     "and Python the runs use: system.python, system.env")
#: The fix of a program or file that cannot be found or started.
CHECK_COMMAND = ("check that the command's program exists and can run; a relative path "
                 "is taken from the config's directory")


@dataclass(frozen=True)
class EnvironmentFailure:
    """A failure no configuration causes: ``what`` went wrong in words, ``line`` the run's
    own message naming it, and ``fix`` what to check."""

    what: str
    line: str
    fix: str

    def text(self) -> str:
        """``line (what; fix)``: the failure in one line."""
        return f"{self.line} ({self.what}; {self.fix})"


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    what: str
    fix: str


def _rule(pattern: str, what: str, fix: str) -> _Rule:
    return _Rule(re.compile(pattern), what, fix)


#: The messages that mark a failure of the environment, each with what it means and its
#: fix, tried in order against the run's error line, then each line of its standard
#: error's end (a launcher may print its own last line after the program's).
ENVIRONMENT_FAILURES = (
    # The dynamic loader, for a program or a Python extension (mpi4py's MPI module built
    # for another MPI: "libmpi.so.12: cannot open shared object file"), and mpi4py's own
    # "cannot load MPI library".
    _rule(r"cannot open shared object file|error while loading shared libraries|"
          r"\.so[.0-9]*: (file too short|invalid ELF header|wrong ELF class)|"
          r"cannot load MPI library|undefined symbol: \w*MPI",
          "a library cannot load", CHECK_ENVIRONMENT),
    # Python: a module the kernel or program imports is not installed for the Python used.
    _rule(r"\b(ModuleNotFoundError|ImportError)\b", "a Python module cannot load",
          CHECK_ENVIRONMENT),
    # runner.run_command when the launcher itself cannot start (OSError from exec).
    _rule(r"^cannot start ", "the launcher cannot start",
          "check system.launcher and that it is on PATH"),
    # MPICH's Hydra, Open MPI's mpirun and Slurm's srun when the program cannot be executed.
    _rule(r"execvp error on file|was unable to find the specified executable|"
          r"was unable to launch the specified application|execve\(\): .*: "
          r"(No such file or directory|Permission denied)|command not found",
          "the program cannot start", CHECK_COMMAND),
    # Python given a script that is not there.
    _rule(r"can't open file .*No such file or directory", "a file the command names is "
          "missing", CHECK_COMMAND),
    # A shell's exit codes for "not found" and "not executable".
    _rule(r"^exit code 12[67]:", "the program cannot start", CHECK_COMMAND),
)


def environment_failure(error: str | None, stderr_tail: str = "") -> EnvironmentFailure | None:
    """The environment failure ``error`` (a failed run's one-line error) and
    ``stderr_tail`` (the end of its standard error) show, or None: the failure is taken
    as the configuration's."""
    if not error:
        return None
    lines = [error] + [line.strip() for line in stderr_tail.splitlines() if line.strip()]
    for rule in ENVIRONMENT_FAILURES:
        for line in lines:
            if rule.pattern.search(line):
                return EnvironmentFailure(rule.what, _message(error, line), rule.fix)
    return None


def environment_failure_of(record: Mapping[str, Any]) -> EnvironmentFailure | None:
    """:func:`environment_failure` of a stored run record; None unless it failed."""
    if record.get("status") != "failed":
        return None
    return environment_failure(str(record.get("error") or ""),
                               str(record.get("stderr_tail") or ""))


def _message(error: str, line: str) -> str:
    """The words to show: the error line when it holds the matching message, else the
    matching line of standard error, at most 300 characters."""
    return (error if line == error or line in error else line)[:300]
