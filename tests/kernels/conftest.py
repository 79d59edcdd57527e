"""Fixtures for the kernel tests."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from kernel_helpers import KERNELS, Run, mpiexec, run_program

# The kernels import each other as top-level modules when run as scripts; do the same here.
if str(KERNELS) not in sys.path:
    sys.path.insert(0, str(KERNELS))


@pytest.fixture
def kernel() -> Callable[..., Run]:
    """``kernel("vpicio", 2, "--scratch", ...)`` runs kernels/vpicio.py under mpiexec.

    ``ranks=0`` runs it without mpiexec (for argument errors that end before MPI starts).
    """

    def run(name: str, ranks: int, *args: str) -> Run:
        script = str(KERNELS / f"{name}.py")
        argv = mpiexec(ranks, script, *args) if ranks else [sys.executable, script, *args]
        return run_program(argv)

    return run


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """An empty scratch directory."""
    path = tmp_path / "scratch"
    path.mkdir()
    return path
