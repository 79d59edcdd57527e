"""The search context ``tune`` gives a strategy: a backend to measure with, a sink to record in.

:class:`MeasuringContext` is the one concrete :class:`~iotune.strategies.base.SearchContext`:
it measures each configuration through a :class:`~iotune.backends.Backend` (the evaluator:
real MPI runs, the simulator, recorded runs, or any object with the same interface), with
``repetitions`` runs each, optionally state-aware (busy runs repeated), and hands every
record to a :class:`Sink`:

- :class:`StoreSink` appends to a store (read once, through a
  :class:`~iotune.store.records.StoreIndex`), reuses earlier measurements of a configuration
  unless fresh, and gives the model the store's measurements of the kernel as training data;
- :class:`MemorySink` keeps measurements in memory beside a given training frame (the
  benchmarks and tests, where nothing is written).
"""

from __future__ import annotations

import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from iotune.backends import Backend, RunRequest
from iotune.errors import ConfigError
from iotune.execution import interrupt
from iotune.execution.failures import environment_failure_of
from iotune.settings.in_effect import IGNORED, effects_of, likely_reason
from iotune.settings.values import config_key, describe_value
from iotune.store.index import StoreIndex
from iotune.store.records import Measurement, frame_of
from iotune.strategies.base import STATISTICS, Configuration, Evaluation, SearchContext
from iotune.variability.state import (
    StatePolicy,
    StateTracker,
    probe_latencies,
    ranking_times,
    should_repeat,
)

if TYPE_CHECKING:
    import pandas as pd

ProgressFn = Callable[[str], None]


class Sink(ABC):
    """Where a search's measurements go, and what it may reuse and learn from."""

    @abstractmethod
    def record(self, record: dict[str, Any]) -> Measurement:
        """Keep one backend record (already tagged); the measurement as kept."""

    def earlier(self, key: str) -> list[Measurement]:
        """Measurements of configuration ``key`` made before this search (none by default)."""
        return []

    @abstractmethod
    def training_frame(self) -> pd.DataFrame | None:
        """Measurements to fit a model on (training data and this search's), if any."""

    def probe_latencies(self, size_bytes: int) -> list[float]:
        """Earlier storage-probe latencies of ``size_bytes`` (for a state-aware search)."""
        return []

    def earlier_runs(self, kernel: str, cores: int, params: Mapping[str, Any], *,
                     exclude: str = "", target: str = "write") -> list[Evaluation]:
        """Earlier successful runs at ``cores`` of ``kernel`` with ``params`` (every
        campaign), one :class:`Evaluation` per configuration but ``exclude``: what the
        noise is known from before a search (none by default)."""
        return []


class StoreSink(Sink):
    """A store: read once, appended to; earlier ``tune`` measurements of ``backend`` from
    ``source`` reused unless ``reuse`` is False (ok and failed ones, only ok ones with
    ``retry_failed``; interrupted runs and failures of the environment never count);
    training data = the store's measurements of ``kernel`` by ``backend`` from ``source``
    (every campaign, this search's included). ``source`` None takes every source (stores
    of one source)."""

    def __init__(self, index: StoreIndex, *, kernel: str, backend: str,
                 source: str | None = None, reuse: bool = True,
                 retry_failed: bool = False) -> None:
        self.index, self.kernel, self.backend, self.source = index, kernel, backend, source
        self._earlier = index.by_key(backend=backend, campaign="tune") if reuse else {}
        self._reused_statuses = ("ok",) if retry_failed else ("ok", "failed")

    def record(self, record: dict[str, Any]) -> Measurement:
        return self.index.append(record)

    def earlier(self, key: str) -> list[Measurement]:
        """Earlier measurements of ``key`` to reuse; a failure of the environment is none
        (:mod:`iotune.execution.failures`): it says nothing of the configuration."""
        return [m for m in self._earlier.get(key, []) if m.status in self._reused_statuses
                and (self.source is None or m.source == self.source)
                and (m.status != "failed" or environment_failure_of(m.record) is None)]

    def training_frame(self) -> pd.DataFrame:
        frame = self.index.training_frame(self.kernel, self.backend)
        if self.source is None or frame.empty or "source" not in frame.columns:
            return frame
        return frame[frame["source"] == self.source]

    def probe_latencies(self, size_bytes: int) -> list[float]:
        return probe_latencies(self.index.probes, size_bytes=size_bytes)

    def earlier_runs(self, kernel: str, cores: int, params: Mapping[str, Any], *,
                     exclude: str = "", target: str = "write") -> list[Evaluation]:
        """Earlier runs of the same source (whatever ``reuse`` says: knowing the noise
        reuses no measurement), grouped by configuration."""
        groups: dict[str, Evaluation] = {}
        for m in self.index.select(kernel=kernel, backend=self.backend):
            if (m.cores != cores or m.config_key == exclude or not m.ok_for(target)
                    or (self.source is not None and m.source != self.source)
                    or m.params != dict(params)):
                continue
            evaluation = groups.setdefault(m.config_key, Evaluation(m.settings, m.config_key))
            evaluation.times.append(m.time_for(target))
            evaluation.measurements.append(m)
        return list(groups.values())


