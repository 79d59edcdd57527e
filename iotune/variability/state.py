"""The file-system state at the time of a measurement, and how a tuner uses it.

A :class:`StateModel` is the two-state log-normal mixture of probe latencies
(:mod:`iotune.variability.mixture`); it labels a latency *idle* or *busy* by its posterior.
A tuner uses it so (Wan et al. make the same split for data placement):

1. right before each measurement, probe (:func:`~iotune.variability.probe.probe_once`, or
   :func:`~iotune.variability.simulate.simulated_probe_latency` for the sim backend) and tag
   the measurement with the state of that latency (:meth:`StateTracker.observe`);
2. repeat a measurement tagged busy, up to :attr:`StatePolicy.max_repeats` more times
   (:func:`should_repeat`);
3. rank configurations on their idle measurements when there are at least
   :attr:`StatePolicy.min_idle` of them, else on all (:func:`ranking_times`).

Until :attr:`StatePolicy.min_probes` latencies are known the tracker has no model and tags
``unknown`` (never repeated, counted as idle for ranking); with a model from earlier probes
(:func:`model_from_store`) it labels from the first measurement.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from iotune.errors import ConfigError, DataError
from iotune.store import Store
from iotune.variability.mixture import MIN_SAMPLES, MixtureFit, fit_mixture
from iotune.variability.probe import PROBE_SIZE

State = Literal["idle", "busy"]
Tagged = Literal["idle", "busy", "unknown"]
LABEL_METHODS = ("map", "sample")
MODEL_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class StateModel:
    """Idle/busy states of latencies, from a fitted mixture.

    ``bimodal`` False means the latencies did not show two states (BIC prefers one
    log-normal); such a model labels everything idle, so a tuner does not repeat
    measurements for nothing. ``size_bytes`` is the probe size the latencies were taken
    with (None if unknown): latencies of other sizes must not be labelled with this model.
    """

    mixture: MixtureFit
    size_bytes: int | None = None

    @property
    def bimodal(self) -> bool:
        return self.mixture.bimodal

    def posterior_busy(self, latency: float) -> float:
        """``P(busy | latency)`` under the mixture (0.0 for a model that is not bimodal)."""
        if not self.bimodal:
            return 0.0
        return float(self.mixture.posterior_busy(latency)[0])

    def posteriors(self, latencies: Sequence[float] | npt.NDArray[np.float64]
                   ) -> npt.NDArray[np.float64]:
        """:meth:`posterior_busy` of many latencies at once."""
        values = np.asarray(latencies, dtype=np.float64)
        if not self.bimodal:
            return np.zeros(values.size)
        return self.mixture.posterior_busy(values)

    def label(self, latency: float) -> State:
        """``busy`` when ``P(busy | latency) > 1/2`` (maximum a posteriori), else ``idle``."""
        return "busy" if self.posterior_busy(latency) > 0.5 else "idle"

    def labels(self, latencies: Sequence[float] | npt.NDArray[np.float64],
               method: str = "map", rng: np.random.Generator | None = None) -> list[State]:
        """Labels of many latencies: ``map`` (as :meth:`label`) or ``sample`` (busy with
        probability ``P(busy | latency)``, as Wan et al. label their data; give a seeded
        ``rng`` for reproducible labels)."""
        if method not in LABEL_METHODS:
            raise ConfigError(f"--label: {method!r} is not one of {', '.join(LABEL_METHODS)}")
        posterior = self.posteriors(latencies)
        if method == "map":
            busy = posterior > 0.5
        else:
            busy = (rng if rng is not None else np.random.default_rng()).random(
                posterior.size) < posterior
        return ["busy" if b else "idle" for b in busy]

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": MODEL_SCHEMA_VERSION, "size_bytes": self.size_bytes,
                "mixture": self.mixture.as_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StateModel:
        if not isinstance(data, dict) or data.get("schema_version") != MODEL_SCHEMA_VERSION:
            raise DataError("state model: not a state model of schema_version "
                            f"{MODEL_SCHEMA_VERSION}")
        size = data.get("size_bytes")
        return cls(MixtureFit.from_dict(data.get("mixture") or {}),
                   int(size) if size is not None else None)


def fit_state_model(latencies: Iterable[float], *, size_bytes: int | None = None,
                    min_samples: int = MIN_SAMPLES) -> StateModel:
    """Fit the two-state mixture to probe ``latencies`` (seconds).

    Raises DataError with fewer than ``min_samples`` latencies (default 20) or a latency
    that is not a positive finite number.
    """
    values = [float(v) for v in latencies]
    if len(values) < min_samples:
        raise DataError(f"state model: {len(values)} samples are too few; fitting idle and "
                        f"busy states needs at least {min_samples}")
    return StateModel(fit_mixture(values, min_samples=min_samples), size_bytes)


@dataclass(frozen=True)
class StatePolicy:
    """How a tuner acts on states (see the module docstring).

    ``max_repeats``: extra measurements of a repetition tagged busy (0 turns repeats off);
    ``min_idle``: idle measurements a configuration needs to be ranked on idle ones only;
    ``min_probes``: latencies before a model is fitted online; ``refit_every``: new
    latencies between online refits; ``probe_size``: bytes per probe.
    """

    max_repeats: int = 2
    min_idle: int = 2
    min_probes: int = MIN_SAMPLES
    refit_every: int = 10
    probe_size: int = PROBE_SIZE

    def __post_init__(self) -> None:
        for name, minimum in (("max_repeats", 0), ("min_idle", 1), ("min_probes", MIN_SAMPLES),
                              ("refit_every", 1), ("probe_size", 1)):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
                raise ConfigError(f"state.{name}: {value!r} is not an integer >= {minimum}")


@dataclass(frozen=True)
class Tag:
    """The state a measurement was taken in: its probe latency, label and posterior."""

    latency_s: float
    state: Tagged
    posterior_busy: float | None

    def as_record(self, size_bytes: int | None = None) -> dict[str, Any]:
        """The ``probe`` field of a measurement record."""
        return {"latency_s": self.latency_s, "size_bytes": size_bytes, "state": self.state,
                "posterior_busy": self.posterior_busy}


@dataclass
class StateTracker:
    """Collects probe latencies, keeps a state model up to date and tags measurements.

    Start it with a model from earlier probes (``model``) and/or their latencies; each
    :meth:`observe` adds a latency, refits (every ``policy.refit_every`` new latencies, once
    ``policy.min_probes`` are known) and returns the :class:`Tag` of that latency.
    """

    policy: StatePolicy = field(default_factory=StatePolicy)
    model: StateModel | None = None
    latencies: list[float] = field(default_factory=list)
    _since_fit: int = 0

    def __post_init__(self) -> None:
        self.latencies = [float(v) for v in self.latencies]
        if self.model is None and len(self.latencies) >= self.policy.min_probes:
            self.refit()

    def refit(self) -> StateModel | None:
        """Refit on all latencies so far (no change with fewer than ``min_probes``)."""
        if len(self.latencies) >= self.policy.min_probes:
            self.model = fit_state_model(self.latencies, size_bytes=self.policy.probe_size,
                                         min_samples=self.policy.min_probes)
            self._since_fit = 0
        return self.model

    def observe(self, latency: float) -> Tag:
        """Add one probe latency and return its tag (``unknown`` while there is no model)."""
        value = float(latency)
        if not (math.isfinite(value) and value > 0):
            raise DataError(f"probe latency: {latency!r} is not a positive finite number")
        self.latencies.append(value)
        self._since_fit += 1
        due = self.model is None or self._since_fit >= self.policy.refit_every
        if due and len(self.latencies) >= self.policy.min_probes:
            self.refit()
        return self.tag(value)

    def tag(self, latency: float) -> Tag:
        """The tag of ``latency`` under the current model, without recording it."""
        if self.model is None:
            return Tag(float(latency), "unknown", None)
        return Tag(float(latency), self.model.label(latency), self.model.posterior_busy(latency))


def should_repeat(tag: Tag | str, repeats_done: int, policy: StatePolicy) -> bool:
    """Whether to measure again: the measurement was busy and fewer than
    ``policy.max_repeats`` repeats of it were made."""
    state = tag.state if isinstance(tag, Tag) else tag
    return state == "busy" and repeats_done < policy.max_repeats


def ranking_times(times: Sequence[float], states: Sequence[str], min_idle: int) -> list[float]:
    """The times a configuration is ranked on: those not tagged busy when at least
    ``min_idle`` of them exist, else all of them (``unknown`` counts as idle)."""
    if len(times) != len(states):
        raise DataError(f"ranking: {len(times)} times but {len(states)} states")
    calm = [t for t, s in zip(times, states, strict=True) if s != "busy"]
    return calm if len(calm) >= min_idle else list(times)


def probe_latencies(records: Iterable[dict[str, Any]], *, backend: str | None = None,
                    size_bytes: int | None = None) -> list[float]:
    """Every target latency of the probe rounds in ``records`` (optionally of one backend
    and one probe size), in record order; failed writes are skipped."""
    out: list[float] = []
    for record in records:
        if record.get("campaign") != "probe" or record.get("kind") != "latency":
            continue
        if backend is not None and record.get("backend") != backend:
            continue
        if size_bytes is not None and record.get("size_bytes") != size_bytes:
            continue
        out.extend(float(t["latency_s"]) for t in record.get("targets") or ()
                   if t.get("latency_s") is not None)
    return out


def model_from_store(store: Store, *, backend: str = "probe", size_bytes: int = PROBE_SIZE,
                     min_samples: int = MIN_SAMPLES) -> StateModel:
    """A state model fitted to the probe latencies of ``backend`` and ``size_bytes`` in
    ``store`` (``iotune probe`` records); DataError when there are too few."""
    latencies = probe_latencies(store.iter_records(), backend=backend, size_bytes=size_bytes)
    if len(latencies) < min_samples:
        raise DataError(f"store {store.path}: {len(latencies)} probe latencies of "
                        f"{size_bytes} bytes (backend {backend}); a state model needs at "
                        f"least {min_samples} (run 'iotune probe')")
    return fit_state_model(latencies, size_bytes=size_bytes, min_samples=min_samples)
