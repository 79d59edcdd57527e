"""Helpers for running the kernels as real MPI programs (used by conftest and tests)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
KERNELS = REPO / "kernels"
MPIEXEC_TIMEOUT_S = 120


@dataclass
class Run:
    """A finished kernel run."""

    argv: list[str]
    returncode: int
    stdout: str
    stderr: str

    def result(self) -> dict[str, Any]:
        """The one JSON object on stdout (asserts that stdout holds exactly one line)."""
        lines = self.stdout.splitlines()
        assert len(lines) == 1, f"expected one line on stdout, got {self.stdout!r}\n{self.stderr}"
        return json.loads(lines[0])


def kernel_env() -> dict[str, str]:
    """The environment for kernel runs: no ROMIO_HINTS from the caller."""
    env = dict(os.environ)
    env.pop("ROMIO_HINTS", None)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def run_program(argv: Sequence[str]) -> Run:
    """Run ``argv`` with a timeout and capture its output."""
    done = subprocess.run(
        list(argv),
        capture_output=True,
        text=True,
        env=kernel_env(),
        timeout=MPIEXEC_TIMEOUT_S,
        check=False,
    )
    return Run(list(argv), done.returncode, done.stdout, done.stderr)


def mpiexec(ranks: int, *program: str) -> list[str]:
    """argv that runs ``program`` (arguments to python) on ``ranks`` MPI ranks."""
    return ["mpiexec", "-n", str(ranks), sys.executable, *program]
