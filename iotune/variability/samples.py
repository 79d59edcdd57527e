"""The samples a state analysis runs on, chosen from a store's records.

Two sources, as ``iotune states`` and ``iotune classify`` name them:

``probe``
    the target latencies of ``iotune probe`` rounds (:func:`~iotune.variability.classify.
    probe_frame`), of one backend and one probe size: latencies of different sizes do not
    share one mixture.
``runs``
    successful measurements as times relative to the idle level of their configuration,
    estimated from its *other* measurements (:func:`~iotune.variability.runs.
    relative_run_times`), of one backend.

The backend is the one asked for, else the only one in the store; several without a choice
is a DataError, as is a store file that does not exist (StoreError).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from iotune.errors import ConfigError, DataError, StoreError
from iotune.settings.units import format_bytes
from iotune.store import Store
from iotune.variability.classify import choose_backend, probe_frame, probe_records
from iotune.variability.runs import MIN_RUNS_PER_CONFIG, RUN_CAMPAIGNS, relative_run_times

if TYPE_CHECKING:
    import pandas as pd

SOURCES = ("probe", "runs")


@dataclass(frozen=True)
class Samples:
    """Values to fit the state mixture on, and the frame they come from.

    ``frame`` has one row per sample; ``column`` is its value column (``latency`` in
    seconds, or ``relative``), ``unit`` that value's unit (``s`` or ``rel``) and
    ``description`` says what the samples are, for reports. ``size_bytes`` is the probe
    size (None for runs, or when no round says).
    """

    source: str
    frame: pd.DataFrame
    column: str
    unit: str
    description: str
    backend: str
    size_bytes: int | None = None

    @property
    def values(self) -> list[float]:
        """The sample values, in frame order."""
        return [] if self.frame.empty else [float(v) for v in self.frame[self.column]]


def store_records(store: Store) -> list[dict[str, Any]]:
    """Every record of ``store``; StoreError when its file does not exist."""
    if not store.exists():
        raise StoreError(f"store {store.path}: no such file")
    return store.records()


def probe_samples(records: Sequence[dict[str, Any]], backend: str | None = None) -> Samples:
    """The probe latencies among ``records`` of one backend (``backend``, else the only
    one); DataError when they were written with several probe sizes."""
    rounds = probe_records(records)
    chosen = choose_backend(rounds, backend, "probe rounds")
    rounds = [r for r in rounds if r.get("backend") == chosen]
    sizes = sorted({r.get("size_bytes") for r in rounds}, key=str)
    if len(sizes) > 1:
        raise DataError(f"probe rounds of several sizes ({', '.join(map(str, sizes))} bytes) "
                        "in the store; their latencies do not share one mixture")
    size = sizes[0] if sizes else None
    what = f"probe latencies (backend {chosen}, {format_bytes(size or 0)} writes)"
    return Samples("probe", probe_frame(rounds), "latency", "s", what, chosen, size)


def run_samples(records: Sequence[dict[str, Any]], backend: str | None = None) -> Samples:
    """The successful measurements among ``records`` of one backend, as times relative to
    their configuration's leave-one-out idle level (configurations measured fewer than
    :data:`~iotune.variability.runs.MIN_RUNS_PER_CONFIG` times are left out)."""
    runs = [r for r in records if r.get("campaign") in RUN_CAMPAIGNS and r.get("status") == "ok"]
    chosen = choose_backend(runs, backend, "measurements")
    frame = relative_run_times(r for r in runs if r.get("backend") == chosen)
    what = (f"measured times relative to their configuration's idle level from its other "
            f"measurements (backend {chosen}, configurations with >= {MIN_RUNS_PER_CONFIG} "
            "measurements)")
    return Samples("runs", frame, "relative", "rel", what, chosen)


def samples_of(records: Sequence[dict[str, Any]], source: str,
               backend: str | None = None) -> Samples:
    """:func:`probe_samples` or :func:`run_samples` of ``records``, by ``source``."""
    if source == "probe":
        return probe_samples(records, backend)
    if source == "runs":
        return run_samples(records, backend)
    raise ConfigError(f"--source: {source!r} is not one of {', '.join(SOURCES)}")
