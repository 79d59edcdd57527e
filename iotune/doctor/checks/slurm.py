"""Slurm: whether ``srun`` is there and answers, and whether this is inside an allocation."""

from __future__ import annotations

import shutil
import subprocess

from iotune.doctor.context import DoctorContext
from iotune.doctor.registry import OK, PROBLEM, WARNING, Finding, register_check
from iotune.execution.slurm import current_allocation

NAME = "slurm"
#: Seconds ``srun --version`` may take (it reads Slurm's configuration).
VERSION_TIMEOUT_S = 20


@register_check(NAME)
def check(context: DoctorContext) -> Finding:
    """``srun --version``; a problem only when the launcher is srun, otherwise Slurm is
    optional (batch jobs need it, runs with mpiexec do not)."""
    needed = context.launcher_name == "srun"
    bad = PROBLEM if needed else WARNING
    path = shutil.which("srun", path=context.env.get("PATH"))
    if path is None:
        if needed:
            return Finding(PROBLEM, "srun is not on PATH",
                           "load Slurm's module, or use --launcher mpiexec")
        return Finding(OK, f"not on PATH: runs start with {context.launcher_name}, and no "
                           "batch job can be submitted from here")
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_S, env=context.env, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Finding(bad, f"{path} --version did not run: {exc}",
                       "check the Slurm installation")
    lines = [line.strip() for line in (done.stdout + done.stderr).splitlines() if line.strip()]
    if done.returncode != 0:
        return Finding(bad, f"{path} is installed but does not work here: "
                            f"{lines[-1] if lines else f'exit code {done.returncode}'}",
                       "check Slurm's configuration (slurm.conf) and its daemons"
                       + ("" if needed else f", or ignore this when runs use "
                          f"{context.launcher_name} and no batch job is submitted"))
    allocation = current_allocation(context.env)
    where = (f"inside job {context.env.get('SLURM_JOB_ID')}" if allocation is not None
             else "outside an allocation")
    return Finding(OK, f"{lines[0] if lines else 'srun'} ({path}), {where}")
