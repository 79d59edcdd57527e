"""The doctor's checks, one module each. Importing this package registers them, in the
order they run (a check comes after those it needs)."""

from iotune.doctor.checks import (  # noqa: F401, I001 (imported to register, in this order)
    launcher,
    slurm,
    mpi4py_library,
    mpi_job,
    h5py_build,
    preload_library,
    scratch,
    hints,
    io_layer,
    store,
)
