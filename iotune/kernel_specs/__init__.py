"""The I/O kernels the tuner can drive: one spec per kernel, and the registry of them.

Kernels are standalone MPI programs in ``kernels/`` (installed as the package
``iotune_kernels``). The driver never imports them: it finds their files and builds their
command lines. Everything else iotune knows about a kernel (its bytes per rank, its
simulated access pattern, its Darshan signature, its proxy genes) lives in its spec,
one module each (:mod:`iotune.kernel_specs.vpic`, :mod:`iotune.kernel_specs.ior`), behind the
interface of :class:`~iotune.kernel_specs.spec.KernelSpec`; no other module switches on a
kernel's name. Each kernel's module registers its spec in :mod:`iotune.kernel_specs.registry`;
importing this package imports them all, so the registry is full wherever a kernel is
looked up by name.

A kernel's fixed arguments (``params``, defined in :mod:`iotune.kernel_args` for the
bundled programs) map to ``--<name-with-dashes> VALUE`` like settings do; a bare argument
(``verify``) is passed as its flag alone.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from iotune.kernel_args import KernelParam
from iotune.kernel_specs import command, ior, vpic  # noqa: F401
from iotune.kernel_specs.registry import KERNELS, get_kernel, kernels_with
from iotune.kernel_specs.spec import Feature, KernelFeatureError, KernelSpec
from iotune.settings.metrics import Metric
from iotune.store.targets import target_metric

__all__ = [
    "KERNELS",
    "Feature",
    "KernelFeatureError",
    "KernelParam",
    "KernelSpec",
    "get_kernel",
    "kernel_argv",
    "kernels_with",
    "metric_of",
    "own_metric_of",
]


def own_metric_of(kernel: str, params: Mapping[str, Any]) -> Metric | None:
    """The figure runs of ``kernel`` with ``params`` measure when the kernel has one of its
    own (:meth:`KernelSpec.own_metric`); None for a kernel timed by its target, or one this
    installation does not know (a record from elsewhere)."""
    spec = KERNELS.get(kernel)
    return None if spec is None else spec.own_metric(params)


def metric_of(kernel: str, params: Mapping[str, Any], target: str = "write") -> Metric:
    """The metric of runs of ``kernel`` with ``params`` (canonical kernel arguments) timing
    ``target`` (:meth:`KernelSpec.metric`; the target's time for a kernel not known here)."""
    return own_metric_of(kernel, params) or target_metric(target)

def kernel_argv(spec: KernelSpec, params: Mapping[str, Any],
                python: str | None = None) -> list[str]:
    """``python kernel.py --param value ...`` for the (normalised) params; settings come after.
    A bare argument (``verify``) is passed as its flag alone when true."""
    argv = [python or sys.executable, str(spec.path())]
    for name, value in params.items():
        param = spec.param(name)
        flag = "--" + name.replace("_", "-")
        if param is not None and param.bare:
            if value:
                argv.append(flag)
        elif isinstance(value, bool):
            argv += [flag, "yes" if value else "no"]
        else:
            argv += [flag, str(value)]
    return argv