class MemorySink(Sink):
    """Measurements kept in memory; training data = ``training`` (may be None) plus them."""

    def __init__(self, training: pd.DataFrame | None = None) -> None:
        self.training = training
        self.measurements: list[Measurement] = []

    def record(self, record: dict[str, Any]) -> Measurement:
        measurement = Measurement.from_record(record)
        self.measurements.append(measurement)
        return measurement

    def training_frame(self) -> pd.DataFrame | None:
        import pandas as pd

        measured = frame_of(self.measurements)
        frames = [f for f in (self.training, measured) if f is not None and not f.empty]
        return pd.concat(frames, ignore_index=True) if frames else None


class MeasuringContext(SearchContext):
    """Evaluates configurations of ``kernel`` at ``cores`` through ``backend`` into ``sink``.

    Each configuration gets ``repetitions`` runs (earlier ones from the sink count), summed
    up by ``statistic``; with a ``state_policy``, runs in a busy storage state are repeated
    and ranking uses idle runs (see :mod:`iotune.variability.state`). ``tags`` are added to
    every record (the strategy's name and a tune id, so a report can follow one search).
    """

    def __init__(self, *, backend: Backend, sink: Sink, kernel: str, cores: int,
                 params: Mapping[str, Any], candidates: Sequence[Configuration],
                 budget: int | None, repetitions: int = 1, statistic: str = "median",
                 progress: ProgressFn | None = None, strategy: str = "",
                 state_policy: StatePolicy | None = None, target: str = "write") -> None:
        super().__init__(candidates, budget)
        self.backend, self.sink, self.kernel, self.cores = backend, sink, kernel, cores
        self.target = target
        self.params = dict(params)
        self.repetitions, self.statistic = repetitions, statistic
        self.progress = progress
        self.runs = 0
        self.reused = 0
        #: Earlier measurements reused, by the id of the tune that made them.
        self.reused_from: dict[str, int] = {}
        self.policy = state_policy or StatePolicy()
        self.tracker = None if state_policy is None else _start_tracker(sink, backend,
                                                                        state_policy)
        self.tags = {"campaign": "tune", "strategy": strategy,
                     "tune_id": uuid.uuid4().hex[:12], "target_cores": cores}

    def key(self, settings: Mapping[str, Any]) -> str:
        """The store key of ``settings`` (of its :meth:`equivalent`, once settings are
        ignored)."""
        return config_key(self.kernel, self.cores, self.equivalent(settings), self.params)

    def training_frame(self) -> pd.DataFrame | None:
        """The sink's training data; for a read or total target only the rows that timed it."""
        frame = self.sink.training_frame()
        if frame is None or self.target == "write":
            return frame
        from iotune.model.from_measurements import timed_rows

        return timed_rows(frame, self.target)

    def candidate_frame(self) -> pd.DataFrame:
        import pandas as pd

        frame = pd.DataFrame(self.candidates)
        frame["cores"] = self.cores
        return frame

    def _measure(self, settings: Configuration, evaluation: Evaluation) -> None:
        measurements = self.sink.earlier(evaluation.key)
        if self.tracker is None:
            measurements = measurements[: self.repetitions]
        self._count_reused(measurements)
        for earlier in measurements:
            self._notice_ignored(settings, earlier)
        request = RunRequest(self.kernel, self.cores, settings, self.params)
        for target in range(len(measurements), self.repetitions):
            measurements += self._measure_until_idle(request, evaluation, len(measurements),
                                                     f"rep {target + 1}/{self.repetitions}")
        evaluation.measurements = measurements
        self._summarise(evaluation)

    def _count_reused(self, measurements: Sequence[Measurement]) -> None:
        """Count earlier measurements used instead of new runs, by the tune that made them."""
        self.reused += len(measurements)
        for m in measurements:
            tune_id = str(m.record.get("tune_id") or "an earlier run")
            self.reused_from[tune_id] = self.reused_from.get(tune_id, 0) + 1

    def _measure_again(self, evaluation: Evaluation) -> None:
        """One more repetition: an unused earlier measurement of it if any, else a new run."""
        done = len(evaluation.measurements)
        earlier = self.sink.earlier(evaluation.key)
        if done < len(earlier):
            evaluation.measurements.append(earlier[done])
            self._count_reused(earlier[done:done + 1])
        else:
            request = RunRequest(self.kernel, self.cores, evaluation.settings, self.params)
            evaluation.measurements += self._measure_until_idle(
                request, evaluation, done, f"rep {done + 1} (race)")
        self._summarise(evaluation)

    def _measure_until_idle(self, request: RunRequest, evaluation: Evaluation, rep: int,
                            what: str) -> list[Measurement]:
        """One repetition; state-aware, repeated while the storage is busy (policy)."""
        measurements = []
        repeats = 0
        while True:
            if self.progress:
                again = f" (busy, repeat {repeats})" if repeats else ""
                self.progress(f"run {self.runs + 1}: config {evaluation.order} {what}{again} "
                              f"{_settings_text(request.settings)}")
            measurement = self._measure_once(request, rep)
            rep += 1
            measurements.append(measurement)
            if self.tracker is None or not should_repeat(str(measurement.state), repeats,
                                                         self.policy):
                return measurements
            repeats += 1

    def _summarise(self, evaluation: Evaluation) -> None:
        """Times, bandwidths, failures and the statistic from ``evaluation.measurements``."""
        evaluation.times, evaluation.bandwidths, evaluation.failures = [], [], []
        states = []
        for measurement in evaluation.measurements:
            if measurement.ok_for(self.target):
                evaluation.times.append(measurement.time_for(self.target))
                evaluation.bandwidths.append(float(_bandwidth(measurement, self.target) or 0.0))
                states.append(measurement.state or "unknown")
            elif measurement.ok:
                evaluation.failures.append(f"the run did not time the {self.target} target")
            else:
                evaluation.failures.append(str(measurement.error))
        evaluation.states = states
        if self.tracker is not None and evaluation.times:
            ranked = ranking_times(evaluation.times, states, self.policy.min_idle)
            evaluation.statistic = STATISTICS[self.statistic](ranked)
        else:
            evaluation.summarise(self.statistic)
        if self.progress and evaluation.statistic is not None:
            best = max(evaluation.bandwidths, default=0.0)
            self.progress(f"  -> {self.statistic} {evaluation.statistic:.3f} s"
                          + (f", {best:.1f} MiB/s best rep" if best > 0 else ""))

    def _measure_once(self, request: RunRequest, rep: int) -> Measurement:
        """One measurement, tagged with the storage state when state-aware, then recorded.

        A stop signal received since the last run ends the search here
        (:class:`iotune.execution.interrupt.Interrupted`)."""
        interrupt.check()
        latency = None
        if self.tracker is not None:
            latency = self.backend.probe_before(self.policy.probe_size)
        record = self.backend.measure(request, rep)
        if self.tracker is not None:
            if latency is None:
                latency = self.backend.probe_after(record, self.policy.probe_size)
            if latency is not None:
                record["probe"] = self.tracker.observe(latency).as_record(self.policy.probe_size)
        self.runs += 1
        measurement = self.sink.record({**self.tags, **record})
        self._notice_ignored(request.settings, measurement)
        return measurement

    def _notice_ignored(self, settings: Mapping[str, Any], measurement: Measurement) -> None:
        """Stop varying each setting this run showed to change nothing here (its hint
        absent from the file, striping off Lustre: :data:`iotune.settings.in_effect.IGNORED`)."""
        if measurement.status != "ok" or not IGNORED.intersection(measurement.effects.values()):
            return  # the statuses come with the measurement: no record is read for them
        result = measurement.record.get("result") or {}
        for name, effect in effects_of(settings, result).items():
            if effect.status in IGNORED and name not in self.ignored:
                why = likely_reason(effect, result)
                self.ignore_setting(name, settings[name], why)
                if self.progress:
                    self.progress(f"{name} has no effect here ({why}); searching it no "
                                  "further and never recommending it")


def _start_tracker(sink: Sink, backend: Backend, policy: StatePolicy) -> StateTracker:
    """A state tracker seeded with earlier probe latencies of the same size, if any."""
    if not backend.probes:
        raise ConfigError(f"--state-aware: the {backend.name} backend has no storage-state "
                          "probes")
    return StateTracker(policy, latencies=sink.probe_latencies(policy.probe_size))


def _bandwidth(measurement: Measurement, target: str) -> float | None:
    """MiB/s of ``target``: the write's or the read's bandwidth, or for ``total`` the bytes
    written and read over the two times added."""
    if target == "write":
        return measurement.bandwidth_mib_s
    if target == "read":
        return measurement.read_bandwidth_mib_s
    moved = (measurement.bytes_written or 0) + (measurement.bytes_read or 0)
    return moved / 2**20 / measurement.time_for(target) if moved else None


def _settings_text(settings: Mapping[str, Any]) -> str:
    return " ".join(f"{k}={describe_value(k, v)}" for k, v in settings.items()) or "defaults"
