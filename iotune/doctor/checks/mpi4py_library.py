"""mpi4py: it loads an MPI library, and the same MPI (family and version) the launcher
starts."""

from __future__ import annotations

from iotune.doctor.context import DoctorContext, failure_text
from iotune.doctor.mpi_identity import identify, same_mpi
from iotune.doctor.registry import OK, PROBLEM, Finding, register_check

NAME = "mpi4py"
#: How to get an mpi4py that loads this MPI.
REBUILD = ("scripts/setup.sh checks mpi4py's binary wheel against this MPI and builds it "
           "from source when it does not fit; by hand: CFLAGS=-O1 {python} -m pip install "
           "--force-reinstall --no-binary=mpi4py mpi4py")


@register_check(NAME)
def check(context: DoctorContext) -> Finding:
    """mpi4py imported by the kernels' interpreter in a process of its own: the library
    it loads, compared with the launcher's MPI when that is known. When they agree, the
    facts ``mpi4py_mpi`` and ``mpi4py_libraries`` name the runs' MPI for later checks."""
    outcome = context.probe("library")
    if not outcome.ok or outcome.result is None:
        why = failure_text(outcome)
        if "No module named 'mpi4py'" in why:
            return Finding(PROBLEM, f"not installed for {context.python}",
                           REBUILD.format(python=context.python))
        return Finding(PROBLEM, f"{context.python} cannot load it: {why}",
                       REBUILD.format(python=context.python))
    identity = identify(str(outcome.result.get("library_version", "")))
    libraries = [str(p) for p in outcome.result.get("mpi_libraries") or []]
    loads = f"loads {identity} ({', '.join(libraries) or 'library file not seen'})"
    launcher = context.facts.get("launcher_mpi")
    if launcher is not None and launcher.family != "unknown" and not same_mpi(identity, launcher):
        return Finding(PROBLEM, f"{loads}, but {context.launcher_name} starts {launcher}",
                       f"put the mpiexec of {identity} first on PATH, or rebuild mpi4py "
                       f"against {launcher}: " + REBUILD.format(python=context.python))
    # Later checks compare with these only once they are known to be the runs' MPI.
    context.facts["mpi4py_mpi"] = identity
    context.facts["mpi4py_libraries"] = libraries
    same = f", the MPI {context.launcher_name} starts" if launcher is not None else ""
    return Finding(OK, loads + same)
