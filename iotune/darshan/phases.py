"""I/O phases of a traced run, their weights and request sizes.

The paper finds an I/O phase as the I/O operations with similar order between two
communication events. A DXT trace records no communication, so here a phase is defined
from the operations alone:

1. **Runs, per rank.** Each rank's operations, in start-time order, are cut into runs of
   consecutive operations with the same kind (read or write), the same request size and
   the same file, where each operation starts at most ``gap`` seconds after the previous
   one ended. A run's *access pattern* is ``contiguous`` (each request starts where the
   previous ended), ``strided`` (constant step), ``sequential`` (increasing offsets, varying
   steps), ``random`` (otherwise) or ``single`` (one request).
2. **Phases, across ranks.** Runs of the same kind, request size and file sharing (one
   file for all ranks, or each rank its own) whose time spans overlap or lie within
   ``gap`` of each other form one phase: the ranks doing the same thing at the same time.

   Operations of one phase also share their access mode: collective or independent,
   blocking or non-blocking (:mod:`iotune.darshan.access`; ``n/a`` for POSIX).
3. **Repetitions.** Phases that do the same thing again (same kind, request size,
   sharing, pattern, access mode, ranks, files and operations) are one phase whose
   *repetitions* count them, as the paper weights a phase by how often it repeats (NAS
   BT-IO's read phase: 50 repetitions).

A phase's *weight* is the bytes it moves over all its repetitions (the paper's
``np x rep x rs``), its pattern the pattern of most of its operations, its measured time
the sum of its repetitions' wall times (each from its first operation's start to its last
one's end). A phase is *relevant* when it takes at least 1% of the total phase time or
moves at least 1% of the bytes (the paper's 1% rule: weight times phase time).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from iotune.darshan.access import NOT_APPLICABLE, UNKNOWN, label_access
from iotune.darshan.summary import human_bytes
from iotune.darshan.trace import Trace, read_trace
from iotune.errors import DataError

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

DEFAULT_GAP_S = 0.01
RELEVANT_SHARE = 0.01


@dataclass(frozen=True)
class Phase:
    """One I/O phase (see the module doc): ``operations`` and ``weight`` over all its
    ``repetitions``; ``start`` and ``end`` are the first's start and the last's end,
    ``busy`` the sum of their wall times (None: one occurrence, ``end - start``);
    ``occurrences`` the indices of the single occurrences it groups."""

    index: int
    module: str
    op: str
    request_size: int
    pattern: str
    shared: bool
    ranks: int
    files: int
    operations: int
    weight: int
    start: float
    end: float
    relevant: bool = True
    collective: str = NOT_APPLICABLE
    blocking: str = NOT_APPLICABLE
    repetitions: int = 1
    busy: float | None = None
    occurrences: tuple[int, ...] = ()

    @property
    def duration(self) -> float:
        """The measured time: the sum of the repetitions' wall times."""
        return self.end - self.start if self.busy is None else self.busy

    @property
    def per_rank(self) -> int:
        """Operations per rank in one repetition (rounded up)."""
        return -(-self.operations // max(self.ranks * self.repetitions, 1))

    @property
    def mode_known(self) -> bool:
        """Whether the access mode is known (an MPI-IO phase with a call or counters)."""
        return UNKNOWN not in (self.collective, self.blocking) and \
            NOT_APPLICABLE not in (self.collective, self.blocking)

    def key(self) -> str:
        """The pattern a file-system characterisation measures for this phase: operation,
        request size, sharing, and the access mode when known."""
        sharing = "shared" if self.shared else "per-process"
        mode = f" {self.collective} {self.blocking}" if self.mode_known else ""
        return f"{self.op} {self.request_size} {sharing}{mode}"

    def row(self) -> dict[str, object]:
        return {
            "phase": self.index, "op": self.op, "request_size": self.request_size,
            "pattern": self.pattern, "file": "shared" if self.shared else "per-process",
            "access": self.collective, "blocking": self.blocking,
            "ranks": self.ranks, "reps": self.repetitions, "ops": self.operations,
            "per_rank": self.per_rank, "weight_bytes": self.weight,
            "start_s": round(self.start, 6), "duration_s": round(self.duration, 6),
            "occurrences": span_text(self.occurrences), "relevant": self.relevant,
        }


def span_text(indices: tuple[int, ...]) -> str:
    """``0,3,5-9``: sorted indices with runs of consecutive ones as ranges."""
    runs: list[list[int]] = []
    for i in sorted(indices):
        if runs and runs[-1][1] == i - 1:
            runs[-1][1] = i
        else:
            runs.append([i, i])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def _run_patterns(ops: pd.DataFrame) -> pd.Series:
    """The access pattern of each run (index: run id), from its offset steps."""
    import pandas as pd

    first = ops["run"] != ops["run"].shift()
    step = ops["offset"].diff().where(~first)
    steps = pd.DataFrame({
        "run": ops["run"],
        "inner": ~first,
        "contiguous": (step == ops["length"]) | first,
        "forward": (step > 0) | first,
        "step": step,
    })
    by_run = steps.groupby("run")
    count = by_run["inner"].sum()
    first_step = steps[steps["inner"]].groupby("run")["step"].first()
    steps["same_step"] = (steps["step"] == steps["run"].map(first_step)) | ~steps["inner"]
    contiguous = by_run["contiguous"].all()
    strided = steps.groupby("run")["same_step"].all()
    forward = by_run["forward"].all()
    pattern = pd.Series("random", index=count.index)
    pattern[forward] = "sequential"
    pattern[strided] = "strided"
    pattern[contiguous] = "contiguous"
    pattern[count == 0] = "single"
    return pattern


def _runs(ops: pd.DataFrame, gap: float) -> pd.DataFrame:
    """Label each operation with its run id (per rank; see the module doc)."""
    ops = ops.sort_values(["rank", "start", "end"], kind="stable").reset_index(drop=True)
    same = (ops["start"] - ops["end"].shift() <= gap)
    for column in ("rank", "op", "length", "file_id", "collective", "blocking"):
        same &= ops[column] == ops[column].shift()
    ops["run"] = (~same).cumsum()
    return ops


_PHASE_KEY = ["op", "length", "shared", "collective", "blocking"]


def find_phases(ops: pd.DataFrame, gap: float = DEFAULT_GAP_S) -> list[Phase]:
    """The single occurrences of phases in the traced operations ``ops`` (one DXT module),
    in start order (:func:`group_repetitions` groups the repeated ones). Without
    ``collective`` and ``blocking`` columns the access mode comes from an optional
    ``call`` column (:func:`~iotune.darshan.access.label_access`)."""
    if gap < 0:
        raise DataError(f"gap {gap}: must be >= 0 seconds")
    if ops.empty:
        return []
    if "collective" not in ops.columns or "blocking" not in ops.columns:
        ops = label_access(ops, {})
    ops = _runs(ops, gap)
    file_ranks = ops.groupby("file_id")["rank"].nunique()
    ops["shared"] = ops["file_id"].map(file_ranks) > 1
    ops["pattern"] = ops["run"].map(_run_patterns(ops))
    runs = ops.groupby("run").agg(op=("op", "first"), length=("length", "first"),
                                  shared=("shared", "first"),
                                  collective=("collective", "first"),
                                  blocking=("blocking", "first"), start=("start", "min"),
                                  end=("end", "max"))
    runs = runs.sort_values([*_PHASE_KEY, "start"], kind="stable")
    key = runs[_PHASE_KEY]
    new_key = (key != key.shift()).any(axis=1)
    reach = runs.groupby(new_key.cumsum())["end"].cummax().shift()
    new_phase = new_key | (runs["start"] > reach + gap)
    ops["phase"] = ops["run"].map(new_phase.cumsum())
    summary = ops.groupby("phase").agg(
        op=("op", "first"), length=("length", "first"), shared=("shared", "first"),
        collective=("collective", "first"), blocking=("blocking", "first"),
        ranks=("rank", "nunique"), files=("file_id", "nunique"), operations=("op", "size"),
        weight=("length", "sum"), start=("start", "min"), end=("end", "max"))
    counts = ops[ops["pattern"] != "single"].groupby(["phase", "pattern"]).size()
    dominant = (counts.reset_index(name="n").sort_values(["phase", "n", "pattern"])
                .groupby("phase")["pattern"].last())
    module = str(ops["module"].iloc[0])
    phases = [
        Phase(index=int(pid), module=module, op=str(row["op"]),
              request_size=int(row["length"]), pattern=str(dominant.get(pid, "single")),
              shared=bool(row["shared"]), ranks=int(row["ranks"]), files=int(row["files"]),
              operations=int(row["operations"]), weight=int(row["weight"]),
              start=float(row["start"]), end=float(row["end"]),
              collective=str(row["collective"]), blocking=str(row["blocking"]))
        for pid, row in zip(summary.index.tolist(), summary.to_dict("records"), strict=True)
    ]
    return _finish(phases)


def _finish(phases: list[Phase]) -> list[Phase]:
    """Number phases by start time and mark the relevant ones."""
    phases = sorted(phases, key=lambda p: (p.start, p.op, p.request_size))
    total_time = sum(p.duration for p in phases)
    total_bytes = sum(p.weight for p in phases)
    out = []
    for i, p in enumerate(phases):
        relevant = (total_time > 0 and p.duration >= RELEVANT_SHARE * total_time) or \
            (total_bytes > 0 and p.weight >= RELEVANT_SHARE * total_bytes)
        out.append(replace(p, index=i, relevant=relevant,
                           occurrences=p.occurrences or (i,)))
    return out


def repetition_key(phase: Phase) -> tuple[object, ...]:
    """What two occurrences share when one repeats the other (the module doc, step 3)."""
    return (phase.op, phase.request_size, phase.shared, phase.pattern, phase.collective,
            phase.blocking, phase.ranks, phase.files, phase.operations)


def group_repetitions(occurrences: list[Phase]) -> list[Phase]:
    """One phase per distinct :func:`repetition_key` of ``occurrences`` (from
    :func:`find_phases`), its repetitions counted and its weight, operations and busy
    time summed; numbered by first start, relevance judged on the grouped phases."""
    groups: dict[tuple[object, ...], list[Phase]] = {}
    for phase in occurrences:
        groups.setdefault(repetition_key(phase), []).append(phase)
    merged = [
        replace(same[0], operations=sum(p.operations for p in same),
                weight=sum(p.weight for p in same), end=max(p.end for p in same),
                repetitions=len(same), busy=sum(p.duration for p in same),
                occurrences=tuple(p.index for p in same))
        for same in groups.values()
    ]
    return _finish(merged)


@dataclass(frozen=True)
class TracePhases:
    """The phases found in one DXT layer (``module``, e.g. ``DXT_MPIIO``) of ``trace``:
    ``phases`` with repetitions grouped, ``occurrences`` each one apart."""

    trace: Trace
    module: str
    gap_s: float
    phases: list[Phase]
    occurrences: list[Phase]

    @property
    def relevant(self) -> list[Phase]:
        return [p for p in self.phases if p.relevant]

    def document(self, show_all: bool = False) -> dict[str, Any]:
        """The ``iotune phases`` document: every phase, or only the relevant ones, each
        with its ``weight`` also in binary units."""
        shown = self.phases if show_all else self.relevant
        rows: list[dict[str, Any]] = [p.row() for p in shown]
        for row in rows:
            row["weight"] = human_bytes(float(row["weight_bytes"]))
        return {"log": str(self.trace.path), "module": self.module, "gap_s": self.gap_s,
                "phases_total": len(self.phases), "occurrences_total": len(self.occurrences),
                "phases": rows}


def trace_phases(path: str | os.PathLike[str], module: str = "auto",
                 gap: float = DEFAULT_GAP_S) -> TracePhases:
    """:func:`find_phases` in the DXT trace at ``path`` (a binary Darshan log or a
    darshan-dxt-parser dump), in layer ``module`` (``auto``: MPI-IO when traced, else
    POSIX; ``posix``; ``mpiio``), with repetitions grouped and each operation's access
    mode from the trace's calls or the log's counters. DataError when the file has no such
    trace."""
    trace = read_trace(path)
    ops = label_access(trace.select(module), trace.names, trace.files)
    occurrences = find_phases(ops, gap)
    return TracePhases(trace, str(ops["module"].iloc[0]), gap,
                       group_repetitions(occurrences), occurrences)
