"""The preload library (:mod:`iotune.preload`), which applies settings to a user's own
program: built, or buildable, against the MPI the runs use."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

from iotune.doctor.context import DoctorContext
from iotune.doctor.registry import OK, PROBLEM, WARNING, Finding, register_check
from iotune.preload import COMPILER_ENV, compiler, library_path
from iotune.preload.mpi_flavour import detect_mpi_flavour

NAME = "preload"
#: The MPI library lines of ``ldd``: ``libmpich.so.12 => /usr/lib/.../libmpich.so.12 (...)``.
_LDD_MPI = re.compile(r"^\s*(lib(?:mpi|mpich)\.so[.\d]*)\s+=>\s+(\S+)")
#: Seconds ``ldd`` may take.
LDD_TIMEOUT_S = 20


def linked_mpi(library: str) -> list[str] | None:
    """Real paths of the MPI libraries ``library`` links (``ldd``); None when ldd cannot
    tell."""
    try:
        done = subprocess.run(["ldd", library], capture_output=True, text=True,
                              timeout=LDD_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return sorted({os.path.realpath(m.group(2)) for line in done.stdout.splitlines()
                   if (m := _LDD_MPI.match(line))})


@register_check(NAME)
def check(context: DoctorContext) -> Finding:
    """Built: the MPI library it links is the one mpi4py loads (when known). Not built:
    its compiler is on PATH (it is built at the first run that needs it)."""
    flavour = detect_mpi_flavour() if context.launcher_name == "mpiexec" else None
    path = library_path(flavour)
    cc = compiler(flavour)
    rebuild = (f"rebuild it with the compiler of the runs' MPI: {COMPILER_ENV}=<its h5pcc> "
               "python -m iotune.preload --force")
    if not path.is_file():
        if shutil.which(cc, path=context.env.get("PATH")) is None:
            return Finding(WARNING, f"not built, and its compiler {cc} is not on PATH: "
                                    "tuning your own program (--command) needs it, the "
                                    "kernels do not",
                           "load parallel HDF5's module (Debian: libhdf5-mpich-dev), or set "
                           f"{COMPILER_ENV} to its h5pcc")
        return Finding(OK, f"not built yet; {cc} builds it at the first run of your own "
                           "program (python -m iotune.preload builds it now)")
    linked = linked_mpi(str(path))
    wanted = sorted(context.facts.get("mpi4py_libraries") or [])
    if linked is None:
        return Finding(OK, f"{path} (ldd could not list its libraries)")
    if not linked:
        return Finding(PROBLEM, f"{path} links no MPI library", rebuild)
    if wanted and linked != wanted:
        return Finding(PROBLEM, f"{path} links {', '.join(linked)}, but the runs' MPI "
                                f"(mpi4py's) is {', '.join(wanted)}", rebuild)
    return Finding(OK, f"{path}, built against {', '.join(os.path.basename(p) for p in linked)}")
