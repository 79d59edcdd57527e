"""Estimated I/O time of an application from its phases and a file-system characterisation.

The paper's model: ``time(phase) = weight(phase) / BW(pattern of the phase)`` and the
application's I/O time is the sum over its phases. ``BW`` comes from ``iotune
characterize`` (same operation, request size, file sharing and access mode, so a read
phase takes a bandwidth measured reading and a collective phase one measured collectively;
otherwise the measured pattern of the same operation, sharing and access mode with the
closest request size, then of the same operation and sharing, then any pattern, marked
``nearest``). A repeated phase's weight is that of all its repetitions, its measured time
the sum of theirs.

The relative error is ``100 * |estimated - measured| / measured``. The measured time of a
phase is its wall time in the trace; for the total, the sum of the phases' wall times, or
a time given by the user. A binary log's counters give a second measured total: the read
and write time per rank of the traced layer (:func:`counters_io_time`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iotune.darshan.characterize import CHARACTERIZATION_SCHEMA_VERSION
from iotune.darshan.phases import DEFAULT_GAP_S, Phase, TracePhases, trace_phases
from iotune.errors import DataError
from iotune.inputs import load_yaml
from iotune.workload.counters import FileCounters


def read_characterization(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The measured patterns of a characterisation file (DataError naming what is wrong)."""
    where = str(path)
    raw = load_yaml(path, "characterisation file (YAML from 'iotune characterize')",
                    DataError)
    if isinstance(raw, dict) and raw.get("schema_version") == 1:
        raise DataError(f"{where}: schema_version 1 characterised read phases by writes; "
                        "measure again with 'iotune characterize'")
    if not isinstance(raw, dict) or raw.get("schema_version") != CHARACTERIZATION_SCHEMA_VERSION:
        raise DataError(f"{where}: not a characterisation file (schema_version "
                        f"{CHARACTERIZATION_SCHEMA_VERSION} with a patterns list expected)")
    patterns = raw.get("patterns")
    if not isinstance(patterns, list):
        raise DataError(f"{where}: patterns must be a list")
    usable = []
    for i, item in enumerate(patterns):
        if not isinstance(item, dict) or "bandwidth_bytes_s" not in item:
            continue
        bandwidth = item["bandwidth_bytes_s"]
        if not isinstance(bandwidth, int | float) or not bandwidth > 0 or \
                not math.isfinite(bandwidth):
            raise DataError(f"{where}: patterns[{i}].bandwidth_bytes_s {bandwidth!r} is not a "
                            "positive number")
        usable.append(item)
    if not usable:
        raise DataError(f"{where}: no pattern with a measured bandwidth")
    return usable


def _bandwidth(phase: Phase, patterns: Sequence[Mapping[str, Any]]) -> tuple[float, str]:
    """The bandwidth for ``phase`` and how it was found (``exact`` or ``nearest``)."""
    for p in patterns:
        if p.get("key") == phase.key():
            return float(p["bandwidth_bytes_s"]), "exact"

    def distance(p: Mapping[str, Any]) -> float:
        size = max(int(p.get("request_size", 1)), 1)
        return abs(math.log2(size) - math.log2(max(phase.request_size, 1)))

    same = [p for p in patterns if p.get("op") == phase.op and
            bool(p.get("shared")) == phase.shared]
    mode = phase.key().split()[3:]
    same_mode = [p for p in same if str(p.get("key", "")).split()[3:] == mode]
    pool = same_mode or same or list(patterns)
    best = min(pool, key=distance)
    return float(best["bandwidth_bytes_s"]), f"nearest ({best.get('key')})"


def relative_error(estimated: float, measured: float | None) -> float | None:
    """``100 * |estimated - measured| / measured`` (None without a positive measurement)."""
    if measured is None or measured <= 0:
        return None
    return 100.0 * abs(estimated - measured) / measured


