"""A measurement as a typed value, and an index of a store built in one pass.

The store keeps records as JSON objects (see :mod:`iotune.store`); everything that reads
them goes through :class:`Measurement`, which knows the record's layout (where the times,
the bandwidth and the state are) once, and tolerates what some backends leave unknown (a
replayed run has a total time and no phase times). :class:`StoreIndex` reads a store file
once and answers what ``tune`` and ``train`` ask of it: earlier measurements of a
configuration, finished work, the training frame and the probes.

A record written by one version of iotune and read by another keeps every field:
:attr:`Measurement.record` is the record as stored, and :meth:`Measurement.to_record`
returns it.

:class:`StoreIndex` and :func:`read_dataframe` read through the store's cache
(:mod:`iotune.store_cache`): only the partitions asked for (kernel, backend, campaign) are
loaded, and a measurement's ``record`` is read from the journal when first used.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iotune.errors import StoreError
from iotune.store import SCHEMA_VERSION, Store

if TYPE_CHECKING:
    import pandas as pd

    from iotune.store_cache import Part, Snapshot
    from iotune.store_segments import MemorySegment

#: The phases whose times a record may carry: the write's (``total`` being its open to
#: close) and the read's (``read_total`` being its open to close).
PHASES = ("total", "open", "write", "close", "read_total", "read_open", "read", "read_close")
#: What a search can minimise: the write's time, the read's, or both added (see
#: :meth:`PhaseTimes.for_target`).
TARGETS = ("write", "read", "total")
#: The flat-row column (:meth:`Measurement.row`) holding each target's time.
TARGET_COLUMNS = {"write": "write_time", "read": "read_time", "total": "io_time"}

#: Prefix of a flat row's columns of the hints a run read back (``in_effect.cb_nodes``).
IN_EFFECT_PREFIX = "in_effect."
#: Prefix of a flat row's columns saying whether each setting took effect.
EFFECT_PREFIX = "effect."

#: Identity columns of a flat row, in order (see :meth:`Measurement.row`).
IDENTITY_COLUMNS = ("id", "recorded_at", "config_key", "campaign", "kernel", "cores", "nodes",
                    "rep", "backend", "provenance", "system", "status", "error", "host",
                    "fs_type", "started_at", "state")


@dataclass(frozen=True)
class PhaseTimes:
    """Seconds spent in each phase; None where the run did not say (e.g. replayed runs, or
    the write of a run that timed only its read)."""

    total: float | None = None
    open: float | None = None
    write: float | None = None
    close: float | None = None
    read_total: float | None = None
    read_open: float | None = None
    read: float | None = None
    read_close: float | None = None

    @classmethod
    def from_json(cls, times: Mapping[str, Any] | None) -> PhaseTimes:
        times = times or {}
        return cls(**{p: _number(times.get(p)) for p in PHASES})

    def text(self) -> str:
        """``open/write/close`` in seconds to three digits, ``?`` where unknown; a read
        phase follows as ``read open/read/close``."""
        parts = []
        if self.read_total is None or self.total is not None:
            parts.append("/".join(_seconds(t) for t in (self.open, self.write, self.close)))
        if self.read_total is not None:
            parts.append("read " + "/".join(_seconds(t) for t in (self.read_open, self.read,
                                                                   self.read_close)))
        return " ".join(parts)

    def for_target(self, target: str) -> float | None:
        """The time ``target`` minimises: ``write`` the write's open to close, ``read`` the
        read's, ``total`` their sum (the two are separated by a barrier, so the sum of
        their maxima over ranks is the run's time); None where the run did not time it."""
        if target == "write":
            return self.total
        if target == "read":
            return self.read_total
        if target != "total":
            raise ValueError(f"target {target!r} is not one of {', '.join(TARGETS)}")
        if self.total is None or self.read_total is None:
            return None
        return self.total + self.read_total


