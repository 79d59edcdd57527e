"""Open MPI's MPI-IO layer: its own OMPIO ignores ROMIO's hints; ROMIO takes them."""

from __future__ import annotations

from iotune.doctor.context import DoctorContext
from iotune.doctor.registry import OK, WARNING, Finding, register_check
from iotune.settings.in_effect import open_mpi_layer

NAME = "mpi-io layer"


@register_check(NAME)
def check(context: DoctorContext) -> Finding:
    """Which layer the runs get, from the MPI mpi4py loads (else the launcher's) and the
    runs' ``OMPI_MCA_io`` (``system.mpi_io`` or ``system.env``), as a run is judged."""
    identity = context.facts.get("mpi4py_mpi") or context.facts.get("launcher_mpi")
    if identity is None or identity.family == "unknown":
        return Finding(OK, "the MPI is not known (see the lines above), so neither is its "
                           "MPI-IO layer")
    selected = context.env.get("OMPI_MCA_io")
    layer = open_mpi_layer({"mpi_library": str(identity), "mpi_io": selected})
    if layer is None:
        return Finding(OK, f"{identity.family}: its MPI-IO is ROMIO, which takes the hints")
    if layer == "romio":
        return Finding(OK, f"Open MPI with ROMIO selected (OMPI_MCA_io={selected})")
    return Finding(WARNING, "Open MPI with its default layer, OMPIO, which does not use "
                            "ROMIO's hints (a tune stops varying them)",
                   "set system.mpi_io: romio in iotune.yaml (it selects ROMIO)")
