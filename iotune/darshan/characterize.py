"""File-system characterisation: the ior kernel's bandwidth for each phase's pattern.

As in the paper, the benchmark is configured from the phase model: transfer size = the
phase's request size, block = its requests per rank (so one block per rank), one shared
file or one file per rank like the phase, as many ranks as the phase up to ``max_ranks``,
and at most ``max_bytes_per_rank`` per rank (fewer requests per rank beyond that). Each
distinct pattern (operation, request size, file sharing) is measured once per repetition
with real MPI runs through :class:`~iotune.backends.mpi.MpiBackend`.

The bandwidth of a pattern is the bytes written divided by the time ranks spent in write
calls (the kernel's ``write`` phase, slowest rank): the same quantity a DXT phase's wall
time measures. The ior kernel only writes, so read phases are characterised by the write
of the same pattern (``measured_as: write``).

The characterisation file (``schema_version`` 1) that ``iotune estimate`` reads::

    schema_version: 1
    source_log: app.darshan      # the trace whose phases were characterised
    source_sha256: 3f1c...
    module: DXT_MPIIO            # the traced layer
    gap_s: 0.01
    system: local                # the config's system.name
    fs_type: lustre              # the file system of the scratch directory
    patterns:                    # one per distinct pattern (see measure)
    - {key: write 1048576 shared, op: write, request_size: 1048576, shared: true,
       ranks: 4, args: {...}, measured_as: write, runs: 1, bytes: 67108864,
       bandwidth_bytes_s: 512000000.0, write_time_s: 0.131}
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iotune.backends.base import Backend, RunRequest
from iotune.darshan.phases import Phase, TracePhases
from iotune.errors import DataError
from iotune.kernels import get_kernel

if TYPE_CHECKING:
    from iotune.backends.mpi import MpiBackend

CHARACTERIZATION_SCHEMA_VERSION = 1
DEFAULT_MAX_BYTES_PER_RANK = 64 * 2**20
DEFAULT_MAX_RANKS = 4


@dataclass(frozen=True)
class PatternRun:
    """How one phase pattern is measured: the ior arguments and rank count."""

    key: str
    op: str
    request_size: int
    shared: bool
    ranks: int
    params: dict[str, Any]


def plan(phases: Sequence[Phase], api: str, max_ranks: int = DEFAULT_MAX_RANKS,
         max_bytes_per_rank: int = DEFAULT_MAX_BYTES_PER_RANK) -> list[PatternRun]:
    """One ior configuration per distinct pattern of ``phases`` (largest phase decides)."""
    if max_ranks < 1:
        raise DataError(f"max ranks {max_ranks}: must be a positive integer")
    if max_bytes_per_rank < 1:
        raise DataError(f"max bytes per rank {max_bytes_per_rank}: must be positive")
    chosen: dict[str, Phase] = {}
    for phase in phases:
        if phase.request_size <= 0:
            continue
        known = chosen.get(phase.key())
        if known is None or phase.weight > known.weight:
            chosen[phase.key()] = phase
    spec = get_kernel("ior")
    runs = []
    for key, phase in chosen.items():
        ranks = max(1, min(phase.ranks, max_ranks))
        per_rank = max(1, min(phase.per_rank, max_bytes_per_rank // phase.request_size))
        params = spec.normalise_params({
            "api": api, "transfer_size": phase.request_size,
            "block_size": phase.request_size * per_rank, "segments": 1,
            "file_per_process": not phase.shared, "fsync": False, "verify": False})
        runs.append(PatternRun(key, phase.op, phase.request_size, phase.shared, ranks, params))
    return runs


def measure(runs: Sequence[PatternRun], backend: Backend, repeat: int = 1,
            progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Run each pattern ``repeat`` times; one row per pattern with its median bandwidth."""
    rows = []
    for run in runs:
        bandwidths, times, errors = [], [], []
        nbytes = 0
        for rep in range(repeat):
            if progress is not None:
                progress(f"iotune: characterize {run.key} ({run.ranks} ranks, "
                         f"{run.params['block_size']} bytes per rank), run {rep + 1}/{repeat}")
            record = backend.measure(RunRequest("ior", run.ranks, {}, run.params), rep)
            result = record.get("result") or {}
            write_time = float((result.get("times_s") or {}).get("write", 0.0))
            nbytes = int(result.get("bytes_written", 0))
            if record.get("status") != "ok" or write_time <= 0 or nbytes <= 0:
                errors.append(str(record.get("error") or "no write time in the result"))
                continue
            bandwidths.append(nbytes / write_time)
            times.append(write_time)
        row: dict[str, Any] = {
            "key": run.key, "op": run.op, "request_size": run.request_size,
            "shared": run.shared, "ranks": run.ranks, "args": dict(run.params),
            "measured_as": "write", "runs": len(bandwidths), "bytes": nbytes,
        }
        if bandwidths:
            row["bandwidth_bytes_s"] = statistics.median(bandwidths)
            row["write_time_s"] = statistics.median(times)
        else:
            row["error"] = errors[-1] if errors else "not run"
        rows.append(row)
    return rows


def ior_api(api: str, module: str) -> str:
    """The ior ``api`` to measure a trace of ``module`` with: ``api`` itself, or for
    ``auto`` mpiio when the trace is MPI-IO's (``DXT_MPIIO``), else posix."""
    if api != "auto":
        return api
    return "mpiio" if module == "DXT_MPIIO" else "posix"


def characterize(phases: TracePhases, runs: Sequence[PatternRun], backend: MpiBackend,
                 repeat: int = 1,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure ``runs`` (:func:`plan` of ``phases``) with ``backend`` and return the
    characterisation document (module doc), patterns that failed included with their
    ``error``. DataError when no pattern could be measured at all."""
    rows = measure(runs, backend, repeat, progress)
    failed = [r for r in rows if "bandwidth_bytes_s" not in r]
    if not rows or len(failed) == len(rows):
        reason = failed[0].get("error") if failed else "no relevant phase"
        raise DataError(f"{phases.trace.path}: no phase pattern could be measured ({reason})")
    return {"schema_version": CHARACTERIZATION_SCHEMA_VERSION,
            "source_log": str(phases.trace.path), "source_sha256": phases.trace.sha256,
            "module": phases.module, "gap_s": phases.gap_s,
            "system": backend.config.system.name, "fs_type": backend.fs_type,
            "patterns": rows}


def write_characterization(path: Path, document: dict[str, Any]) -> None:
    """Write a characterisation ``document`` as YAML (keys in their order) to ``path``."""
    path.write_text(yaml.safe_dump(document, sort_keys=False))
