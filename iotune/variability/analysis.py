"""What ``iotune states``, ``classify`` and ``placement`` compute from a store's samples.

* :func:`label_states` fits the idle/busy mixture to the samples and labels each one
  (:class:`StateLabels`, whose :meth:`~StateLabels.document` is the ``states`` output);
* :func:`parse_classifiers` reads ``--classifier`` (the classification itself is
  :mod:`iotune.variability.classification`);
* :func:`latest_probe_states` gives the states of the targets in the latest probe round
  and the mixture's mean times, and :func:`placement_document` the placement advice from
  them or from counts and times given by hand;
* :func:`replay_document` the placement replayed over the store's probe rounds
  (:mod:`iotune.variability.replay`), or why it could not be.

Each returns plain results; the commands only parse options and print.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError, DataError, StoreError
from iotune.variability.classify import CLASSIFIERS, label_latencies
from iotune.variability.placement import placement
from iotune.variability.replay import replay_placement
from iotune.variability.samples import Samples, probe_samples
from iotune.variability.state import StateModel, fit_state_model

#: Frame columns that identify a sample in the labelled-samples listing, when present.
SAMPLE_ID_COLUMNS = ("time", "probe_id", "target", "config_key")


@dataclass(frozen=True)
class StateLabels:
    """The mixture fitted to ``samples`` and each sample's state and posterior.

    ``labels`` are by ``method``: ``map`` (the more probable state) or ``sample`` (drawn
    from the posterior with a generator seeded by ``seed``).
    """

    samples: Samples
    model: StateModel
    labels: list[str]
    posterior_busy: list[float]
    method: str
    seed: int

    @property
    def counts(self) -> dict[str, int]:
        return {"idle": self.labels.count("idle"), "busy": self.labels.count("busy")}

    def components(self) -> list[dict[str, Any]]:
        """One row per mixture component; median and mean carry the samples' unit."""
        unit = self.samples.unit
        return [{"state": c.name, "weight": c.weight, f"median_{unit}": c.median,
                 f"mean_{unit}": c.mean, "sigma": c.sigma} for c in self.model.mixture.components]

    def labelled_rows(self) -> list[dict[str, Any]]:
        """One row per sample: its identifying columns, value, posterior and state."""
        frame, column = self.samples.frame, self.samples.column
        keep = [c for c in SAMPLE_ID_COLUMNS if c in frame.columns]
        values = self.samples.values
        return [{**{c: frame.iloc[i][c] for c in keep}, column: values[i],
                 "posterior_busy": self.posterior_busy[i], "state": self.labels[i]}
                for i in range(len(values))]

    def document(self, with_samples: bool = False) -> dict[str, Any]:
        """The ``iotune states`` result; ``samples_labelled`` only ``with_samples``."""
        mix = self.model.mixture
        data: dict[str, Any] = {
            "source": self.samples.source, "samples_of": self.samples.description,
            "samples": mix.n, "unit": self.samples.unit, "components": self.components(),
            "bimodal": mix.bimodal, "bic_two_states": mix.bic, "bic_one_state": mix.bic_one,
            "label": self.method, "labels": self.counts,
        }
        if self.method == "sample":
            data["seed"] = self.seed
        if with_samples:
            data["samples_labelled"] = self.labelled_rows()
        return data


def label_states(samples: Samples, method: str = "map", seed: int = 0) -> StateLabels:
    """Fit the two-state mixture to ``samples`` and label them; DataError when there are
    too few samples for a fit, ConfigError for an unknown ``method``."""
    values = samples.values
    model = fit_state_model(values)
    labels = label_latencies(model, values, method, seed)
    posterior = [float(p) for p in model.posteriors(values)]
    return StateLabels(samples, model, labels, posterior, method, seed)


def parse_classifiers(text: str) -> list[str]:
    """``"svm, rf"`` into ``["svm", "rf"]``; ConfigError naming the first unknown name."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in CLASSIFIERS]
    if unknown or not names:
        raise ConfigError(f"--classifier: {(unknown or [text])[0]!r} is not one of "
                          f"{', '.join(CLASSIFIERS)}")
    return names


@dataclass(frozen=True)
class ProbeStates:
    """The targets of the latest probe round by state, and the mixture's mean times."""

    idle_targets: list[str]
    busy_targets: list[str]
    round_time: float
    t_idle: float
    t_busy: float
    description: str


def latest_probe_states(records: Sequence[dict[str, Any]],
                        backend: str | None = None) -> ProbeStates:
    """MAP states of the targets in the latest probe round of ``records``, by the mixture
    of all their probe latencies (one backend, one size: :func:`probe_samples`)."""
    samples = probe_samples(records, backend)
    frame = samples.frame
    model = fit_state_model(samples.values, size_bytes=samples.size_bytes)
    last = frame[(frame["probe_id"] == frame["probe_id"].iloc[-1])
                 & (frame["round"] == frame["round"].iloc[-1])]
    labels = model.labels([float(v) for v in last["latency"]])
    names = [str(t) for t in last["target"]]
    return ProbeStates(
        idle_targets=[n for n, s in zip(names, labels, strict=True) if s == "idle"],
        busy_targets=[n for n, s in zip(names, labels, strict=True) if s == "busy"],
        round_time=float(last["time"].iloc[0]),
        t_idle=model.mixture.idle.mean, t_busy=model.mixture.busy.mean,
        description=(f"mixture means of {model.mixture.n} probe latencies "
                     f"(backend {samples.backend})"))


def placement_document(counts: tuple[int, int] | None, times: tuple[float, float] | None,
                       probe_states: ProbeStates | None = None,
                       total: int | None = None) -> dict[str, Any]:
    """The ``iotune placement`` result: :class:`~iotune.variability.placement.Placement`
    of ``counts`` (idle, busy targets) and ``times`` (mean write time idle, busy).

    What is None is taken from ``probe_states`` (the latest round's counts, the mixture's
    means), which is then required, and said in the result (target names, ``times_from``).
    With ``total`` bytes, the bytes for each idle and each busy target (rounded down).
    """
    extra: dict[str, Any] = {}
    if counts is None or times is None:
        if probe_states is None:
            raise ValueError("placement_document: counts and times, or probe states")
        if counts is None:
            counts = (len(probe_states.idle_targets), len(probe_states.busy_targets))
            extra.update(idle_targets=probe_states.idle_targets,
                         busy_targets=probe_states.busy_targets,
                         round_time=probe_states.round_time)
        if times is None:
            times = (probe_states.t_idle, probe_states.t_busy)
            extra["times_from"] = probe_states.description
    advice = placement(*counts, *times)
    data = {**advice.as_dict(), **extra}
    if total is not None:
        data["total_bytes"] = total
        data["bytes_per_idle_target"] = math.floor(total * advice.idle_share)
        data["bytes_per_busy_target"] = math.floor(total * advice.busy_share)
    return data


def replay_document(records: Sequence[dict[str, Any]] | str, backend: str | None,
                    classifier: str) -> dict[str, Any]:
    """The placement replay of the probe rounds among ``records`` (its
    :meth:`~iotune.variability.replay.PlacementReplay.document`), or
    ``{"not_replayed": reason}`` when ``records`` is already a reason (no store) or the rounds
    cannot be replayed (none, too few, several backends)."""
    if isinstance(records, str):
        return {"not_replayed": records}
    try:
        return replay_placement(probe_samples(records, backend),
                                classifier=classifier).document()
    except (DataError, StoreError) as exc:
        return {"not_replayed": str(exc)}
