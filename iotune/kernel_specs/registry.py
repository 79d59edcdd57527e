"""The kernels by name: each kernel's module registers its spec here when imported.

Importing :mod:`iotune.kernel_specs` imports every bundled kernel, so the registry is full
wherever a kernel is looked up by name. This module imports no kernel (and no spec at run
time), so the specs, which name the kernels that have a feature, look kernels up here
without an import circle.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from iotune.errors import ConfigError

if TYPE_CHECKING:
    from iotune.kernel_specs.spec import Feature, KernelSpec

Spec = TypeVar("Spec", bound="KernelSpec")

#: Every registered kernel spec by name (tests may add one for a while).
KERNELS: dict[str, KernelSpec] = {}


def register_kernel(spec: Spec) -> Spec:
    """Make ``spec`` known under its name; returns it, for ``NAME = register_kernel(...)``."""
    KERNELS[spec.name] = spec
    return spec


def get_kernel(name: str, where: str = "kernel") -> KernelSpec:
    """The kernel called ``name``; ConfigError listing the known ones otherwise."""
    try:
        return KERNELS[name]
    except KeyError:
        bundled = sorted(k for k, spec in KERNELS.items() if spec.script)
        raise ConfigError(
            f"{where}: unknown kernel '{name}'; known kernels: {', '.join(bundled)} (your own "
            "program: kernel: {command: ...} or --command)"
        ) from None


def kernels_with(feature: Feature) -> tuple[str, ...]:
    """Names of the kernels that have ``feature``, sorted."""
    return tuple(sorted(name for name, spec in KERNELS.items() if spec.supports(feature)))
