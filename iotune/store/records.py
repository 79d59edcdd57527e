"""A measurement as a typed value: one store record read in one place.

The store keeps records as JSON objects (see :mod:`iotune.store.journal`); everything that
reads them goes through :class:`Measurement`, which knows the record's layout (where the
times, the bandwidth and the state are) once, and tolerates what some backends leave
unknown (a replayed run has a total time and no phase times). Reading a whole store is
:mod:`iotune.store.index`'s.

A record written by one version of iotune and read by another keeps every field:
:attr:`Measurement.record` is the record as stored, and :meth:`Measurement.to_record`
returns it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iotune.store.journal import SCHEMA_VERSION
from iotune.store.source import source_of
from iotune.store.targets import TARGETS

if TYPE_CHECKING:
    import pandas as pd

#: The phases whose times a record may carry: the write's (``total`` being its open to
#: close) and the read's (``read_total`` being its open to close).
PHASES = ("total", "open", "write", "close", "read_total", "read_open", "read", "read_close")

#: Prefix of a flat row's columns of the hints a run read back (``in_effect.cb_nodes``).
IN_EFFECT_PREFIX = "in_effect."
#: Prefix of a flat row's columns saying whether each setting took effect.
EFFECT_PREFIX = "effect."

#: Identity columns of a flat row, in order (see :meth:`Measurement.row`).
IDENTITY_COLUMNS = ("id", "recorded_at", "config_key", "campaign", "kernel", "cores", "nodes",
                    "rep", "backend", "provenance", "system", "status", "error", "host",
                    "fs_type", "started_at", "state", "source")

#: Result columns of a flat row after the settings and params, in order (see
#: :meth:`Measurement.row`); ``in_effect.*`` and ``effect.*`` columns follow them.
RESULT_COLUMNS = ("write_time", "open_time", "write_phase_time", "close_time",
                  "bandwidth_mib_s", "bytes_written", "file_size_gib", "read_time",
                  "read_open_time", "read_phase_time", "read_close_time",
                  "read_bandwidth_mib_s", "bytes_read", "io_time")


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

    @classmethod
    def of_record(cls, record: Mapping[str, Any]) -> PhaseTimes:
        """The phase times a record holds (``result.times_s``; a backend's record, a stored
        one, or a light one of :mod:`iotune.store.views`): the one reader of that layout."""
        return cls.from_json((record.get("result") or {}).get("times_s"))

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
    #: Per setting, whether it took effect (:mod:`iotune.settings.in_effect` statuses), as the
    #: measured run recorded it in ``result.settings_effect``; {} for other runs.
    effects: dict[str, str] = field(default_factory=dict)
    #: What measured it besides its configuration (:mod:`iotune.store.source`): runs are
    #: the same measurement only when their keys and sources are equal.
    source: str = ""
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
            source=source_of(record),
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
        a measured run: whether it took effect (:mod:`iotune.settings.in_effect`).
        """
        row: dict[str, Any] = {key: identity_value(self.record, key)
                               for key in IDENTITY_COLUMNS}
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


def identity_value(record: Mapping[str, Any], column: str) -> Any:
    """The value of identity column ``column`` for ``record`` (``source`` derived for a
    record written before it was stored, see :func:`~iotune.store.source.source_of`)."""
    return source_of(record) if column == "source" else record.get(column)


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


def _seconds(value: float | None) -> str:
    return "?" if value is None else f"{value:.3g}"


def _number(value: Any) -> float | None:
    return None if value is None else float(value)
