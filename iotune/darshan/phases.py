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

A phase's *weight* is the bytes it moves (the paper's ``np x rep x rs``), its pattern the
pattern of most of its operations, its measured time the wall time from its first
operation's start to its last one's end. A phase is *relevant* when it takes at least 1%
of the total phase time or moves at least 1% of the bytes (the paper's 1% rule).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import pandas as pd

from iotune.darshan.summary import human_bytes
from iotune.darshan.trace import Trace, read_trace
from iotune.errors import DataError

DEFAULT_GAP_S = 0.01
RELEVANT_SHARE = 0.01


@dataclass(frozen=True)
class Phase:
    """One I/O phase (see the module doc)."""

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

    @property
    def duration(self) -> float:
        return self.end - self.start

    @property
    def per_rank(self) -> int:
        """Operations per rank (rounded up): the paper's repetitions."""
        return -(-self.operations // max(self.ranks, 1))

    def key(self) -> str:
        """The pattern a file-system characterisation measures for this phase."""
        sharing = "shared" if self.shared else "per-process"
        return f"{self.op} {self.request_size} {sharing}"

    def row(self) -> dict[str, object]:
        return {
            "phase": self.index, "op": self.op, "request_size": self.request_size,
            "pattern": self.pattern, "file": "shared" if self.shared else "per-process",
            "ranks": self.ranks, "ops": self.operations, "per_rank": self.per_rank,
            "weight_bytes": self.weight, "start_s": round(self.start, 6),
            "duration_s": round(self.duration, 6), "relevant": self.relevant,
        }


def _run_patterns(ops: pd.DataFrame) -> pd.Series:
    """The access pattern of each run (index: run id), from its offset steps."""
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
    same = (
        (ops["rank"] == ops["rank"].shift())
        & (ops["op"] == ops["op"].shift())
        & (ops["length"] == ops["length"].shift())
        & (ops["file_id"] == ops["file_id"].shift())
        & (ops["start"] - ops["end"].shift() <= gap)
    )
    ops["run"] = (~same).cumsum()
    return ops


def find_phases(ops: pd.DataFrame, gap: float = DEFAULT_GAP_S) -> list[Phase]:
    """The phases of the traced operations ``ops`` (one DXT module), in start order."""
    if gap < 0:
        raise DataError(f"gap {gap}: must be >= 0 seconds")
    if ops.empty:
        return []
    ops = _runs(ops, gap)
    file_ranks = ops.groupby("file_id")["rank"].nunique()
    ops["shared"] = ops["file_id"].map(file_ranks) > 1
    ops["pattern"] = ops["run"].map(_run_patterns(ops))
    runs = ops.groupby("run").agg(op=("op", "first"), length=("length", "first"),
                                  shared=("shared", "first"), start=("start", "min"),
                                  end=("end", "max"))
    runs = runs.sort_values(["op", "length", "shared", "start"], kind="stable")
    key = runs[["op", "length", "shared"]]
    new_key = (key != key.shift()).any(axis=1)
    reach = runs.groupby(new_key.cumsum())["end"].cummax().shift()
    new_phase = new_key | (runs["start"] > reach + gap)
    ops["phase"] = ops["run"].map(new_phase.cumsum())
    summary = ops.groupby("phase").agg(
        op=("op", "first"), length=("length", "first"), shared=("shared", "first"),
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
              start=float(row["start"]), end=float(row["end"]))
        for pid, row in zip(summary.index.tolist(), summary.to_dict("records"), strict=True)
    ]
    return _finish(phases)


def _finish(phases: list[Phase]) -> list[Phase]:
    """Number phases by start time and mark the relevant ones."""
    phases.sort(key=lambda p: (p.start, p.op, p.request_size))
    total_time = sum(p.duration for p in phases)
    total_bytes = sum(p.weight for p in phases)
    out = []
    for i, p in enumerate(phases):
        relevant = (total_time > 0 and p.duration >= RELEVANT_SHARE * total_time) or \
            (total_bytes > 0 and p.weight >= RELEVANT_SHARE * total_bytes)
        out.append(Phase(i, p.module, p.op, p.request_size, p.pattern, p.shared, p.ranks,
                         p.files, p.operations, p.weight, p.start, p.end, relevant))
    return out


@dataclass(frozen=True)
class TracePhases:
    """The phases found in one DXT layer (``module``, e.g. ``DXT_MPIIO``) of ``trace``."""

    trace: Trace
    module: str
    gap_s: float
    phases: list[Phase]

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
                "phases_total": len(self.phases), "phases": rows}


def trace_phases(path: str | os.PathLike[str], module: str = "auto",
                 gap: float = DEFAULT_GAP_S) -> TracePhases:
    """:func:`find_phases` in the DXT trace at ``path`` (a binary Darshan log or a
    darshan-dxt-parser dump), in layer ``module`` (``auto``: MPI-IO when traced, else
    POSIX; ``posix``; ``mpiio``). DataError when the file has no such trace."""
    trace = read_trace(path)
    ops = trace.select(module)
    return TracePhases(trace, str(ops["module"].iloc[0]), gap, find_phases(ops, gap))
