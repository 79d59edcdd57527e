"""The arguments of iotune's own kernel programs: each one's flag, kind, default and help.

The driver's kernel specs (:mod:`iotune.kernel_specs`) check a config's ``kernel.args`` with
these rows and pass them as ``--<name-with-dashes> VALUE``; the programs in ``kernels/``
build their command lines from the same rows (``kernels/kit/arguments.py``). So an
argument, its default and its help exist here only, and a value is parsed by its
catalogue kind (:mod:`iotune.settings.catalogue`) wherever it is given.

Standard library and the catalogue only: the kernel programs import this module under
``mpirun``, where nothing heavy may load.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from iotune.settings.catalogue import ByteSize, Choice, Count, Kind, YesNo


@dataclass(frozen=True)
class KernelParam:
    """One fixed argument of a kernel program.

    ``type`` parses and checks its values. ``default`` is what the driver passes when a
    config leaves the argument out; with ``default`` None the driver passes nothing and
    the program takes ``implied``. A ``bare`` argument is a flag without a value: given
    means yes.
    """

    name: str
    type: Kind
    default: Any
    help: str
    implied: Any = None
    bare: bool = False

    @property
    def flag(self) -> str:
        """``particles_per_rank`` -> ``--particles-per-rank``."""
        return "--" + self.name.replace("_", "-")

    @property
    def program_default(self) -> Any:
        """What the program takes when the flag is not given."""
        return self.implied if self.default is None else self.default


#: What a kernel run times (``access``): see ``kernels/kit/readback.py``.
ACCESS_MODES = ("write", "read", "both")
#: The ``access`` argument of the kernels with a read phase. The driver passes nothing by
#: default: a run that does not give it is a write, and its configuration key (which
#: includes the arguments) stays what it was before kernels could read.
ACCESS_PARAM = KernelParam(
    "access", Choice(choices=ACCESS_MODES), None,
    "what is timed: the write, the read-back of a file written untimed beforehand, or both "
    "(write, then read)", implied="write")

FSYNC = KernelParam(
    "fsync", YesNo(), True,
    "flush and fsync the file(s) inside the timed region, before close (keeps the page "
    "cache out of the timing)")
VERIFY = KernelParam(
    "verify", YesNo(), False,
    "after the timed region, read everything back and check every value (exit code 1 on a "
    "mismatch)", bare=True)
#: The arguments every bundled kernel takes.
COMMON_PARAMS = (FSYNC, VERIFY)

VPIC_PARAMS = (
    KernelParam("particles_per_rank", Count(), 8 * 2**20,
                "particles written by each rank per timestep, 32 bytes each"),
    KernelParam("timesteps", Count(), 1, "timesteps, one group of datasets each"),
    *COMMON_PARAMS,
    ACCESS_PARAM,
)

#: The I/O interfaces a kernel writes through (the ior kernel takes any of them).
APIS = ("posix", "mpiio", "hdf5")
IOR_PARAMS = (
    KernelParam("api", Choice(choices=APIS), "mpiio", "I/O interface"),
    KernelParam("block_size", ByteSize(), 16 * 2**20, "contiguous bytes per rank per segment"),
    KernelParam("transfer_size", ByteSize(), 2**20,
                "bytes per write call; must divide the block size"),
    KernelParam("segments", Count(), 1, "segments"),
    KernelParam("file_per_process", YesNo(), False,
                "one file per rank (yes) or one shared file (no)"),
    *COMMON_PARAMS,
    ACCESS_PARAM,
)


def param_named(params: Iterable[KernelParam], name: str) -> KernelParam:
    """The argument called ``name`` of ``params``; KeyError when there is none."""
    for param in params:
        if param.name == name:
            return param
    raise KeyError(name)


def own_params(params: Iterable[KernelParam]) -> tuple[KernelParam, ...]:
    """The arguments of ``params`` that are not common to every kernel."""
    return tuple(p for p in params if p not in COMMON_PARAMS)
