"""The I/O kernels the tuner can drive: one spec per kernel, and the registry of them.

Kernels are standalone MPI programs in ``kernels/`` (installed as the package
``iotune_kernels``). The driver never imports them: it finds their files and builds their
command lines. Everything else iotune knows about a kernel (its bytes per rank, its
simulated access pattern, its Darshan signature, its proxy genes) lives in its spec,
one module each (:mod:`iotune.kernels.vpic`, :mod:`iotune.kernels.ior`), behind the
interface of :class:`~iotune.kernels.spec.KernelSpec`; no other module switches on a
kernel's name. Each kernel's module registers its spec in :mod:`iotune.kernels.registry`;
importing this package imports them all, so the registry is full wherever a kernel is
looked up by name.

A kernel's fixed arguments (``params``) map to ``--<name-with-dashes> VALUE`` like
settings do; boolean flags without a value (``verify``, ``keep``) are passed bare.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from iotune.kernels import command, ior, vpic  # noqa: F401
from iotune.kernels.registry import KERNELS, get_kernel, kernels_with
from iotune.kernels.spec import (
    Feature,
    KernelFeatureError,
    KernelParam,
    KernelSpec,
)

__all__ = [
    "BARE_FLAGS",
    "KERNELS",
    "Feature",
    "KernelFeatureError",
    "KernelParam",
    "KernelSpec",
    "get_kernel",
    "kernel_argv",
    "kernels_with",
]

BARE_FLAGS = ("verify", "keep")


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
