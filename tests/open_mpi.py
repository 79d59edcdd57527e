"""What the tests that run real Open MPI beside MPICH share: whether it is installed, the
mark that skips them when it is not, and the environment that lets it run here."""

from __future__ import annotations

import shutil

import pytest

#: Open MPI's compiler, HDF5 wrapper and launcher beside MPICH's (Debian: openmpi-bin
#: libopenmpi-dev libhdf5-openmpi-dev, which scripts/setup.sh --test installs as root
#: without making them the default MPI).
OPEN_MPI = all(shutil.which(tool) for tool in ("mpicc.openmpi", "h5pcc.openmpi",
                                                "mpiexec.openmpi"))
needs_open_mpi = pytest.mark.skipif(
    not OPEN_MPI,
    reason="Open MPI is not installed beside MPICH (scripts/setup.sh --test installs it)")
#: Open MPI refuses to run as root and to start more ranks than cores unless told.
ROOT_OK = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
