"""Table 3 of Behzad et al. (HPDC'14) and the model's noise-free counterpart at one scale.

The paper's Table 3 reports, for VPIC-IO on Hopper (8 Mi particles of 32 bytes per core,
256 MiB), the bandwidth of the tuned and of the default configuration and their ratio.
:func:`model_point` computes the same three figures from the analytic model, noise off:
*default* is the system default, *tuned* the best configuration of
:func:`iotune.sim.space.paper_space` at that scale. Both the calibration
(:mod:`iotune.sim.calibrate`) and the printed table (:mod:`iotune.sim.table3`) use it, so
they compare the same quantity. Bandwidths are MiB/s (the paper writes MB/s for the same
binary units: its 32 GB file at 128 cores is 128 x 256 MiB).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from iotune.kernel_specs.vpic import vpic_pattern
from iotune.sim.simulate import simulate_times
from iotune.sim.space import paper_space
from iotune.sim.system import SimSystem
from iotune.workload.pattern import Pattern


@dataclass(frozen=True)
class PaperRow:
    """One row of the paper's Table 3 (file size in GB, bandwidths in MB/s as printed)."""

    cores: int
    file_gb: int
    tuned_mib_s: float
    default_mib_s: float
    speedup: float


#: The paper's Table 3: cores, file size (GB), tuned MB/s, default MB/s, speedup.
PAPER_TABLE3: tuple[tuple[int, int, float, float, float], ...] = (
    (128, 32, 2074.65, 471.75, 4.40),
    (512, 128, 5185.4, 408.6, 12.69),
    (1024, 256, 6181.75, 336.6, 18.37),
    (2048, 512, 11422.28, 412.19, 27.71),
    (8192, 2048, 18857.3, 345.27, 54.62),
)


def paper_rows() -> tuple[PaperRow, ...]:
    """:data:`PAPER_TABLE3` as :class:`PaperRow` objects, in the paper's order."""
    return tuple(PaperRow(*row) for row in PAPER_TABLE3)


@dataclass(frozen=True)
class ModelPoint:
    """The model's noise-free Table 3 figures at one scale, and what it chose."""

    cores: int
    pattern: Pattern
    space: pd.DataFrame
    best: int
    tuned_mib_s: float
    default_mib_s: float

    @property
    def speedup(self) -> float:
        """Tuned over default bandwidth."""
        return self.tuned_mib_s / self.default_mib_s

    @property
    def best_config(self) -> dict[str, int]:
        """The tuned configuration: stripe count, stripe size (bytes), aggregators."""
        row = self.space.iloc[self.best]
        return {key: int(row[key]) for key in ("stripe_count", "stripe_size", "cb_nodes")}


def model_point(system: SimSystem, cores: int) -> ModelPoint:
    """Noise-free tuned and default bandwidth of VPIC-IO at ``cores`` ranks on ``system``."""
    pattern = vpic_pattern(cores)
    space = paper_space(cores, cores_per_node=system.cores_per_node, ost_count=system.ost_count)
    tuned = simulate_times(system, pattern, space, noise=0.0).bandwidth_mib_s
    best = int(np.argmax(tuned))
    default = simulate_times(system, pattern, None, noise=0.0).bandwidth_mib_s
    return ModelPoint(cores, pattern, space, best, float(tuned[best]), float(default))
