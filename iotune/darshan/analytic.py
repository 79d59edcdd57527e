"""The Darshan counters of a kernel configuration, from its arguments alone.

A :class:`Candidate` is one kernel configuration; :func:`kernel_file` gives the counters a
Darshan-instrumented run of it would record, which its kernel's spec derives
(``KernelSpec.darshan_file``) by the rules of :mod:`iotune.workload.modelled`, so kernel and
application signatures come from the same code. The model is checked against real logs of
IOR and VPIC-IO in the tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iotune.kernel_specs import get_kernel
from iotune.workload.counters import FileCounters


@dataclass(frozen=True)
class Candidate:
    """One kernel configuration: kernel arguments, the ``collective`` setting and ranks."""

    kernel: str
    args: Mapping[str, Any]
    collective: bool
    ranks: int

    def key(self) -> tuple[Any, ...]:
        return (self.kernel, self.ranks, self.collective, tuple(sorted(self.args.items())))

    def settings(self) -> dict[str, Any]:
        """Settings the proxy must keep fixed (only ``collective``, when not the default)."""
        if self.collective == get_kernel(self.kernel).collective_default:
            return {}
        return {"collective": self.collective}


def kernel_file(candidate: Candidate) -> FileCounters:
    """The counters of the (or, for one file per rank, each) file the candidate writes.

    Raises :class:`~iotune.kernel_specs.KernelFeatureError` for a kernel without a Darshan
    signature.
    """
    spec = get_kernel(candidate.kernel)
    args = spec.normalise_params(candidate.args)
    return spec.darshan_file(args, candidate.ranks, candidate.collective)