@dataclass(frozen=True)
class Measurement:
    """One run of one configuration, as the store records it.

    ``ok`` runs have ``times.total`` (seconds, open to close of the write) and a bandwidth,
    or, when they timed only a read, ``times.read_total`` and ``read_bandwidth_mib_s``;
    failed runs have an ``error``. :attr:`record` is the stored JSON object, for fields few readers
    need (hints in effect, file-system facts, the search's tags): ``raw`` when given, else
    what ``load`` returns, called once on first use.
    """

    kernel: str
    cores: int
    backend: str
    status: str
    settings: dict[str, Any] = field(default_factory=dict)
    params: dict[str, Any] = field(default_factory=dict)
    config_key: str = ""
    campaign: str = ""
    rep: int = 0
    times: PhaseTimes = field(default_factory=PhaseTimes)
    bandwidth_mib_s: float | None = None
    bytes_written: int | None = None
    error: str | None = None
    bytes_read: int | None = None
    read_bandwidth_mib_s: float | None = None
    state: str | None = None
    schema_version: int = SCHEMA_VERSION
    hints_in_effect: dict[str, str] = field(default_factory=dict)
    #: Per setting, whether it took effect (:mod:`iotune.in_effect` statuses), as the
    #: measured run recorded it in ``result.settings_effect``; {} for other runs.
    effects: dict[str, str] = field(default_factory=dict)
    raw: dict[str, Any] | None = field(default=None, repr=False, compare=False)
    load: Callable[[], dict[str, Any]] | None = field(default=None, repr=False, compare=False)

    @property
    def record(self) -> dict[str, Any]:
        """The record as stored (read when first asked for, if it was not given)."""
        if self.raw is None:
            object.__setattr__(self, "raw", self.load() if self.load is not None else {})
        assert self.raw is not None
        return self.raw

    @classmethod
    def from_record(cls, record: Mapping[str, Any], *, keep: bool = True) -> Measurement:
        """The measurement of a stored record (or of a backend's record before storing);
        ``keep`` False leaves out a copy of the whole record (``record`` is then empty)."""
        result = record.get("result") or {}
        written = result.get("bytes_written")
        read = result.get("bytes_read")
        probe = record.get("probe") or {}
        return cls(
            kernel=str(record.get("kernel", "")),
            cores=int(record.get("cores") or 0),
            backend=str(record.get("backend", "")),
            status=str(record.get("status", "")),
            settings=dict(record.get("settings") or {}),
            params=dict(record.get("params") or {}),
            config_key=str(record.get("config_key") or ""),
            campaign=str(record.get("campaign") or ""),
            rep=int(record.get("rep") or 0),
            times=PhaseTimes.from_json(result.get("times_s")),
            bandwidth_mib_s=_number(result.get("bandwidth_mib_s")),
            bytes_written=int(written) if written is not None else None,
            error=record.get("error"),
            bytes_read=int(read) if read is not None else None,
            read_bandwidth_mib_s=_number(result.get("read_bandwidth_mib_s")),
            state=probe.get("state") if probe else record.get("state"),
            schema_version=int(record.get("schema_version", SCHEMA_VERSION)),
            hints_in_effect=_hints(result.get("hints_in_effect")),
            effects=_statuses(result.get("settings_effect")),
            raw=dict(record) if keep else {},
        )

    def to_record(self) -> dict[str, Any]:
        """The JSON object to store (the record this was read from, unchanged)."""
        return dict(self.record)

    @property
    def shows_spread(self) -> bool:
        """Whether repeating this run could give another time: False for a replay of a
        configuration recorded once (every replay of it answers the same time, which says
        nothing about the run-to-run spread of the system it was recorded on)."""
        result = self.record.get("result") or {}
        return not (result.get("replayed") and int(result.get("recorded_repeats") or 0) < 2)

    @property
    def ok(self) -> bool:
        """A successful run with a positive write or read time."""
        return self.ok_for("write") or self.ok_for("read")

    def ok_for(self, target: str) -> bool:
        """A successful run with a positive time for ``target`` (see :data:`TARGETS`)."""
        time = self.times.for_target(target)
        return self.status == "ok" and time is not None and time > 0

    @property
    def time_s(self) -> float:
        """The write's total time of a successful run (ValueError for a failed one or one
        that timed only its read; :meth:`time_for` chooses the target)."""
        return self.time_for("write")

    def time_for(self, target: str) -> float:
        """The time ``target`` minimises, of a successful run that timed it (ValueError
        otherwise)."""
        time = self.times.for_target(target)
        if self.status != "ok" or time is None or time <= 0:
            raise ValueError(f"measurement {self.record.get('id', '?')}: no time for target "
                             f"{target} (status {self.status})")
        return time

    def row(self) -> dict[str, Any]:
        """One flat row: identity columns, settings and params by name, result figures.

        Result columns: ``write_time`` (open-to-close seconds), ``open_time``,
        ``write_phase_time``, ``close_time``, ``bandwidth_mib_s``, ``bytes_written``,
        ``file_size_gib``, then the read phase's: ``read_time`` (open-to-close seconds),
        ``read_open_time``, ``read_phase_time``, ``read_close_time``,
        ``read_bandwidth_mib_s``, ``bytes_read``, and ``io_time`` (write plus read, when
        both were timed). Runs without a read phase have None in the read columns. Last,
        one ``in_effect.<hint>`` column per MPI-IO hint the run read back from its file
        (``MPI_File_get_info``), as text, and one ``effect.<setting>`` column per setting of
        a measured run: whether it took effect (:mod:`iotune.in_effect`).
        """
        row: dict[str, Any] = {key: self.record.get(key) for key in IDENTITY_COLUMNS}
        row.update(self.settings)
        row.update(self.params)
        row["write_time"] = self.times.total
        row["open_time"] = self.times.open
        row["write_phase_time"] = self.times.write
        row["close_time"] = self.times.close
        row["bandwidth_mib_s"] = self.bandwidth_mib_s
        row["bytes_written"] = self.bytes_written
        row["file_size_gib"] = self.bytes_written / 2**30 if self.bytes_written else None
        row["read_time"] = self.times.read_total
        row["read_open_time"] = self.times.read_open
        row["read_phase_time"] = self.times.read
        row["read_close_time"] = self.times.read_close
        row["read_bandwidth_mib_s"] = self.read_bandwidth_mib_s
        row["bytes_read"] = self.bytes_read
        row["io_time"] = self.times.for_target("total")
        for hint, value in self.hints_in_effect.items():
            row[IN_EFFECT_PREFIX + hint] = value
        for setting, status in self.effects.items():
            row[EFFECT_PREFIX + setting] = status
        return row


