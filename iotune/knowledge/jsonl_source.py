"""An iotune store or production journal (JSON lines), read into a build.

Stores: each successful measurement of a kernel is one run. Its system is the record's
``system`` and ``fs_type`` and the MPI library it recorded; its workload comes from the
kernel's arguments (:func:`iotune.knowledge.descriptor.of_kernel`, with a command
kernel's preload report); its time is the one its ``access`` argument times (the write's
open to close, the read's, or both added; a command kernel's metric); its provenance the
record's (``measured`` for the mpi backend, ``replayed``, ``simulated``). A replayed
record's system is what the replay backend wrote (``replay of FILE.csv``), not the system
the data was measured on.

Production journals (``kind: production_job`` records, :mod:`iotune.production.jobs`):
each finished job with a time is a ``measured`` run of the configuration its start record
chose, measured as its I/O seconds. A journal records no system or workload: they come
from a sidecar beside it, ``JOURNAL.TAG.workload.yaml`` for campaign ``TAG`` or else
``JOURNAL.workload.yaml`` for all of them; a campaign with neither is left out (and said).

Configurations with per-file settings (their patterns are paths) are left out, and said.

Incremental: a journal only grows. A build records the sha256 of the bytes it read and of
the file's first line; the next build finds the same first line, checks that the file
still starts with the bytes read before, and adds only the runs recorded after them (a
file rewritten otherwise is read as a new source).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.kernel_specs import get_kernel
from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor, from_sidecar, of_kernel
from iotune.knowledge.ingest import Loader

#: A production job's measure (``workloads.measure``).
JOB_MEASURE = "io_seconds"
#: The measure of a built-in kernel's runs: the target's open-to-close seconds.
KERNEL_MEASURE = "open_to_close"
#: The provenance of each backend's records, for records that do not say.
PROVENANCE_OF_BACKEND = {"mpi": "measured", "replay": "replayed", "sim": "simulated"}
#: Longest MPI library text kept (the first line of ``MPI_Get_library_version``).
MPI_TEXT = 120


@dataclass
class JsonlRead:
    """What reading one JSON-lines source gave: runs added, runs left out and why."""

    runs: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    already: bool = False

    def skip(self, why: str) -> None:
        self.skipped[why] = self.skipped.get(why, 0) + 1


def _first_line_and_end(path: Path) -> tuple[bytes, int]:
    """The first complete line of ``path`` and the byte after its last complete line."""
    first = b""
    end = 0
    with path.open("rb") as handle:
        for raw in handle:
            if not raw.endswith(b"\n"):
                break
            if not first:
                first = raw
            end += len(raw)
    return first, end


def _prefix_sha256(path: Path, size: int) -> str:
    digest = hashlib.sha256()
    left = size
    with path.open("rb") as handle:
        while left > 0:
            block = handle.read(min(left, 1 << 20))
            if not block:
                break
            digest.update(block)
            left -= len(block)
    return digest.hexdigest()


def _resume_at(loader: Loader, path: Path, head: str, end: int) -> int:
    """The byte after what an earlier build read of this journal (0: none)."""
    loader.flush_rows()
    rows = loader.con.execute(
        "SELECT DISTINCT bytes, content_sha256 FROM sources WHERE head_sha256 = ? "
        "AND kind IN ('store', 'journal') ORDER BY bytes DESC", [head]).fetchall()
    for size, content in rows:
        if size <= end and _prefix_sha256(path, int(size)) == content:
            return int(size)
    return 0


def read_jsonl_source(loader: Loader, path: Path, *, label: str | None = None,
                      note: Callable[[str], None] = lambda _: None) -> JsonlRead:
    """Add the runs of the store or journal ``path`` recorded after what earlier builds
    read of it (see the module docstring). StoreError when it is not a journal."""
    from iotune.store.journal import check_journal_head

    check_journal_head(path)
    read = JsonlRead()
    first, end = _first_line_and_end(path)
    if end == 0:
        read.already = True  # nothing complete to read yet
        return read
    head = hashlib.sha256(first).hexdigest()
    start = _resume_at(loader, path, head, end)
    if start == end:
        read.already = True
        return read
    content = _prefix_sha256(path, end)
    kind = _kind(path, end)
    source = loader.begin(kind, content, end, head_sha256=head, label=label)
    if kind == "journal":
        _journal_runs(loader, source, path, _records(path, end), start, read, note)
    else:
        _store_runs(loader, source, _records(path, end), start, read)
    loader.end(source)
    return read


def _kind(path: Path, end: int) -> str:
    """``journal`` when the first record that is a job or a measurement is a job."""
    for _, record in _records(path, end):
        if record.get("kind") == "production_job":
            return "journal"
        if "kernel" in record:
            return "store"
    return "store"


def _records(path: Path, end: int) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each record of the journal up to byte ``end`` with the byte its line starts at;
    damaged lines and repeated ids skipped (as every reader of a store does)."""
    from iotune.store.damage import id_digest
    from iotune.store.journal import journal_lines

    seen: set[bytes] = set()
    begin = 0
    for record, after in journal_lines(path):
        if after > end:
            break
        at, begin = begin, after
        if record is None:
            continue
        digest = id_digest(record)
        if digest is not None:
            if digest in seen:
                continue
            seen.add(digest)
        yield at, record


