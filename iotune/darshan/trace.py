"""DXT traces: the operations Darshan's extended tracing recorded, from a log or a text dump.

A trace comes from a binary Darshan log with DXT_POSIX or DXT_MPIIO records, or from the
text that ``darshan-dxt-parser`` prints for such a log (one header block per file and
rank, then one line per operation)::

    # DXT, file_id: 1038..., file_name: /scratch/app/out.h5
    # DXT, rank: 0, hostname: nid00097
    # Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)      End(s)
     X_POSIX       0  write        0            2048       262144      0.0300      0.0331

Either way the result is a :class:`Trace`: one row per operation with the columns of
:data:`~iotune.darshan.logfile.DXT_COLUMNS` (module ``DXT_POSIX`` or ``DXT_MPIIO``).

DXT does not record which MPI-IO function made an operation. A text trace may name it in
a ninth field of an ``X_MPIIO`` line (``MPI_File_write_at_all``; iotune's own traced
programs write it, darshan-dxt-parser does not); the rows then have a ``call`` column,
from which :mod:`iotune.darshan.access` tells collective and non-blocking operations.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from iotune.darshan.logfile import (
    DXT_COLUMNS,
    check_readable,
    looks_like_text_trace,
    read_log,
)
from iotune.darshan.records import file_counters
from iotune.errors import DataError
from iotune.execution.files import file_sha256
from iotune.inputs import read_bytes
from iotune.workload.counters import FileCounters

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

_FILE_RE = re.compile(r"^#\s*DXT,\s*file_id:\s*(\d+),\s*file_name:\s*(.*?)\s*$")
_MODULES = {"X_POSIX": "DXT_POSIX", "X_MPIIO": "DXT_MPIIO"}
#: The ninth field of an ``X_MPIIO`` line is an MPI-IO function when it starts so.
CALL_PREFIX = "MPI_File_"
#: ``--module`` choices and the DXT module each selects (auto: MPI-IO when traced).
MODULE_CHOICES = {"posix": "DXT_POSIX", "mpiio": "DXT_MPIIO"}


@dataclass(frozen=True)
class Trace:
    """Traced operations of one run; ``files`` are the log's counters (empty for text)."""

    path: Path
    sha256: str
    ops: pd.DataFrame
    names: Mapping[int, str]
    nprocs: int
    files: list[FileCounters] = field(default_factory=list)

    def modules(self) -> list[str]:
        return sorted(set(self.ops["module"])) if not self.ops.empty else []

    def select(self, module: str) -> pd.DataFrame:
        """The operations of ``module`` (``auto``: DXT_MPIIO when traced, else DXT_POSIX)."""
        present = self.modules()
        if module == "auto":
            chosen = "DXT_MPIIO" if "DXT_MPIIO" in present else "DXT_POSIX"
        else:
            chosen = MODULE_CHOICES[module]
        if chosen not in present:
            raise DataError(f"{self.path}: no {chosen} records (traced modules: "
                            f"{', '.join(present) or 'none'})")
        return self.ops[self.ops["module"] == chosen].reset_index(drop=True)


def read_trace(path: str | os.PathLike[str]) -> Trace:
    """The DXT trace in a binary Darshan log or a darshan-dxt-parser text dump."""
    trace_path = Path(path)
    check_readable(trace_path, "Darshan log or DXT trace")
    with trace_path.open("rb") as handle:
        head = handle.read(65536)
    if looks_like_text_trace(head):
        return _read_text(trace_path)
    log = read_log(trace_path)
    if log.dxt.empty:
        raise DataError(f"{trace_path}: no DXT_POSIX or DXT_MPIIO records; phases need a DXT "
                        "trace (run the application with DXT_ENABLE_IO_TRACE=1)")
    return Trace(trace_path, log.sha256, log.dxt, log.names, log.nprocs, file_counters(log))


def _read_text(path: Path) -> Trace:
    import pandas as pd

    names: dict[int, str] = {}
    rows: list[tuple[str, int, int, str, int, int, float, float, str]] = []
    file_id: int | None = None
    text = read_bytes(path, "DXT trace", DataError).decode("utf-8", errors="replace")
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped:
            continue
        if stripped.startswith("#"):
            match = _FILE_RE.match(stripped)
            if match:
                file_id = int(match.group(1))
                names[file_id] = match.group(2)
            continue
        fields = stripped.split()
        if fields[0] not in _MODULES:
            continue
        if file_id is None or len(fields) < 8:
            raise DataError(f"{path}:{number}: trace line before any '# DXT, file_id:' "
                            "header or with fewer than 8 fields")
        try:
            rank, offset, length = int(fields[1]), int(fields[4]), int(fields[5])
            start, end = float(fields[6]), float(fields[7])
        except ValueError:
            raise DataError(f"{path}:{number}: expected integers for rank, offset and "
                            f"length and seconds for start and end: {stripped[:80]!r}") from None
        if fields[2] not in ("write", "read"):
            raise DataError(f"{path}:{number}: operation {fields[2]!r} is not write or read")
        if length < 0 or end < start:
            raise DataError(f"{path}:{number}: negative length or end before start")
        call = fields[8] if (fields[0] == "X_MPIIO" and len(fields) > 8
                             and fields[8].startswith(CALL_PREFIX)) else ""
        rows.append((_MODULES[fields[0]], file_id, rank, fields[2], offset, length, start, end,
                     call))
    if not rows:
        raise DataError(f"{path}: no traced operations (X_POSIX or X_MPIIO lines)")
    ops = pd.DataFrame(rows, columns=[*DXT_COLUMNS, "call"])
    if not ops["call"].any():
        ops = ops.drop(columns="call")
    return Trace(path, file_sha256(path), ops, names, int(ops["rank"].max()) + 1)


def write_text_trace(path: Path, ops: pd.DataFrame, names: Mapping[int, str]) -> None:
    """Write ``ops`` in darshan-dxt-parser's text layout (readable by :func:`read_trace`),
    with each MPI-IO operation's function as a ninth field when ``ops`` has a ``call``."""
    lines = ["# darshan log version: 3.41 (text trace)"]
    for key, group in ops.groupby(["module", "file_id", "rank"], sort=True):
        module, file_id, rank = cast(tuple[Any, Any, Any], key)
        file_id, rank = int(file_id), int(rank)
        tag = "X_POSIX" if module == "DXT_POSIX" else "X_MPIIO"
        lines += ["", f"# DXT, file_id: {file_id}, file_name: {names.get(file_id, '?')}",
                  f"# DXT, rank: {rank}, hostname: localhost",
                  f"# DXT, write_count: {int((group['op'] == 'write').sum())}, "
                  f"read_count: {int((group['op'] == 'read').sum())}",
                  "# Module    Rank  Wt/Rd  Segment          Offset       Length    Start(s)"
                  "      End(s)"]
        for op in ("write", "read"):
            part = group[group["op"] == op]
            for i, row in enumerate(part.itertuples(index=False)):
                offset, length = int(row.offset), int(row.length)  # type: ignore[arg-type]
                call = str(getattr(row, "call", "") or "") if tag == "X_MPIIO" else ""
                lines.append(f"{tag:>8}{rank:8d}{op:>7}{i:9d}{offset:16d}"
                             f"{length:16d}{row.start:12.4f}{row.end:12.4f}"
                             + (f"  {call}" if call else ""))
    path.write_text("\n".join(lines) + "\n")