def _hints(value: Any) -> dict[str, str]:
    """The hints a run read back (name -> text); {} when it recorded none."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v) for k, v in value.items()}


def _statuses(value: Any) -> dict[str, str]:
    """Setting -> status of a record's ``result.settings_effect``; {} when it has none."""
    if not isinstance(value, Mapping):
        return {}
    return {str(k): str(v.get("status")) for k, v in value.items() if isinstance(v, Mapping)}


def frame_of(measurements: Iterable[Measurement], include_failed: bool = False
             ) -> pd.DataFrame:
    """A DataFrame of flat rows (successful measurements only unless ``include_failed``)."""
    import pandas as pd

    return pd.DataFrame([m.row() for m in measurements
                         if include_failed or m.status == "ok"])


def records_to_dataframe(records: Iterable[Mapping[str, Any]], include_failed: bool = False
                         ) -> pd.DataFrame:
    """A DataFrame of flat rows of store records (see :meth:`Measurement.row`)."""
    return frame_of((Measurement.from_record(r) for r in records), include_failed)


def read_dataframe(path: str | os.PathLike[str], include_failed: bool = False, *,
                   kernel: str | None = None, use_cache: bool = True) -> pd.DataFrame:
    """The store at ``path`` as a DataFrame, one row per (successful) measurement (only of
    ``kernel`` if given), in store order: the frame :func:`records_to_dataframe` makes of
    the store's records, read through the cache unless ``use_cache`` is False.

    Raises StoreError when there is no store at ``path``.
    """
    from iotune.store_cache import open_snapshot
    from iotune.store_views import all_rows, ok_rows, rows_frame

    store = Store(path)
    if not store.exists():
        raise StoreError(f"store {store.path}: no such file")
    snapshot = open_snapshot(store.path, use_cache=use_cache)
    return rows_frame(snapshot.parts(kernel=kernel), all_rows if include_failed else ok_rows)


