"""File-system characterisation: the bandwidth of each phase pattern, writes and reads.

As in the paper (IOR configured from the phase model), each distinct pattern (operation,
request size, file sharing) is measured by a benchmark run shaped like the phase:
transfer size = the phase's request size, one block per rank of all its requests, one
shared file or one file per rank like the phase, as many ranks as the phase up to
``max_ranks``, and at most ``max_bytes_per_rank`` per rank (fewer requests beyond that);
with the MPI-IO api, collective and non-blocking like the phase when its access mode is
known (:mod:`iotune.darshan.access`; a ``mixed`` or unknown mode is measured independent
and blocking). A repeated phase is measured as one repetition: its time is estimated as
its whole weight (every repetition) over that bandwidth.
The benchmark is :mod:`iotune.darshan.pattern_program`, run for real under the configured
launcher by :class:`PatternBackend`: write patterns are timed writing a new file, read
patterns reading a file written, synced and evicted from the page cache just before, so
a read phase is characterised by reads of storage.

The bandwidth of a pattern is the bytes moved divided by the span of its requests over all
ranks (earliest start to latest end): the same quantity a DXT phase's wall time measures.

The characterisation file (``schema_version`` 2; version 1 characterised reads by writes)
that ``iotune estimate`` reads::

    schema_version: 2
    source_log: app.darshan      # the trace whose phases were characterised
    source_sha256: 3f1c...
    module: DXT_MPIIO            # the traced layer
    gap_s: 0.01
    system: local                # the config's system.name
    fs_type: lustre              # the file system of the scratch directory
    direct: false                # O_DIRECT requests (page cache bypassed)
    patterns:                    # one per distinct pattern (see measure)
    - {key: read 1048576 shared collective blocking, op: read, request_size: 1048576, shared: true,
       ranks: 4, args: {...}, measured_as: read, runs: 1, bytes: 67108864,
       bandwidth_bytes_s: 512000000.0, time_s: 0.131}
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from iotune.backends.base import RunRequest
from iotune.darshan.access import COLLECTIVE, NONBLOCKING
from iotune.darshan.phases import Phase, TracePhases
from iotune.errors import DataError
from iotune.execution.outputs import NOTHING_IN_USE, InUse, write_output
from iotune.store.records import Measurement

if TYPE_CHECKING:
    from iotune.config import Config

CHARACTERIZATION_SCHEMA_VERSION = 2
DEFAULT_MAX_BYTES_PER_RANK = 64 * 2**20
DEFAULT_MAX_RANKS = 4
#: The name the pattern runs carry in their RunRequest (not a registered kernel).
PROGRAM = "pattern"
PROGRAM_PATH = Path(__file__).with_name("pattern_program.py")


@dataclass(frozen=True)
class PatternRun:
    """How one phase pattern is measured: the program's arguments and rank count."""

    key: str
    op: str
    request_size: int
    shared: bool
    ranks: int
    params: dict[str, Any]


