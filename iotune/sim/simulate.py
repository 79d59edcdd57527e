"""The public entry point: simulated write times of many configurations at once.

:func:`simulate_times` validates the configurations, evaluates the analytic model of
:mod:`iotune.sim.lustre` and applies the measurement noise of :mod:`iotune.sim.noise`.
Its :class:`SimResult` always says ``backend = "sim"`` and names the system, so simulated
numbers cannot pass for measured ones.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import numpy as np
import numpy.typing as npt

from iotune.sim.configs import resolve_configs
from iotune.sim.lustre import Breakdown, model_times
from iotune.sim.noise import STATE_NAMES, check_noise_level, draw_factors
from iotune.sim.system import SimSystem, load_system
from iotune.workload.pattern import Pattern

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

FloatArray = npt.NDArray[np.float64]
Configs: TypeAlias = "pd.DataFrame | Mapping[str, Any] | None"
#: The backend name of every simulated result: the simulator's frames and stored records
#: and the ``sim`` backend all carry it.
BACKEND = "sim"


@dataclass(frozen=True)
class SimResult:
    """Simulated measurements, one per configuration (arrays of the configurations' shape).

    ``time_s`` is open-to-close wall time including noise; ``model_time_s`` the noise-free
    model time; ``bandwidth_mib_s`` is ``total_bytes / time_s`` in MiB/s; ``state`` is
    ``'idle'``/``'busy'`` per measurement, or ``'none'`` when noise is off; ``open_s`` the
    (noise-free) open cost; ``two_phase`` whether collective buffering was in effect.
    """

    time_s: FloatArray
    model_time_s: FloatArray
    bandwidth_mib_s: FloatArray
    state: npt.NDArray[np.str_]
    open_s: FloatArray
    two_phase: npt.NDArray[np.bool_]
    system: str
    noise: float
    total_bytes: int
    backend: str = BACKEND

    def to_frame(self) -> pd.DataFrame:
        """One row per configuration (flattened in C order), with ``backend`` and ``system``."""
        import pandas as pd

        return pd.DataFrame(
            {
                "time_s": self.time_s.ravel(),
                "model_time_s": self.model_time_s.ravel(),
                "bandwidth_mib_s": self.bandwidth_mib_s.ravel(),
                "state": self.state.ravel(),
                "open_s": self.open_s.ravel(),
                "two_phase": self.two_phase.ravel(),
                "backend": self.backend,
                "system": self.system,
            }
        )


def as_system(system: SimSystem | str | Path) -> SimSystem:
    """``system`` itself, or the preset / YAML file it names."""
    return system if isinstance(system, SimSystem) else load_system(system)


def model_breakdown(system: SimSystem | str | Path, pattern: Pattern,
                    configs: Configs = None) -> Breakdown:
    """Noise-free model times and their ingredients (aggregators, active OSTs, ...)."""
    spec = as_system(system)
    return model_times(spec, pattern, resolve_configs(spec, pattern, configs))


def simulate_times(
    system: SimSystem | str | Path,
    pattern: Pattern,
    configs: Configs = None,
    *,
    noise: float = 1.0,
    rng: np.random.Generator | None = None,
) -> SimResult:
    """Simulated times of writing ``pattern`` under each configuration of ``configs``.

    ``configs`` is a DataFrame (one row per configuration) or a mapping of columns that
    broadcast together (see :mod:`iotune.sim.configs`); ``None`` is the system default.
    ``noise`` scales the preset's variability (1 = as calibrated, 0 = off); ``rng`` makes
    noisy results reproducible. Raises ConfigError for invalid input.
    """
    level = check_noise_level(noise)
    spec = as_system(system)
    breakdown = model_breakdown(spec, pattern, configs)
    model_time = np.asarray(breakdown.time_s, dtype=np.float64)
    factors, states = draw_factors(spec.noise, model_time.shape, level, rng)
    time_s = model_time * factors
    return SimResult(
        time_s=time_s,
        model_time_s=model_time,
        bandwidth_mib_s=pattern.total_bytes / time_s / 2**20,
        state=STATE_NAMES[states],
        open_s=np.asarray(breakdown.open_s, dtype=np.float64),
        two_phase=np.asarray(breakdown.two_phase, dtype=np.bool_),
        system=spec.name,
        noise=level,
        total_bytes=pattern.total_bytes,
    )
