"""A simulated Lustre system: an analytic model of parallel write time, with noise.

Use it to plan at scales this machine cannot run. Results are labelled ``backend = "sim"``
and carry the system name; they are never measurements.

>>> from iotune.kernel_specs.vpic import vpic_pattern
>>> from iotune.sim import simulate_times
>>> r = simulate_times("hopper", vpic_pattern(8192), {"stripe_count": [2, 156]}, noise=0)
>>> r.backend, r.system
('sim', 'hopper')

Modules: :mod:`~iotune.sim.system` (presets and validation), :mod:`~iotune.sim.configs`
(configuration columns and defaults), :mod:`~iotune.sim.lustre` (the model and its
equations), :mod:`~iotune.sim.noise` (idle/busy log-normal mixture),
:mod:`~iotune.sim.space` (the paper's search spaces), :mod:`~iotune.sim.paper` (the
paper's Table 3 and the model's counterpart at one scale), :mod:`~iotune.sim.calibrate`
(the fit of three Hopper constants on part of Table 3, and the out-of-sample error),
:mod:`~iotune.sim.table3` (Table 3 beside the model, in-sample and out-of-sample rows
labelled). ``docs/sim.md`` has the whole model in one place.

What is written, the :class:`~iotune.workload.pattern.Pattern` (re-exported here), lives in
:mod:`iotune.workload`, below the kernel specs that make the patterns. This package sits
above the kernel specs: the paper's data set it is calibrated on is expressed in VPIC-IO
runs, so :mod:`~iotune.sim.paper` builds its patterns with
:func:`~iotune.kernel_specs.vpic.vpic_pattern`; nothing below imports the simulator
(the ``sim`` backend and the storage-state probes, above it, do).
"""

from __future__ import annotations

from iotune.sim.configs import IGNORED_HDF5_COLUMNS, MODELLED_COLUMNS
from iotune.sim.lustre import Breakdown
from iotune.sim.simulate import SimResult, model_breakdown, simulate_times
from iotune.sim.space import paper_space
from iotune.sim.system import NoiseSpec, SimDefaults, SimSystem, list_systems, load_system
from iotune.workload.pattern import Pattern

__all__ = [
    "IGNORED_HDF5_COLUMNS",
    "MODELLED_COLUMNS",
    "Breakdown",
    "NoiseSpec",
    "Pattern",
    "SimDefaults",
    "SimResult",
    "SimSystem",
    "list_systems",
    "load_system",
    "model_breakdown",
    "paper_space",
    "simulate_times",
]
