"""The preload library's JSON report, read: its opens, the open that moved the data, the
I/O of each file.

The library (``iotune_preload.c``) writes the report at ``MPI_Finalize`` from world rank 0
after merging what every rank saw (docs/applications.md has every field). ``version``:

1. ``files``: one entry per path and opener (``MPI_File_open``, ``H5Fcreate``,
   ``H5Fopen``) with the hints of its *last* open; totals of the MPI-IO writes.
2. Each entry of ``files`` also has ``opens``: one record per open, the ranks of a
   collective open merged, with its communicator size, ``amode``, the hints read back right
   after it, the bytes written and read through it (summed over ranks), its open-to-close,
   write and read times (slowest rank) and how many ranks wrote, wrote to the file system,
   and did both inside collective writes. The file's ``hints_in_effect`` are those of its
   open that moved the most data, its ``bytes_written``/``bytes_read`` the sums over its
   opens and ``open_s`` their open-to-close times added. Read totals join the write totals.
3. Each open also has ``section``: the ``file:<glob>`` section of the settings file whose
   settings were applied to it, null for the lines before any section; ``sections`` lists
   each section's glob and ``settings_applied`` (the top-level ``settings_applied`` are the
   lines before any section).

A version-2 report's opens have no section (:attr:`Open.section` is None). A version-1
report has no opens: :func:`data_open` returns :data:`NO_OPENS` for it, and
its readers fall back to ``files[0]``'s hints as before.

This module only reads a parsed report (a mapping); it never imports MPI.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

__all__ = ["NO_OPENS", "REPORT_VERSION", "FileIO", "Open", "data_open", "data_opens",
           "file_io", "has_opens", "opens"]

#: The report version the library writes (``REPORT_VERSION`` in ``iotune_preload.c``).
REPORT_VERSION = 3
#: What :func:`data_open` returns for a report without per-open records (version 1).
NO_OPENS: Final = "no opens"
#: The witness counts of an open, as the report names them.
WRITER_FIELDS = ("ranks_writing", "ranks_writing_to_files", "ranks_writing_collectively",
                 "ranks_writing_to_files_collectively")


@dataclass(frozen=True)
class Open:
    """One open of a file as the report gives it (all ranks of a collective open merged),
    what iotune uses of it: its times, ``ranks`` and ``closed`` are left in the report.

    ``hints`` are those read back right after the open by the communicator's rank 0, None
    when that rank's record is missing. ``section`` is the glob of the settings file's
    section applied to the open, None for the settings before any section."""

    path: str
    opened_by: str
    comm_size: int
    bytes_written: int
    bytes_read: int
    writers: Mapping[str, int]
    hints: Mapping[str, str] | None
    section: str | None = None

    @property
    def bytes(self) -> int:
        """Bytes moved through this open: written and read, all ranks."""
        return self.bytes_written + self.bytes_read


def _int(value: Any) -> int:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else 0.0


def _entries(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    files = report.get("files")
    return [f for f in files if isinstance(f, Mapping)] if isinstance(files, list) else []


def opens(report: Mapping[str, Any]) -> list[Open]:
    """Every open the report lists, file by file in its order; [] for a version-1 report."""
    out = []
    for entry in _entries(report):
        for raw in entry.get("opens") or []:
            if not isinstance(raw, Mapping):
                continue
            hints = raw.get("hints_in_effect")
            out.append(Open(
                str(entry.get("path", "")), str(entry.get("opened_by", "")),
                _int(raw.get("comm_size")), _int(raw.get("bytes_written")),
                _int(raw.get("bytes_read")),
                {name: _int(raw.get(name)) for name in WRITER_FIELDS},
                {str(k): str(v) for k, v in hints.items()} if isinstance(hints, Mapping)
                else None,
                raw["section"] if isinstance(raw.get("section"), str) else None))
    return out


def has_opens(report: Mapping[str, Any]) -> bool:
    """Whether the report records opens (version 2 and later)."""
    return _int(report.get("version")) >= 2


def data_opens(report: Mapping[str, Any]) -> list[Open]:
    """The opens that moved the data: those with the most bytes (written plus read, all
    ranks), and among them those of the largest communicator. [] when no open moved a
    byte (or the report has no opens)."""
    moved = [o for o in opens(report) if o.bytes > 0]
    if not moved:
        return []
    most = max(o.bytes for o in moved)
    tied = [o for o in moved if o.bytes == most]
    widest = max(o.comm_size for o in tied)
    return [o for o in tied if o.comm_size == widest]


def data_open(report: Mapping[str, Any]) -> dict[str, Any] | str | None:
    """What a run's result keeps of the opens that moved the data (``result.data_open``).

    :data:`NO_OPENS` for a version-1 report; None when no open moved data; otherwise a
    mapping: ``path``, ``opened_by``, ``comm_size``, ``bytes`` and ``opens`` (how many opens
    tied) of the first of :func:`data_opens`; ``hints_in_effect``, the hints every tied
    open read back with the same value; ``hints_disputed``, the names read back with
    different values (or by some of them only), which say nothing of what the I/O had; and
    the writer counts (``ranks_writing``, ``ranks_writing_to_files``,
    ``ranks_writing_collectively``, ``ranks_writing_to_files_collectively``) of the tied
    opens that wrote (all of them if none did), each None unless those agree on it.
    """
    if not has_opens(report):
        return NO_OPENS
    found = data_opens(report)
    if not found:
        return None
    first = found[0]
    hints_seen = [o.hints for o in found if o.hints is not None]
    names = sorted({name for hints in hints_seen for name in hints})
    agreed: dict[str, str] = {}
    disputed: list[str] = []
    for name in names:
        values = {hints.get(name) for hints in hints_seen}
        if len(values) == 1 and None not in values:
            agreed[name] = str(values.pop())
        else:
            disputed.append(name)
    out: dict[str, Any] = {
        "path": first.path, "opened_by": first.opened_by, "comm_size": first.comm_size,
        "bytes": first.bytes, "opens": len(found), "hints_in_effect": agreed,
        "hints_disputed": disputed}
    # Who wrote is witnessed by the tied opens that wrote (IOR's read phase ties with its
    # write phase and wrote nothing).
    writing = [o for o in found if o.bytes_written > 0] or found
    for field in WRITER_FIELDS:
        counts = {o.writers[field] for o in writing}
        out[field] = counts.pop() if len(counts) == 1 else None
    return out


@dataclass(frozen=True)
class FileIO:
    """The I/O of one file as a job measures it: ``seconds`` is the open-to-close time of
    each of its opens (slowest rank) added, the bytes are summed over its opens and ranks."""

    path: str
    opened_by: str
    seconds: float
    bytes_written: int
    bytes_read: int
    opens: int


def file_io(report: Mapping[str, Any], pattern: str | None = None) -> list[FileIO]:
    """Per file of a version-2 report (one entry per path and opener), its I/O; only the
    files matching the shell ``pattern`` when given: their path as the program passed it
    matches (``fnmatch``, whole path, ``*`` crossing ``/``), or an open of theirs had the
    settings section of that very glob (the library also matches a relative path's
    absolute form, so a campaign's ``--files`` given as its section's glob measures the
    files the section tuned). [] for a version-1 report."""
    if not has_opens(report):
        return []
    out = []
    for entry in _entries(report):
        path = str(entry.get("path", ""))
        listed: Sequence[Any] = entry.get("opens") or []
        if pattern is not None and not fnmatch.fnmatchcase(path, pattern) and not any(
                isinstance(raw, Mapping) and raw.get("section") == pattern for raw in listed):
            continue
        out.append(FileIO(path, str(entry.get("opened_by", "")), _float(entry.get("open_s")),
                          _int(entry.get("bytes_written")), _int(entry.get("bytes_read")),
                          len(listed)))
    return out
