"""The layers every iotune kernel is built from, one module each.

* :mod:`.arguments` -- the command line: a parser that prints once and errors in one
  line, and argument types taken from the settings catalogue (:mod:`iotune.settings.catalogue`).
* :mod:`.rundir` -- the scratch and run directory, and Lustre striping on it.
* :mod:`.mpiio` -- MPI-IO hints: flags, ``MPI.Info``, the hints in effect.
* :mod:`.hdf5` -- HDF5 file-access settings: flags, property lists, the settings in effect.
* :mod:`.mpi` -- MPI itself (imported lazily), timing phases and collective helpers.
* :mod:`.harness` -- the run: common flags, setup, the JSON result, teardown.

Each settings layer owns its flags, how it applies them and how it reads them back from
the open file. No module imports mpi4py or h5py when imported (``--help`` must not start
MPI); the functions that need them import them when called. The same goes for anything
only some runs need (ctypes, subprocess): every kernel process pays for what its imports
load, so a POSIX or MPI-IO run loads neither h5py nor them (``tests/kernels/test_startup.py``).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

if importlib.util.find_spec("iotune") is None:
    # A kernel may run under an interpreter without iotune installed (system.python). The
    # catalogue is standard library only, and iotune/ sits beside this package's parent
    # both in the source tree (kernels/) and in an install (iotune_kernels/).
    sys.path.append(str(Path(__file__).resolve().parents[2]))