def _store_runs(loader: Loader, source: Any, records: Iterable[tuple[int, dict[str, Any]]],
                start: int, read: JsonlRead) -> None:
    from iotune.store.records import Measurement
    from iotune.tuned import FILES_KEY

    for at, record in records:
        if at < start or "kernel" not in record or record.get("campaign") == "probe":
            continue
        m = Measurement.from_record(record, keep=False)
        provenance = str(record.get("provenance") or PROVENANCE_OF_BACKEND.get(m.backend, ""))
        if provenance not in PROVENANCE_OF_BACKEND.values():
            read.skip(f"backend {m.backend!r} (provenance unknown)")
            continue
        if FILES_KEY in m.settings:
            read.skip("per-file settings")
            continue
        access = str(m.params.get("access") or "write")
        target = {"both": "total"}.get(access, access)
        if m.status != "ok" or not m.ok_for(target):
            read.skip("failed or untimed runs")
            continue
        time = m.time_for(target)
        if not math.isfinite(time):
            read.skip("failed or untimed runs")
            continue
        result = record.get("result") or {}
        try:
            workload = of_kernel(m.kernel, m.params, m.cores, _per_node(m.cores, record),
                                 report=result.get("preload") if isinstance(
                                     result.get("preload"), Mapping) else None)
        except Exception as exc:  # an unknown kernel or arguments no kernel takes now
            from iotune.errors import IotuneError

            if not isinstance(exc, IotuneError | ValueError | KeyError | TypeError):
                raise
            read.skip(f"kernel {m.kernel!r} not described")
            continue
        system = SystemKey(str(record.get("system") or "unknown").lower(),
                           _text(record.get("fs_type")), _mpi(result.get("mpi_library")))
        measure = KERNEL_MEASURE if get_kernel(m.kernel).own_metric(m.params) is None \
            else str(result.get("measure") or "metric")
        workload_id = loader.workload_id(system, workload, measure)
        loader.add(source, provenance, workload_id, [loader.config_id(m.settings)], [time])
        read.runs += 1


def _journal_runs(loader: Loader, source: Any, path: Path,
                  records: Iterable[tuple[int, dict[str, Any]]], start: int, read: JsonlRead,
                  note: Callable[[str], None]) -> None:
    from iotune.tuned import FILES_KEY, recorded_configuration

    starts: dict[tuple[str, str], dict[str, Any]] = {}
    described: dict[str, tuple[SystemKey, WorkloadDescriptor] | None] = {}
    for at, record in records:
        if record.get("kind") != "production_job":
            continue
        key = (str(record.get("tag")), str(record.get("job_id")))
        if record.get("event") == "start":
            starts.setdefault(key, record)
            continue
        if at < start or record.get("status") != "ok":
            continue
        begun = starts.get(key)
        seconds = record.get("io_seconds")
        if begun is None or not isinstance(seconds, int | float) or isinstance(seconds, bool) \
                or not (math.isfinite(seconds) and seconds > 0):
            read.skip("jobs without a start or a time")
            continue
        tag = key[0]
        if tag not in described:
            described[tag] = _journal_sidecar(path, tag)
            if described[tag] is None:
                note(f"{path.name}: campaign {tag}: no sidecar ({path.stem}.{tag}"
                     f".workload.yaml or {path.stem}.workload.yaml); its jobs are left out")
        found = described[tag]
        if found is None:
            read.skip(f"campaign {tag} without a sidecar")
            continue
        settings, _ = recorded_configuration(begun.get("settings") or {})
        if FILES_KEY in (begun.get("settings") or {}):
            read.skip("per-file settings")
            continue
        system, workload = found
        workload_id = loader.workload_id(system, workload, JOB_MEASURE)
        loader.add(source, "measured", workload_id, [loader.config_id(settings)],
                   [float(seconds)])
        read.runs += 1


def _journal_sidecar(path: Path, tag: str) -> tuple[SystemKey, WorkloadDescriptor] | None:
    for candidate in (path.with_name(f"{path.stem}.{tag}.workload.yaml"),
                      path.with_name(f"{path.stem}.workload.yaml")):
        if candidate.is_file():
            system, workload, _ = from_sidecar(candidate)
            return system, workload
    return None


def _per_node(cores: int, record: Mapping[str, Any]) -> int | None:
    nodes = record.get("nodes")
    if isinstance(nodes, int) and not isinstance(nodes, bool) and nodes > 0 and cores > 0 \
            and cores % nodes == 0:
        return cores // nodes
    return None


def _text(value: Any) -> str | None:
    return str(value).strip().lower() or None if value is not None else None


def _mpi(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.strip().splitlines()[0].split())[:MPI_TEXT]