def write_csv(path: str | os.PathLike[str], out: str | os.PathLike[str],
              include_failed: bool = False, *, kernel: str | None = None,
              keep: Callable[[pd.DataFrame], pd.DataFrame] | None = None) -> int:
    """Write the rows :func:`read_dataframe` would give (those ``keep`` leaves of each
    chunk) to the CSV file ``out``, in chunks, so memory stays flat however large the
    store; returns the number of rows. Raises StoreError when there is no store at ``path``.
    """
    from pathlib import Path

    from iotune.store_cache import open_snapshot
    from iotune.store_views import all_rows, ok_rows, write_rows_csv

    store = Store(path)
    if not store.exists():
        raise StoreError(f"store {store.path}: no such file")
    snapshot = open_snapshot(store.path)
    return write_rows_csv(snapshot.parts(kernel=kernel), Path(out),
                          all_rows if include_failed else ok_rows, keep=keep)


class StoreIndex:
    """Every measurement of one store as it was when the index was made, kept current as
    this process appends (records other processes append later are not seen).

    Answers by kernel, backend and campaign, reading only those partitions of the store's
    cache; storage-probe rounds (``campaign: probe``, see :mod:`iotune.variability.probe`)
    and other records without a kernel are kept apart in :attr:`probes`.
    """

    def __init__(self, store: Store, *, use_cache: bool = True) -> None:
        from iotune.store_cache import open_snapshot

        self.store = store
        self.snapshot: Snapshot = open_snapshot(store.path, use_cache=use_cache)
        self.appended: list[Measurement] = []
        self._all: list[Measurement] | None = None
        self._probes: list[dict[str, Any]] | None = None
        self._tail: MemorySegment | None = None
        self._snapshot_frames: dict[tuple[str, str], pd.DataFrame] = {}

    @property
    def measurements(self) -> list[Measurement]:
        """Every measurement, in store order."""
        if self._all is None:
            self._all = self.select()
        return [*self._all, *self.appended]

    @property
    def probes(self) -> list[dict[str, Any]]:
        """Every record that is not a measurement (probe rounds), in store order."""
        from iotune.store_segments import OTHER
        from iotune.store_views import records_at

        if self._probes is None:
            self._probes = records_at(self.snapshot.journal, self.snapshot.parts(OTHER))
        return self._probes

    def append(self, record: dict[str, Any]) -> Measurement:
        """Store ``record`` durably and index it; the measurement as written."""
        if record.get("campaign") == "probe" or "kernel" not in record:
            raise ValueError("only measurements are appended through the index")
        measurement = Measurement.from_record(self.store.append(record))
        self.appended.append(measurement)
        self._tail = None
        return measurement

    def __iter__(self) -> Iterator[Measurement]:
        return iter(self.measurements)

    def _parts(self, *, kernel: str | None = None, backend: str | None = None,
               campaign: str | None = None) -> list[Part]:
        return self.snapshot.parts(kernel=kernel, backend=backend, campaign=campaign)

    def _appended(self, *, kernel: str | None = None, backend: str | None = None,
                  campaign: str | None = None) -> list[Measurement]:
        return [m for m in self.appended
                if (kernel is None or m.kernel == kernel)
                and (backend is None or m.backend == backend)
                and (campaign is None or m.campaign == campaign)]

    def select(self, *, kernel: str | None = None, backend: str | None = None,
               campaign: str | None = None) -> list[Measurement]:
        """Measurements matching every given field, in store order."""
        from iotune.store_views import measurements_of

        if self._all is not None and kernel is None and backend is None and campaign is None:
            return self.measurements
        filters = {"kernel": kernel, "backend": backend, "campaign": campaign}
        return [*measurements_of(self.snapshot.journal, self._parts(**filters)),
                *self._appended(**filters)]

    def by_key(self, *, backend: str, campaign: str) -> Mapping[str, list[Measurement]]:
        """Measurements of ``backend`` in ``campaign`` grouped by configuration key, as they
        are now (later appends are not added); a group is read when first asked for."""
        from iotune.store_views import KeyedMeasurements

        return KeyedMeasurements(self.snapshot.journal,
                                 self._parts(backend=backend, campaign=campaign),
                                 self._appended(backend=backend, campaign=campaign))

    def training_frame(self, kernel: str, backend: str) -> pd.DataFrame:
        """Successful measurements of ``kernel`` by ``backend`` (every campaign), flat: the
        frame :func:`frame_of` makes of them.

        A search asks for it after every batch, and only its own appends change between
        asks: the snapshot's rows are built into a frame once, and each ask joins the
        appended rows to it (:func:`_join_frames`), rebuilding the whole only when a
        column's type cannot be told from the two parts'.
        """
        from iotune.store_cache import Part
        from iotune.store_views import rows_frame

        parts = self._parts(kernel=kernel, backend=backend)
        base = self._snapshot_frames.get((kernel, backend))
        if base is None:
            base = self._snapshot_frames[(kernel, backend)] = rows_frame(parts)
        tail_parts = []
        if self.appended:
            tail = self._tail_segment()
            tail_parts = [Part(tail, i, info) for i, info in enumerate(tail.partitions)
                          if info.key[1:3] == (kernel, backend)]
        if not tail_parts:
            return base.copy(deep=False)  # copy-on-write: the caller may change its frame
        joined = _join_frames(base, rows_frame(tail_parts))
        return rows_frame(parts + tail_parts) if joined is None else joined

    def _tail_segment(self) -> MemorySegment:
        """The measurements this index appended, as a segment after the snapshot's."""
        import json

        from iotune.store_segments import build_segment

        if self._tail is None:
            data = b"".join(json.dumps(m.record, sort_keys=True, default=str).encode() + b"\n"
                            for m in self.appended)
            self._tail = build_segment(data, self.snapshot.end, self.snapshot.records)
        return self._tail


