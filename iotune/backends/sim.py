"""The ``sim`` backend: write times from the analytic Lustre model of :mod:`iotune.sim`.

For planning at scales this machine cannot run. Every record says ``backend: sim``,
``provenance: simulated`` and the system preset; the numbers are never presented as
measured. Noise is seeded per (configuration, repetition), so a campaign gives the same
numbers whatever order it runs in and however often it is resumed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.backends.base import Backend, RunRequest, register_backend
from iotune.config import Config
from iotune.kernel_specs import get_kernel
from iotune.settings.values import HINT_PREFIX
from iotune.sim.simulate import BACKEND
from iotune.store import now_iso
from iotune.store.source import describe_source

if TYPE_CHECKING:
    from iotune.workload.pattern import Pattern


def sim_pattern(kernel: str, cores: int, params: Mapping[str, Any], cores_per_node: int) -> Pattern:
    """The simulator's description of what a kernel with ``params`` writes, on as few
    nodes of ``cores_per_node`` cores as hold ``cores`` ranks."""
    nodes = -(-cores // cores_per_node)
    return get_kernel(kernel).sim_pattern(cores, params, nodes)


@register_backend
class SimBackend(Backend):
    """Simulated measurements on a system preset (``backend.system``, e.g. ``hopper``)."""

    name = BACKEND  # the simulator labels its own frames with the same name
    provenance = "simulated"
    label = "SIMULATED"
    models = "the simulated Lustre system"
    probes = True
    simulates = True

    def __init__(self, config: Config, system: str | None = None, noise: float | None = None,
                 seed: int | None = None) -> None:
        from iotune.sim import load_system

        self.config = config
        self.system = load_system(system or config.backend.sim_system)
        self.noise = config.backend.noise if noise is None else noise
        self.seed = config.tune.seed if seed is None else seed

    def source(self) -> str:
        return describe_source(self.name, self.system.name, sim_system=self.system.name,
                               noise=self.noise)

    def describe(self, request: RunRequest) -> str:
        return (f"sim ({self.system.name}, noise {self.noise:g}): {request.kernel} at "
                f"{request.cores} ranks {dict(request.settings)} (SIMULATED, nothing runs)")

    def measure(self, request: RunRequest, rep: int = 0) -> dict[str, Any]:
        return self.measure_many([request], rep)[0]

    def probe_after(self, record: dict[str, Any], size: int) -> float | None:
        """A simulated probe latency drawn from the state the measurement ran in."""
        from iotune.variability.simulate import probe_base_latency, simulated_probe_latency

        state = record.get("state")
        if state not in ("idle", "busy"):
            return None
        rng = np.random.default_rng([self.seed, int(record["config_key"], 16) % 2**63,
                                     int(record.get("rep", 0)), size])
        return simulated_probe_latency(self.system.noise, str(state), rng, size, noise=self.noise,
                                       base_s=probe_base_latency(self.system, size))

    def measure_many(self, requests: Sequence[RunRequest], rep: int = 0) -> list[dict[str, Any]]:
        import pandas as pd

        from iotune.sim import simulate_times

        records = []
        for request in requests:
            modelled = {k: v for k, v in request.settings.items() if not k.startswith(HINT_PREFIX)}
            pattern = sim_pattern(request.kernel, request.cores, request.params,
                                  self.system.cores_per_node)
            rng = np.random.default_rng([self.seed, int(request.key, 16) % 2**63, rep])
            sim = simulate_times(self.system, pattern, pd.DataFrame([modelled]),
                                 noise=self.noise, rng=rng)
            total = float(sim.time_s.ravel()[0])
            opened = float(sim.open_s.ravel()[0])
            record = self.base_record(request, rep, self.system.name)
            record.update(
                nodes=pattern.nodes, fs_type="lustre (simulated)", finished_at=now_iso(),
                status="ok", error=None, state=str(sim.state.ravel()[0]),
                result={
                    "simulated": True,
                    "sim_system": self.system.name,
                    "noise": self.noise,
                    "bytes_written": sim.total_bytes,
                    "times_s": {"open": opened, "write": total - opened, "close": 0.0,
                                "total": total},
                    "model_time_s": float(sim.model_time_s.ravel()[0]),
                    "bandwidth_mib_s": float(sim.bandwidth_mib_s.ravel()[0]),
                    "two_phase": bool(sim.two_phase.ravel()[0]),
                    "not_modelled": sorted(set(request.settings) - set(modelled)),
                },
            )
            records.append(record)
        return records
