"""A job of ``--ranks`` ranks runs under the launcher and its ranks form one world."""

from __future__ import annotations

from iotune.doctor.context import DoctorContext, failure_text
from iotune.doctor.registry import OK, PROBLEM, Finding, register_check

NAME = "mpi job"


@register_check(NAME, needs=("launcher", "slurm", "mpi4py"))
def check(context: DoctorContext) -> Finding:
    """The probe's ``library`` question on ``context.ranks`` ranks: world size and the
    ranks that took part in an allreduce both equal the ranks asked for. Skipped when
    srun is the launcher and Slurm does not work (the slurm line says why)."""
    ranks = context.ranks
    outcome = context.probe("library", ranks=ranks)
    shown = " ".join(outcome.argv)
    if not outcome.ok or outcome.result is None:
        inside = ("" if context.launcher_name != "mpiexec" else
                  "; on a cluster, run iotune doctor inside an allocation (salloc -n "
                  f"{ranks}) or with --launcher srun")
        return Finding(PROBLEM, f"a {ranks}-rank job failed: {failure_text(outcome)}",
                       f"run `{shown}` to see the whole error{inside}")
    size = outcome.result.get("size")
    took_part = outcome.result.get("took_part")
    if size != ranks or took_part != ranks:
        return Finding(PROBLEM, f"{ranks} processes started, but they saw a world of {size} "
                                f"rank(s): {context.launcher_name} and mpi4py belong to "
                                "different MPIs",
                       "use the launcher of the MPI mpi4py loads (see the mpi4py line)")
    return Finding(OK, f"{ranks} ranks ran as one world under {context.launcher_name} "
                       f"({outcome.elapsed_s:.1f} s)")