def _join_frames(head: pd.DataFrame, tail: pd.DataFrame) -> pd.DataFrame | None:
    """The frame :func:`~iotune.store_views.rows_frame` makes of two runs of rows, ``head``
    before ``tail``, given the frame it makes of each; None when that cannot be told from
    them.

    Columns come in order of first appearance (``head``'s, then those new in ``tail``). A
    column's type is inferred from all its values, so it is known from the parts' only when
    both have the same type (a mix of text and missing values stays text, of objects
    objects, of ints ints), or both are numbers, or one part lacks the column and the other
    has numbers (floats then, with NaN). Otherwise (text beside a part without the column,
    say) the caller rebuilds the whole.
    """
    import pandas as pd

    if head.empty or tail.empty:
        return (tail if head.empty else head).copy(deep=False)
    numbers = ("int64", "float64")
    for column in dict.fromkeys([*head.columns, *tail.columns]):
        kinds = [str(part[column].dtype) if column in part.columns else None
                 for part in (head, tail)]
        if kinds[0] == kinds[1]:
            continue
        if all(kind is None or kind in numbers for kind in kinds):
            continue
        return None
    columns = [*head.columns, *(c for c in tail.columns if c not in head.columns)]
    joined = pd.concat([head, tail], ignore_index=True)
    return joined[columns] if list(joined.columns) != columns else joined


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