def counters_io_time(files: Sequence[FileCounters], module: str) -> float | None:
    """I/O time per rank from the log's counters, for the layer of DXT ``module``.

    Darshan's read and write times of a file add up over the ranks that accessed it, so
    each file's ``F_READ_TIME + F_WRITE_TIME`` is divided by its rank count; the files'
    times then add up. None when the log has no counters for that layer.
    """
    layer, prefix = ("mpiio", "MPIIO") if module == "DXT_MPIIO" else ("posix", "POSIX")
    total, seen = 0.0, False
    for fc in files:
        c = getattr(fc, layer)
        if not c:
            continue
        seen = True
        total += (c.get(f"{prefix}_F_READ_TIME", 0.0) + c.get(f"{prefix}_F_WRITE_TIME", 0.0)) \
            / max(fc.ranks, 1)
    return total if seen else None


def estimate(phases: Sequence[Phase], patterns: Sequence[Mapping[str, Any]],
             measured_total: float | None = None,
             counters_time: float | None = None) -> dict[str, Any]:
    """Per-phase and total estimated I/O time, with relative errors where measurable.

    ``measured_total`` is a time the user gives; ``counters_time`` the log's counter-based
    I/O time per rank (:func:`counters_io_time`), reported beside the traced time.
    """
    rows: list[dict[str, Any]] = []
    total_estimated = 0.0
    for phase in phases:
        bandwidth, how = _bandwidth(phase, patterns)
        estimated = phase.weight / bandwidth
        total_estimated += estimated
        rows.append({
            "phase": phase.index, "op": phase.op, "request_size": phase.request_size,
            "file": "shared" if phase.shared else "per-process", "access": phase.collective,
            "blocking": phase.blocking, "ranks": phase.ranks, "reps": phase.repetitions,
            "weight_bytes": phase.weight, "bandwidth_MiB_s": bandwidth / 2**20,
            "estimated_s": estimated, "measured_s": phase.duration,
            "error_pct": relative_error(estimated, phase.duration), "bandwidth_from": how,
        })
    traced = sum(p.duration for p in phases)
    measured = measured_total if measured_total is not None else traced
    return {
        "phases": rows,
        "total": {
            "estimated_s": total_estimated,
            "measured_s": measured,
            "measured_from": "given" if measured_total is not None else "trace",
            "error_pct": relative_error(total_estimated, measured),
            "counters_s": counters_time,
            "counters_error_pct": relative_error(total_estimated, counters_time),
        },
    }


def check_measured(value: float | None) -> None:
    """DataError unless a given measured time is a positive, finite number of seconds."""
    if value is not None and (not math.isfinite(value) or value <= 0):
        raise DataError(f"measured time {value}: must be a positive number of seconds")


@dataclass(frozen=True)
class LogEstimate:
    """The estimate of one trace's I/O time: its ``phases`` and the ``document`` that
    ``iotune estimate`` reports (:func:`estimate` with the log, layer and file names)."""

    phases: TracePhases
    document: dict[str, Any]

    def phase_rows(self, show_all: bool = False) -> list[dict[str, Any]]:
        """The document's phase rows: every one, or only the relevant phases'."""
        relevant = {p.index for p in self.phases.relevant}
        return [r for r in self.document["phases"] if show_all or r["phase"] in relevant]


def estimate_log(path: str | os.PathLike[str], characterization: str | os.PathLike[str],
                 module: str = "auto", gap: float = DEFAULT_GAP_S,
                 measured: float | None = None) -> LogEstimate:
    """Estimate the I/O time of the trace at ``path`` from a characterisation file.

    Phases as :func:`~iotune.darshan.phases.trace_phases` finds them; the total is
    compared with ``measured`` seconds when given, else with the traced time, and with
    the log's read and write time counters when it has them. DataError for a measured time
    that is not positive, an unusable characterisation file or a file without a trace.
    """
    check_measured(measured)
    patterns = read_characterization(characterization)
    found = trace_phases(path, module, gap)
    files = found.trace.files
    counters = counters_io_time(files, found.module) if files else None
    result = estimate(found.phases, patterns, measured, counters)
    document = {"log": str(found.trace.path), "module": found.module,
                "characterization": str(characterization), **result}
    return LogEstimate(found, document)
