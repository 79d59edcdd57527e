"""I/O variability: idle and busy file-system states, measured, modelled and used.

After Wan et al., "I/O Performance Characterization and Prediction through Machine Learning
on HPC Systems": small synchronous writes (probes) show whether a shared file system is idle
or busy; write times form a two-state log-normal mixture; classifiers predict the state from
latency and job-queue features; and knowing the states, data can be placed so idle and busy
targets finish together. ``docs/variability.md`` has the whole picture.

Modules: :mod:`~iotune.variability.probe` (timed writes, the probe loop),
:mod:`~iotune.variability.queue` (job-queue features), :mod:`~iotune.variability.mixture`
(the mixture, on scikit-learn's GaussianMixture, guarded against collapse),
:mod:`~iotune.variability.state` (state model and the tuner's policy),
:mod:`~iotune.variability.runs` (measured times relative to a leave-one-out idle level),
:mod:`~iotune.variability.classify` (features, scikit-learn classifiers),
:mod:`~iotune.variability.validation` (k-fold and time-ordered scores),
:mod:`~iotune.variability.classification` (per-target classification, as ``classify``
reports it),
:mod:`~iotune.variability.placement` (the idle share alpha and its speedup),
:mod:`~iotune.variability.simulate` (probes of the simulated system, with known truth),
:mod:`~iotune.variability.samples` (the probe or run samples of a store) and
:mod:`~iotune.variability.analysis` (states and placement from those samples,
as the commands report them).
"""

from __future__ import annotations

from iotune.variability.mixture import Component, MixtureFit, fit_mixture
from iotune.variability.placement import Placement, idle_share, placement
from iotune.variability.probe import PROBE_SIZE, ProbeSettings, probe_once, run_probe
from iotune.variability.simulate import (
    probe_base_latency,
    simulated_probe_latencies,
    simulated_probe_latency,
)
from iotune.variability.state import (
    StateModel,
    StatePolicy,
    StateTracker,
    Tag,
    fit_state_model,
    model_from_store,
    ranking_times,
    should_repeat,
)

__all__ = [
    "PROBE_SIZE",
    "Component",
    "MixtureFit",
    "Placement",
    "ProbeSettings",
    "StateModel",
    "StatePolicy",
    "StateTracker",
    "Tag",
    "fit_mixture",
    "fit_state_model",
    "idle_share",
    "model_from_store",
    "placement",
    "probe_base_latency",
    "probe_once",
    "ranking_times",
    "run_probe",
    "should_repeat",
    "simulated_probe_latencies",
    "simulated_probe_latency",
]