def plan(phases: Sequence[Phase], api: str, max_ranks: int = DEFAULT_MAX_RANKS,
         max_bytes_per_rank: int = DEFAULT_MAX_BYTES_PER_RANK,
         direct: bool = False) -> list[PatternRun]:
    """One run per distinct pattern of ``phases`` (the largest phase of a pattern decides
    its ranks and requests per rank)."""
    if max_ranks < 1:
        raise DataError(f"max ranks {max_ranks}: must be a positive integer")
    if max_bytes_per_rank < 1:
        raise DataError(f"max bytes per rank {max_bytes_per_rank}: must be positive")
    if direct and api != "posix":
        raise DataError(f"direct I/O with api {api}: O_DIRECT needs the posix api")
    chosen: dict[str, Phase] = {}
    for phase in phases:
        if phase.request_size <= 0:
            continue
        known = chosen.get(phase.key())
        if known is None or phase.weight > known.weight:
            chosen[phase.key()] = phase
    runs = []
    for key, phase in chosen.items():
        ranks = max(1, min(phase.ranks, max_ranks))
        per_rank = max(1, min(phase.per_rank, max_bytes_per_rank // phase.request_size))
        params = {"op": phase.op, "api": api, "transfer_size": phase.request_size,
                  "block_size": phase.request_size * per_rank,
                  "file_per_process": not phase.shared, "direct": direct,
                  "collective": api == "mpiio" and phase.collective == COLLECTIVE,
                  "nonblocking": api == "mpiio" and phase.blocking == NONBLOCKING}
        runs.append(PatternRun(key, phase.op, phase.request_size, phase.shared, ranks, params))
    return runs


def program_argv(params: dict[str, Any], directory: Path, python: str) -> list[str]:
    """The pattern program's command line (without the launcher) for one run."""
    def yes(flag: str) -> str:
        return "yes" if params.get(flag) else "no"

    return [python, str(PROGRAM_PATH), "--dir", str(directory), "--op", str(params["op"]),
            "--api", str(params["api"]), "--transfer-size", str(params["transfer_size"]),
            "--block-size", str(params["block_size"]),
            "--file-per-process", yes("file_per_process"), "--direct", yes("direct"),
            "--collective", yes("collective"), "--nonblocking", yes("nonblocking")]


class PatternBackend:
    """Runs the pattern program under the config's launcher, in a fresh directory below
    ``system.scratch`` that is removed afterwards. A failed run is a record, not an
    exception; an unusable scratch directory is a ConfigError."""

    name = "pattern"

    def __init__(self, config: Config) -> None:
        from iotune.execution.fsinfo import filesystem_of
        from iotune.execution.launchers import make_launcher

        self.config = config
        system = config.system
        self.launcher = make_launcher(system.launcher, system.launcher_template)
        self.python = system.python or sys.executable
        self.fs_type, _ = filesystem_of(system.scratch)

    def command(self, request: RunRequest, directory: Path) -> list[str]:
        """The exact command line that measures ``request`` in ``directory``."""
        from iotune.execution.launchers import LaunchRequest

        program = program_argv(dict(request.params), directory, self.python)
        nodes = self.config.system.limits.nodes_for(request.cores)
        return self.launcher.argv(LaunchRequest(request.cores, tuple(program), nodes))

    def measure(self, request: RunRequest, rep: int = 0) -> dict[str, Any]:
        """One run: ``{"status", "error", "result", "command"}``."""
        from iotune.execution.runner import run_command
        from iotune.execution.scratch import check_scratch

        system = self.config.system
        scratch = check_scratch(system.scratch, "system.scratch")
        directory = Path(tempfile.mkdtemp(prefix="iotune-characterize-", dir=scratch))
        try:
            argv = self.command(request, directory)
            outcome = run_command(argv, system.timeout_s,
                                  env={**os.environ, **system.run_environment()})
        finally:
            shutil.rmtree(directory, ignore_errors=True)
        return {"status": "ok" if outcome.ok else "failed", "error": outcome.reason,
                "result": outcome.result, "command": list(argv), "rep": rep}


def measure(runs: Sequence[PatternRun], backend: Any, repeat: int = 1,
            progress: Callable[[str], None] | None = None) -> list[dict[str, Any]]:
    """Run each pattern ``repeat`` times; one row per pattern with its median bandwidth.

    The repetitions go round the patterns (all patterns once, then again), so a burst of
    load from other jobs touches one run of several patterns rather than every run of
    one. ``backend.measure(RunRequest, rep)`` answers with a record whose ``result``
    holds ``times_s[op]`` and ``bytes_written`` (``bytes_read`` for reads).
    """
    bandwidths: list[list[float]] = [[] for _ in runs]
    times: list[list[float]] = [[] for _ in runs]
    errors: list[list[str]] = [[] for _ in runs]
    moved = [0 for _ in runs]
    for rep in range(repeat):
        for i, run in enumerate(runs):
            if progress is not None:
                progress(f"iotune: characterize {run.key} ({run.ranks} ranks, "
                         f"{run.params['block_size']} bytes per rank), run {rep + 1}/{repeat}")
            record = backend.measure(RunRequest(PROGRAM, run.ranks, {}, run.params), rep)
            measured = Measurement.from_record(record, keep=False)
            seconds = (measured.times.write if run.op == "write" else measured.times.read) or 0.0
            nbytes = (measured.bytes_written if run.op == "write" else measured.bytes_read) or 0
            moved[i] = nbytes
            if record.get("status") != "ok" or seconds <= 0 or nbytes <= 0:
                errors[i].append(str(record.get("error") or f"no {run.op} time in the result"))
                continue
            bandwidths[i].append(nbytes / seconds)
            times[i].append(seconds)
    rows = []
    for i, run in enumerate(runs):
        row: dict[str, Any] = {
            "key": run.key, "op": run.op, "request_size": run.request_size,
            "shared": run.shared, "ranks": run.ranks, "args": dict(run.params),
            "measured_as": run.op, "runs": len(bandwidths[i]), "bytes": moved[i],
        }
        if bandwidths[i]:
            row["bandwidth_bytes_s"] = statistics.median(bandwidths[i])
            row["time_s"] = statistics.median(times[i])
        else:
            row["error"] = errors[i][-1] if errors[i] else "not run"
        rows.append(row)
    return rows


def ior_api(api: str, module: str) -> str:
    """The api to measure a trace of ``module`` with: ``api`` itself, or for ``auto``
    mpiio when the trace is MPI-IO's (``DXT_MPIIO``), else posix."""
    if api != "auto":
        return api
    return "mpiio" if module == "DXT_MPIIO" else "posix"


def characterize(phases: TracePhases, runs: Sequence[PatternRun], backend: Any,
                 repeat: int = 1,
                 progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Measure ``runs`` (:func:`plan` of ``phases``) with ``backend`` (a
    :class:`PatternBackend`) and return the characterisation document (module doc),
    patterns that failed included with their ``error``. DataError when no pattern could
    be measured at all."""
    rows = measure(runs, backend, repeat, progress)
    failed = [r for r in rows if "bandwidth_bytes_s" not in r]
    if not rows or len(failed) == len(rows):
        reason = failed[0].get("error") if failed else "no relevant phase"
        raise DataError(f"{phases.trace.path}: no phase pattern could be measured ({reason})")
    direct = any(bool(r.params.get("direct")) for r in runs)
    return {"schema_version": CHARACTERIZATION_SCHEMA_VERSION,
            "source_log": str(phases.trace.path), "source_sha256": phases.trace.sha256,
            "module": phases.module, "gap_s": phases.gap_s,
            "system": backend.config.system.name, "fs_type": backend.fs_type,
            "direct": direct, "patterns": rows}


def write_characterization(path: Path, document: dict[str, Any], *,
                           in_use: InUse = NOTHING_IN_USE, force: bool = False) -> None:
    """Write a characterisation ``document`` as YAML (keys in their order) to ``path``, by
    the rules of :func:`iotune.execution.outputs.write_output` (option ``-o``)."""
    write_output(path, yaml.safe_dump(document, sort_keys=False), "characterization",
                 option="-o", in_use=in_use, force=force)
