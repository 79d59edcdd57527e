"""Collective or independent, blocking or non-blocking: the access mode of traced MPI-IO.

The paper's phase model records, per phase, whether its operations are collective and
whether they block (NAS BT-IO: "blocking I/O operations, collective operations"). A DXT
record holds offsets, lengths and times but not the MPI-IO function, so the mode comes
from one of two places, per operation:

* the **call** a text trace names in an optional ninth field of an ``X_MPIIO`` line
  (``MPI_File_write_at_all``, ``MPI_File_iwrite_at``...): collective when the name has
  ``_all`` or ``_ordered`` (split collectives ``..._all_begin`` included), non-blocking
  when it starts with ``MPI_File_i``;
* else the **file's MPI-IO counters** in a binary log, for the operation's kind:
  ``MPIIO_COLL_*`` and ``MPIIO_SPLIT_*`` count collective calls, ``MPIIO_INDEP_*``
  independent blocking ones and ``MPIIO_NB_*`` non-blocking ones (which Darshan counts
  apart whether or not they are collective, so they count as independent here). A file
  whose counters show both kinds labels its operations ``mixed``.

Without either the mode is ``unknown``; POSIX operations have none (``n/a``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from iotune.workload.counters import FileCounters

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

#: Labels of the ``collective`` column.
COLLECTIVE, INDEPENDENT = "collective", "independent"
#: Labels of the ``blocking`` column.
BLOCKING, NONBLOCKING = "blocking", "non-blocking"
#: Either column, when both kinds occur, when nothing says, or for POSIX operations.
MIXED, UNKNOWN, NOT_APPLICABLE = "mixed", "unknown", "n/a"


def call_mode(call: str) -> tuple[str, str]:
    """(collective, blocking) of one MPI-IO function name; ``unknown`` for an empty one."""
    name = call.strip()
    if not name:
        return UNKNOWN, UNKNOWN
    collective = COLLECTIVE if ("_all" in name or "_ordered" in name) else INDEPENDENT
    blocking = NONBLOCKING if name.startswith("MPI_File_i") else BLOCKING
    return collective, blocking


def _label(yes: float, no: float, yes_label: str, no_label: str) -> str:
    if yes > 0 and no > 0:
        return MIXED
    if yes > 0:
        return yes_label
    if no > 0:
        return no_label
    return UNKNOWN


def counters_mode(mpiio: Mapping[str, float], op: str) -> tuple[str, str]:
    """(collective, blocking) of a file's ``op`` (write or read) from its MPI-IO counters."""
    kind = "WRITES" if op == "write" else "READS"
    coll = mpiio.get(f"MPIIO_COLL_{kind}", 0.0) + mpiio.get(f"MPIIO_SPLIT_{kind}", 0.0)
    indep = mpiio.get(f"MPIIO_INDEP_{kind}", 0.0)
    nonblocking = mpiio.get(f"MPIIO_NB_{kind}", 0.0)
    return (_label(coll, indep + nonblocking, COLLECTIVE, INDEPENDENT),
            _label(nonblocking, coll + indep, NONBLOCKING, BLOCKING))


def label_access(ops: pd.DataFrame, names: Mapping[int, str],
                 files: Sequence[FileCounters] = ()) -> pd.DataFrame:
    """``ops`` (one DXT module) with ``collective`` and ``blocking`` columns (module doc).

    ``names`` maps file ids to names, ``files`` are the log's counters (empty for a text
    trace). An optional ``call`` column holds each operation's MPI-IO function.
    """
    import pandas as pd

    ops = ops.copy()
    if ops.empty:
        ops["collective"] = pd.Series(dtype=object)
        ops["blocking"] = pd.Series(dtype=object)
        return ops
    by_name = {fc.name: fc.mpiio for fc in files if fc.mpiio}
    calls = ops["call"] if "call" in ops.columns else pd.Series("", index=ops.index)
    # A trace has many operations and few distinct (module, file, op, call): each is
    # labelled once.
    modes: dict[tuple[Any, Any, Any, Any], tuple[str, str]] = {}
    collective: list[str] = []
    blocking: list[str] = []
    for row in zip(ops["module"], ops["file_id"], ops["op"], calls.fillna(""), strict=True):
        if row not in modes:
            modes[row] = _operation_mode(*row, names, by_name)
        collective.append(modes[row][0])
        blocking.append(modes[row][1])
    ops["collective"] = collective
    ops["blocking"] = blocking
    return ops


def _operation_mode(module: Any, file_id: Any, op: Any, call: Any, names: Mapping[int, str],
                    by_name: Mapping[str, Mapping[str, float]]) -> tuple[str, str]:
    """(collective, blocking) of one traced operation (module doc); ``by_name`` holds the
    MPI-IO counters of each file that has them."""
    if module != "DXT_MPIIO":
        return NOT_APPLICABLE, NOT_APPLICABLE
    if call:
        return call_mode(str(call))
    counters = by_name.get(names.get(int(file_id), ""), {})
    return counters_mode(counters, str(op)) if counters else (UNKNOWN, UNKNOWN)
