"""h5py: installed, parallel, and its HDF5 linked against the MPI library mpi4py loads."""

from __future__ import annotations

import os

from iotune.doctor.context import DoctorContext, failure_text
from iotune.doctor.registry import OK, PROBLEM, Finding, register_check

NAME = "h5py"
#: How to get a parallel h5py built against this MPI.
BUILD = ("scripts/setup.sh builds it; by hand: HDF5_MPI=ON CC=mpicc HDF5_DIR=<parallel HDF5> "
         "{python} -m pip install --no-build-isolation --no-binary=h5py --force-reinstall "
         "h5py")


@register_check(NAME, needs=("mpi4py",))
def check(context: DoctorContext) -> Finding:
    """h5py imported in a process of its own: ``h5py.get_config().mpi`` is True, and the
    MPI library files mapped once it is imported are exactly mpi4py's."""
    fix = BUILD.format(python=context.python)
    outcome = context.probe("h5py")
    if not outcome.ok or outcome.result is None:
        why = failure_text(outcome)
        if "No module named 'h5py'" in why:
            return Finding(PROBLEM, f"not installed for {context.python}", fix)
        return Finding(PROBLEM, f"{context.python} cannot import it: {why}", fix)
    facts = outcome.result
    hdf5 = ", ".join(os.path.basename(p) for p in facts.get("hdf5_libraries") or [])
    what = f"h5py {facts.get('h5py_version')} with HDF5 {facts.get('hdf5_version')}" + \
        (f" ({hdf5})" if hdf5 else "")
    if not facts.get("mpi"):
        return Finding(PROBLEM, f"{what} is serial (h5py.get_config().mpi is False)", fix)
    loaded = sorted(facts.get("mpi_libraries") or [])
    wanted = sorted(context.facts.get("mpi4py_libraries") or [])
    if wanted and loaded != wanted:
        return Finding(PROBLEM, f"{what} loads {', '.join(loaded)}, but mpi4py loads "
                                f"{', '.join(wanted)}", "rebuild h5py against mpi4py's MPI: "
                       + fix)
    return Finding(OK, f"{what} is parallel, on mpi4py's MPI library")
