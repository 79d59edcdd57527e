"""Which MPI ``mpiexec`` starts, from ``mpiexec --version``: the preload library is built
against it (:func:`iotune.preload.compiler`) and the launchers add Open MPI's flags by it
(:mod:`iotune.execution.launchers`). It lives here, below the launchers, so that building
the library can ask it too."""

from __future__ import annotations

import shutil
import subprocess
from functools import lru_cache


@lru_cache(maxsize=4)
def detect_mpi_flavour(mpiexec: str = "mpiexec") -> str:
    """``openmpi`` or ``mpich`` from ``mpiexec --version``; ``unknown`` when it cannot run."""
    path = shutil.which(mpiexec)
    if path is None:
        return "unknown"
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    text = (out.stdout + out.stderr).lower()
    if "open mpi" in text or "open-mpi" in text or "openrte" in text:
        return "openmpi"
    if "hydra" in text or "mpich" in text:
        return "mpich"
    return "unknown"
