"""MPI-IO hints reach the file: a real open of a file in scratch on ``--ranks`` ranks, with
hints, read back from the open file as the kernels read them."""

from __future__ import annotations

from iotune.doctor.context import DoctorContext, failure_text
from iotune.doctor.registry import OK, PROBLEM, WARNING, Finding, register_check
from iotune.settings.in_effect import compare_hints, open_mpi_layer

NAME = "mpi-io hints"


@register_check(NAME, needs=("mpi job", "scratch"))
def check(context: DoctorContext) -> Finding:
    """The probe's ``hints`` question in scratch. ROMIO reports the hints it uses, so each
    one asked for must come back with its value; Open MPI reports the hints given whatever
    its layer does with them, so there the open itself is what is checked."""
    ranks = context.ranks
    outcome = context.probe("hints", str(context.scratch), ranks=ranks)
    if not outcome.ok or outcome.result is None:
        return Finding(PROBLEM, f"a {ranks}-rank MPI-IO open in {context.scratch} failed: "
                                f"{failure_text(outcome)}",
                       f"run `{' '.join(outcome.argv)}` to see the whole error")
    requested = {str(k): str(v) for k, v in (outcome.result.get("requested") or {}).items()}
    in_effect = {str(k): str(v) for k, v in (outcome.result.get("in_effect") or {}).items()}
    asked = ", ".join(f"{k}={v}" for k, v in requested.items())
    library = {"mpi_library": outcome.result.get("library_version"),
               "mpi_io": outcome.result.get("mpi_io")}
    if open_mpi_layer(library) is not None:
        return Finding(OK, f"a {ranks}-rank open in {context.scratch} took {asked}; Open MPI "
                           "reads back the hints given, not those used, so each run's effect "
                           "is judged from who wrote (docs/mpi-libraries.md)")
    missing = compare_hints(requested, in_effect)
    if missing:
        seen = ", ".join(f"{k}={got if got is not None else 'absent'}"
                         for k, (_, got) in missing.items())
        return Finding(WARNING, f"a {ranks}-rank open in {context.scratch} asked for {asked} "
                                f"and the file reports {seen}: this MPI-IO does not take "
                                "ROMIO's hints, and a tune stops varying them",
                       "use an MPI whose MPI-IO is ROMIO (MPICH, Cray MPICH, Intel MPI, "
                       "MVAPICH) or, with Open MPI, system.mpi_io: romio")
    return Finding(OK, f"{asked} read back from a {ranks}-rank open in {context.scratch}")
