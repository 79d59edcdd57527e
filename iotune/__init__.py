"""iotune: finds fast parallel I/O settings (Lustre striping, MPI-IO hints, HDF5) for HPC codes.

The driver package never imports mpi4py or h5py: importing ``from mpi4py import MPI``
initialises MPI and can hang on a login node. Only the kernels, started by a launcher, do.
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("iotune")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
