"""What a search can minimise, each target defined once: the write's time, the read's, or
both added.

A target names the flat-row column holding its time (:meth:`Measurement.row`), the
kernel ``access`` modes whose runs time it, the access a tune sets when none is given,
and, in words, what its time measures (printed with every tuned result).
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.settings.metrics import Metric


@dataclass(frozen=True)
class Target:
    name: str
    #: The flat-row column of its time (:meth:`iotune.store.records.Measurement.row`).
    column: str
    #: The kernel ``access`` modes whose runs time it.
    timed_by: tuple[str, ...]
    #: The ``access`` a tune sets when the kernel's arguments leave it out.
    needs_access: str
    #: What its time measures, in words.
    time: str


#: The targets by name, in the order they are offered (``write`` is the default).
TARGET_TABLE = {t.name: t for t in (
    Target("write", "write_time", ("write", "both"), "write",
           "write open to close (max over ranks)"),
    Target("read", "read_time", ("read", "both"), "read",
           "read-back open to close (max over ranks); the file was written untimed before"),
    Target("total", "io_time", ("both",), "both",
           "write open to close plus read-back open to close (each max over ranks)"),
)}
#: The names of the targets.
TARGETS = tuple(TARGET_TABLE)


def target_column(target: str) -> str:
    """The flat-row column of ``target``'s time; ValueError for an unknown target."""
    if target not in TARGET_TABLE:
        raise ValueError(f"target {target!r} is not one of {', '.join(TARGETS)}")
    return TARGET_TABLE[target].column


def target_metric(target: str) -> Metric:
    """The metric of runs timed by ``target``: its time, in seconds, described in words (a
    name that is no target is taken as its own description). A kernel that measures
    something else says so in its spec (:meth:`iotune.kernel_specs.KernelSpec.metric`)."""
    return Metric(TARGET_TABLE[target].time if target in TARGET_TABLE else target)
