"""Writing runs into a knowledge base being built: :class:`Loader`.

The loader keeps the workloads and configurations already in the base (key -> id), gives
new ones the next id, and buffers runs as columns, inserting them :data:`FLUSH_RUNS` at a
time through DuckDB's scan of a pandas frame (so 10^7 runs never sit in Python objects).
A source is written as one row per provenance it gave runs of (or one row of provenance
``none`` when it gave none, so that a later build knows it was read).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor
from iotune.knowledge.schema import DESCRIPTOR_COLUMNS, PROVENANCES, TABLES
from iotune.store import now_iso

if TYPE_CHECKING:
    import duckdb
    import numpy as np

#: Runs buffered before they are inserted: large enough that DuckDB's per-insert cost
#: vanishes, small enough (about 20 MB of columns) to keep the build's memory flat.
FLUSH_RUNS = 1_000_000
#: The provenance of a source row that gave no run (its bytes were read, nothing usable).
NO_RUNS = "none"


def canonical_settings(settings: Mapping[str, Any]) -> str:
    """Settings as canonical JSON: sorted keys, no spaces, so equal settings are equal
    text whatever their order."""
    return json.dumps(dict(settings), sort_keys=True, separators=(",", ":"), default=str)


def settings_key(text: str) -> str:
    """The 16-hex-digit key of a configuration's canonical settings text."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def workload_key(system: SystemKey, workload: WorkloadDescriptor, measure: str) -> str:
    """The 16-hex-digit key of one (system, descriptor, measure): equal inputs, one row."""
    text = json.dumps({"system": [system.name, system.file_system, system.mpi],
                       "workload": workload.to_dict(), "measure": measure},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class SourceHandle:
    """A source being read: what its row(s) will say, and its runs by provenance."""

    kind: str
    content_sha256: str
    head_sha256: str | None
    size: int
    label: str | None
    runs: dict[str, int] = field(default_factory=dict)


@dataclass
class Added:
    """What a build added: runs by provenance, new workloads and configurations."""

    runs: dict[str, int] = field(default_factory=dict)
    workloads: int = 0
    configurations: int = 0
    sources: int = 0


class Loader:
    """Adds sources, workloads, configurations and runs to the base open on ``con``."""

    def __init__(self, con: duckdb.DuckDBPyConnection, build_id: str) -> None:
        self.con = con
        self.build_id = build_id
        self.workloads = dict(con.execute(
            "SELECT workload_key, workload_id FROM workloads").fetchall())
        self.configs = dict(con.execute(
            "SELECT config_key, config_id FROM configurations").fetchall())
        last = con.execute("SELECT coalesce(max(source_id), 0) FROM sources").fetchone()
        self._next_source = int(last[0] if last else 0) + 1
        self._new_workloads: list[tuple[Any, ...]] = []
        self._new_configs: list[tuple[Any, ...]] = []
        self._new_sources: list[tuple[Any, ...]] = []
        self._columns: dict[str, list[np.ndarray]] = {
            "source_id": [], "workload_id": [], "config_id": [], "provenance": [],
            "time_s": []}
        self._buffered = 0
        self._source_ids: dict[tuple[int, str], int] = {}
        self.added = Added()

    # -- dimensions ------------------------------------------------------------------------

    def workload_id(self, system: SystemKey, workload: WorkloadDescriptor,
                    measure: str) -> int:
        """The id of this (system, workload, measure), made when new."""
        key = workload_key(system, workload, measure)
        found = self.workloads.get(key)
        if found is None:
            found = self.workloads[key] = len(self.workloads) + 1
            values = [getattr(workload, name) for name in DESCRIPTOR_COLUMNS]
            self._new_workloads.append((found, key, system.name, system.file_system,
                                        system.mpi, measure, *values))
            self.added.workloads += 1
        return int(found)

    def config_id(self, settings: Mapping[str, Any]) -> int:
        """The id of the configuration with these ``settings`` (canonical values), made
        when new; the default's settings are empty."""
        text = canonical_settings(settings)
        key = settings_key(text)
        found = self.configs.get(key)
        if found is None:
            found = self.configs[key] = len(self.configs) + 1
            self._new_configs.append((found, key, text, not settings))
            self.added.configurations += 1
        return int(found)

    # -- sources and runs ------------------------------------------------------------------

    def begin(self, kind: str, content_sha256: str, size: int, *,
              head_sha256: str | None = None, label: str | None = None) -> SourceHandle:
        return SourceHandle(kind, content_sha256, head_sha256, size, label)

    def add(self, source: SourceHandle, provenance: str, workload_id: int,
            config_ids: Sequence[int] | np.ndarray, times: Sequence[float] | np.ndarray
            ) -> None:
        """Buffer runs of one workload from ``source``: ``config_ids[i]`` took ``times[i]``
        seconds (finite and positive: the readers check)."""
        import numpy as np

        if provenance not in PROVENANCES:
            raise ValueError(f"provenance {provenance!r}")
        count = len(times)
        if count == 0:
            return
        ident = id(source)
        source_id = self._source_ids.get((ident, provenance))
        if source_id is None:
            source_id = self._source_ids[(ident, provenance)] = self._next_source
            self._next_source += 1
        source.runs[provenance] = source.runs.get(provenance, 0) + count
        self._columns["source_id"].append(np.full(count, source_id, dtype=np.int32))
        self._columns["workload_id"].append(np.full(count, workload_id, dtype=np.int32))
        self._columns["config_id"].append(np.asarray(config_ids, dtype=np.int32))
        self._columns["provenance"].append(
            np.full(count, PROVENANCES.index(provenance), dtype=np.int8))
        self._columns["time_s"].append(np.asarray(times, dtype=np.float64))
        self._buffered += count
        if self._buffered >= FLUSH_RUNS:
            self.flush()

    def end(self, source: SourceHandle) -> None:
        """Write the rows of ``source`` (one per provenance, or one saying it gave none)."""
        ident = id(source)
        rows = []
        for provenance, runs in (source.runs or {NO_RUNS: 0}).items():
            source_id = self._source_ids.pop((ident, provenance), None)
            if source_id is None:
                source_id = self._next_source
                self._next_source += 1
            rows.append((source_id, source.kind, source.content_sha256, source.head_sha256,
                         source.size, provenance, runs, now_iso(), self.build_id,
                         source.label))
            if runs:
                self.added.runs[provenance] = self.added.runs.get(provenance, 0) + runs
        self._new_sources += rows
        self.added.sources += 1

    def flush_rows(self) -> None:
        """Insert the new sources, workloads and configurations buffered (one insert per
        table: DuckDB's row-at-a-time inserts cost milliseconds each)."""
        for table, rows in (("sources", self._new_sources), ("workloads", self._new_workloads),
                            ("configurations", self._new_configs)):
            if rows:
                _insert_rows(self.con, table, rows)
                rows.clear()

    def flush(self) -> None:
        """Insert what is buffered: new sources, workloads and configurations, then the
        runs."""
        import pandas as pd

        self.flush_rows()
        if not self._buffered:
            return
        import numpy as np

        frame = pd.DataFrame({name: np.concatenate(parts)
                              for name, parts in self._columns.items()})
        self.con.register("knowledge_batch", frame)
        names = ", ".join(f"'{p}'" for p in PROVENANCES)
        self.con.execute(
            "INSERT INTO runs SELECT source_id, workload_id, config_id, "
            f"list_extract([{names}], provenance + 1), time_s FROM knowledge_batch")
        self.con.unregister("knowledge_batch")
        for parts in self._columns.values():
            parts.clear()
        self._buffered = 0


def _insert_rows(con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]]
                 ) -> None:
    """Append ``rows`` (tuples in the table's column order) to ``table`` in one insert."""
    import pandas as pd

    names = [name for name, _, _ in TABLES[table]]
    frame = pd.DataFrame.from_records(rows, columns=names)
    con.register("knowledge_rows", frame)
    try:
        con.execute(f"INSERT INTO {table} SELECT {', '.join(names)} FROM knowledge_rows")
    finally:
        con.unregister("knowledge_rows")
