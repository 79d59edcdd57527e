"""iotune: finds fast parallel I/O settings (Lustre striping, MPI-IO hints, HDF5) for HPC codes.

The driver package never imports mpi4py or h5py: importing ``from mpi4py import MPI``
initialises MPI and can hang on a login node. Only the kernels, started by a launcher, do.
"""

from __future__ import annotations

__all__ = ["__version__"]


def __getattr__(name: str) -> str:
    # ``__version__`` is read on first use: importlib.metadata costs tens of milliseconds,
    # paid by every kernel process (the kernels import iotune.settings.catalogue) otherwise.
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        found = version("iotune")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without install
        found = "0.0.0+unknown"
    globals()["__version__"] = found
    return found
