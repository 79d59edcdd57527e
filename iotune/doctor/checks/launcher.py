"""The launcher, and for ``mpiexec`` the MPI it starts (``mpiexec --version``)."""

from __future__ import annotations

import shutil
import subprocess

from iotune.doctor.context import DoctorContext
from iotune.doctor.mpi_identity import identify
from iotune.doctor.registry import OK, PROBLEM, Finding, register_check

NAME = "launcher"
#: Seconds ``mpiexec --version`` may take (it starts no ranks).
VERSION_TIMEOUT_S = 20


@register_check(NAME)
def check(context: DoctorContext) -> Finding:
    """mpiexec: found, and the MPI its ``--version`` names (fact ``launcher_mpi``). srun:
    found (its MPI is the program's; the Slurm check says more). A template: shown."""
    if context.launcher_name not in ("mpiexec", "srun"):
        return Finding(OK, f"{context.launcher_name} (a user's template: the MPI it starts "
                           "is the program's)")
    path = shutil.which(context.launcher_name, path=context.env.get("PATH"))
    if path is None:
        module = "load your MPI's module" if context.launcher_name == "mpiexec" else \
            "load Slurm's module, or use --launcher mpiexec"
        return Finding(PROBLEM, f"{context.launcher_name} is not on PATH",
                       f"{module} (scripts/setup.sh installs MPICH on Debian)")
    if context.launcher_name == "srun":
        return Finding(OK, f"srun ({path}) starts the ranks with --mpi=pmi2")
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_S, env=context.env, check=False)
        text = done.stdout + done.stderr
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Finding(PROBLEM, f"{path} --version did not run: {exc}",
                       "check the MPI installation that provides mpiexec")
    identity = identify(text)
    context.facts["launcher_mpi"] = identity
    if identity.family == "unknown":
        return Finding(OK, f"mpiexec ({path}) starts an MPI its --version does not name")
    return Finding(OK, f"mpiexec ({path}) starts {identity}")
