"""A backend that answers from a Python function: synthetic landscapes for tests and studies.

``FunctionBackend(time_of)`` measures a configuration as ``time_of(settings, cores)``
seconds (None: the run failed), with the records every backend writes. Nothing runs, so
its records are labelled as the ``sim`` backend's (:class:`~iotune.backends.sim.SimBackend`:
its name, provenance and label; ``system: synthetic``); it takes no probes, times no reads
and reads nothing back.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from iotune.backends.base import Backend, RunRequest
from iotune.backends.sim import SimBackend
from iotune.store import now_iso
from iotune.store.source import describe_source

TimeFunction = Callable[[Mapping[str, Any], int], "float | None"]


class FunctionBackend(Backend):
    """Times from ``time_of(settings, cores)``; ``bytes_per_run`` sets the bandwidth."""

    name = SimBackend.name
    provenance = SimBackend.provenance
    label = SimBackend.label
    models = SimBackend.models

    def __init__(self, time_of: TimeFunction, *, bytes_per_run: int = 2**30,
                 system: str = "synthetic") -> None:
        self.time_of = time_of
        self.bytes_per_run = bytes_per_run
        self.system = system
        self.requests: list[RunRequest] = []

    def source(self) -> str:
        return describe_source(self.name, self.system)

    def measure(self, request: RunRequest, rep: int = 0) -> dict[str, Any]:
        self.requests.append(request)
        record = self.base_record(request, rep, self.system)
        time = self.time_of(request.settings, request.cores)
        if time is None or time <= 0:
            record.update(status="failed", error="the synthetic run failed",
                          finished_at=now_iso(), result=None)
            return record
        record.update(status="ok", error=None, finished_at=now_iso(), fs_type="synthetic",
                      result={"simulated": True, "bytes_written": self.bytes_per_run,
                              "times_s": {"total": time, "open": None, "write": None,
                                          "close": None},
                              "bandwidth_mib_s": self.bytes_per_run / 2**20 / time})
        return record
