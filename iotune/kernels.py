"""The I/O kernels the tuner can drive: where each program is and what arguments it takes.

Kernels are standalone MPI programs in ``kernels/`` (installed as the package
``iotune_kernels``). The driver never imports them: it only finds their files and builds
their command lines. A kernel's fixed arguments (``params``) map to ``--<name-with-dashes>
VALUE`` like settings do; boolean flags without a value (``verify``, ``keep``) are passed bare.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from iotune.errors import ConfigError
from iotune.settings import parse_bool
from iotune.units import positive_bytes

BARE_FLAGS = ("verify", "keep")


@dataclass(frozen=True)
class KernelParam:
    """One fixed argument of a kernel: ``kind`` is count, bytes, bool or choice."""

    name: str
    kind: str
    default: Any
    help: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class KernelSpec:
    """What the driver knows about a kernel program."""

    name: str
    script: str
    help: str
    params: tuple[KernelParam, ...] = field(default_factory=tuple)

    def param(self, name: str) -> KernelParam | None:
        return next((p for p in self.params if p.name == name), None)

    def path(self) -> Path:
        """The kernel program's file, from the installed package or the source tree."""
        return Path(str(resources.files("iotune_kernels").joinpath(self.script)))

    def normalise_params(self, params: Mapping[str, Any], where: str = "kernel.args") -> dict:
        """Validated canonical values of ``params`` with defaults filled in."""
        out: dict[str, Any] = {}
        for name, value in params.items():
            spec = self.param(name)
            if spec is None:
                known = ", ".join(p.name for p in self.params)
                raise ConfigError(
                    f"{where}.{name}: unknown argument of kernel '{self.name}'; known: {known}"
                )
            out[name] = _normalise_param(spec, value, f"{where}.{name}")
        for spec in self.params:
            if spec.default is not None:
                out.setdefault(spec.name, spec.default)
        return out

    def bytes_per_rank(self, params: Mapping[str, Any]) -> int:
        """Bytes each rank writes with these (normalised) params; used for estimates."""
        if self.name == "vpic":
            return 32 * int(params["particles_per_rank"]) * int(params["timesteps"])
        return int(params["block_size"]) * int(params["segments"])


def _normalise_param(spec: KernelParam, value: Any, where: str) -> Any:
    if spec.kind == "count":
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ConfigError(f"{where}: {value!r} is not a positive integer")
        return value
    if spec.kind == "bytes":
        return positive_bytes(value, where)
    if spec.kind == "bool":
        parsed = parse_bool(value)
        if parsed is None:
            raise ConfigError(f"{where}: {value!r} is not a boolean (true/false, yes/no)")
        return parsed
    if not isinstance(value, str) or value.lower() not in spec.choices:
        raise ConfigError(f"{where}: {value!r} is not one of {', '.join(spec.choices)}")
    return value.lower()


_COMMON = (
    KernelParam("fsync", "bool", True, "fsync inside the timed region (keeps the page cache out)"),
    KernelParam("verify", "bool", False, "read the data back after the timed region and check it"),
)

KERNELS: dict[str, KernelSpec] = {
    k.name: k
    for k in (
        KernelSpec(
            "vpic", "vpicio.py", "VPIC-IO particle write: 8 1-D datasets per timestep (HDF5)",
            (
                KernelParam("particles_per_rank", "count", 8 * 2**20, "particles per rank"),
                KernelParam("timesteps", "count", 1, "timesteps (one group each)"),
                *_COMMON,
            ),
        ),
        KernelSpec(
            "ior", "ior.py", "IOR-style segmented write: POSIX, MPI-IO or HDF5",
            (
                KernelParam("api", "choice", "mpiio", "I/O interface", ("posix", "mpiio", "hdf5")),
                KernelParam("block_size", "bytes", 16 * 2**20,
                            "contiguous bytes per rank per segment"),
                KernelParam("transfer_size", "bytes", 2**20, "bytes per write call"),
                KernelParam("segments", "count", 1, "segments"),
                KernelParam("file_per_process", "bool", False, "one file per rank"),
                *_COMMON,
            ),
        ),
    )
}


def get_kernel(name: str, where: str = "kernel") -> KernelSpec:
    """The kernel called ``name``; ConfigError listing the known ones otherwise."""
    try:
        return KERNELS[name]
    except KeyError:
        raise ConfigError(
            f"{where}: unknown kernel '{name}'; known kernels: {', '.join(sorted(KERNELS))}"
        ) from None


def kernel_argv(spec: KernelSpec, params: Mapping[str, Any],
                python: str | None = None) -> list[str]:
    """``python kernel.py --param value ...`` for the (normalised) params; settings come after."""
    argv = [python or sys.executable, str(spec.path())]
    for name, value in params.items():
        if name in BARE_FLAGS:
            if value:
                argv.append("--" + name)
        elif isinstance(value, bool):
            argv += ["--" + name.replace("_", "-"), "yes" if value else "no"]
        else:
            argv += ["--" + name.replace("_", "-"), str(value)]
    return argv
