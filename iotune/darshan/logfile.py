"""Reading a Darshan log into plain tables, safely.

pydarshan wraps Darshan's C reader, which aborts the whole process on some damaged or
truncated logs. :func:`read_log` therefore checks the header itself, then reads the log in a
forked child process and receives plain pandas tables through a pipe: a crash of the reader
becomes a :class:`~iotune.errors.DataError`, and the driver never imports pydarshan.

Every failure is one ``DataError`` line naming the file and the rule it breaks: missing
file, a directory, an empty file, not a Darshan log (no Darshan 3.x header), a text DXT
trace where a binary log is needed, a log the reader cannot decode, a log without a module
the caller needs (:meth:`DarshanLog.require`).
"""

from __future__ import annotations

import os
import pickle
import re
import struct
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.errors import DataError
from iotune.execution.files import file_sha256
from iotune.inputs import check_regular

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

#: Darshan's magic number, right after the 8-byte version string of every 3.x log.
DARSHAN_MAGIC = 6567223
#: The counter modules iotune reads (HDF5 is H5F for files, H5D for datasets).
COUNTER_MODULES = ("POSIX", "MPI-IO", "H5F", "H5D")
DXT_MODULES = ("DXT_POSIX", "DXT_MPIIO")
#: Columns of :attr:`DarshanLog.dxt`, one row per traced operation.
DXT_COLUMNS = ("module", "file_id", "rank", "op", "offset", "length", "start", "end")
_VERSION_RE = re.compile(rb"^3\.\d{1,2}\x00*$")


def _empty_trace() -> pd.DataFrame:
    """A DXT trace frame without operations (pandas is imported on first use)."""
    import pandas as pd

    return pd.DataFrame(columns=list(DXT_COLUMNS))


@dataclass(frozen=True)
class DarshanLog:
    """What iotune uses of one Darshan log.

    ``counters[module]`` has one row per record with ``rank`` (-1: shared by all ranks),
    ``id`` and every integer and float counter of that module. ``names`` maps record ids to
    file names (HDF5 datasets are ``file:/path``). ``dxt`` holds the traced operations
    (columns :data:`DXT_COLUMNS`; empty without DXT); times are seconds from job start.
    """

    path: Path
    sha256: str
    version: str
    nprocs: int
    run_time: float
    exe: str
    lib_version: str
    modules: tuple[str, ...]
    counters: Mapping[str, pd.DataFrame]
    names: Mapping[int, str]
    dxt: pd.DataFrame = field(default_factory=_empty_trace)

    def has(self, module: str) -> bool:
        """True when the log holds at least one record of ``module``."""
        frame = self.counters.get(module)
        return frame is not None and not frame.empty

    def require(self, modules: tuple[str, ...], purpose: str) -> None:
        """DataError unless at least one of ``modules`` has records; ``purpose`` says why."""
        if any(self.has(m) for m in modules):
            return
        present = ", ".join(self.modules) or "none"
        wanted = " or ".join(modules)
        raise DataError(f"{self.path}: no {wanted} records; {purpose} needs them "
                        f"(modules in this log: {present})")


def check_readable(path: Path, what: str = "Darshan log") -> None:
    """DataError unless ``path`` is an existing, non-empty regular file (a named pipe or a
    device is refused before anything opens it)."""
    if not path.exists():
        raise DataError(f"{path}: no such file (expected a {what})")
    if path.is_dir():
        raise DataError(f"{path}: is a directory, not a {what}")
    check_regular(path, what, DataError)
    if path.stat().st_size == 0:
        raise DataError(f"{path}: empty file, not a {what}")


def looks_like_text_trace(head: bytes) -> bool:
    """True when ``head`` (a file's first bytes) is the text output of darshan-dxt-parser."""
    return b"# DXT, file_id:" in head or head.lstrip().startswith(b"# darshan log version")


def log_version(path: Path) -> str:
    """The format version of a binary Darshan 3.x log; DataError for anything else."""
    check_readable(path)
    with path.open("rb") as handle:
        head = handle.read(4096)
    if len(head) >= 16 and _VERSION_RE.match(head[:8]):
        magic_le, = struct.unpack("<q", head[8:16])
        magic_be, = struct.unpack(">q", head[8:16])
        if DARSHAN_MAGIC in (magic_le, magic_be):
            order = "<" if magic_le == DARSHAN_MAGIC else ">"
            end = _regions_end(head, order)
            size = path.stat().st_size
            if end > size:
                raise DataError(f"{path}: truncated Darshan log ({size} bytes; its header "
                                f"maps data up to byte {end})")
            return head[:8].rstrip(b"\x00").decode()
    if looks_like_text_trace(head):
        raise DataError(f"{path}: a text DXT trace (darshan-dxt-parser output), not a binary "
                        "Darshan log; only 'iotune phases' and 'iotune estimate' read traces")
    raise DataError(f"{path}: not a Darshan log (no Darshan 3.x header: version string and "
                    "magic number)")


def _regions_end(head: bytes, order: str) -> int:
    """Where the last data region the header maps ends (0 if it maps none).

    The header holds ``(offset, length)`` pairs from byte 24: the name records, then one per
    module (unused ones are zero). Regions follow one another, so the pairs are read while
    each begins where the previous one ended; the first pair that does not is past the map.
    """
    end = 0
    for start in range(24, len(head) - 15, 16):
        offset, length = struct.unpack(order + "QQ", head[start:start + 16])
        if offset == 0 and length == 0:
            continue
        if end and offset != end:
            break
        end = offset + length
    return end


def read_log(path: str | os.PathLike[str], dxt: bool = True) -> DarshanLog:
    """Read the counters (and DXT traces unless ``dxt`` is false) of the log at ``path``."""
    log_path = Path(path)
    version = log_version(log_path)
    payload = _read_in_child(log_path, dxt)
    return DarshanLog(
        path=log_path,
        sha256=file_sha256(log_path),
        version=version,
        nprocs=int(payload["nprocs"]),
        run_time=float(payload["run_time"]),
        exe=str(payload["exe"]),
        lib_version=str(payload["lib_version"]),
        modules=tuple(payload["modules"]),
        counters=payload["counters"],
        names=payload["names"],
        dxt=payload["dxt"],
    )


def _read_in_child(path: Path, dxt: bool) -> dict[str, Any]:
    """Run :func:`_extract` in a forked child; its result, or DataError if it failed."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child process (its coverage is not collected)
        status = 0
        try:
            os.close(read_fd)
            quiet = os.open(os.devnull, os.O_WRONLY)
            os.dup2(quiet, 1)
            os.dup2(quiet, 2)
            try:
                data = pickle.dumps(("ok", _extract(path, dxt)), protocol=pickle.HIGHEST_PROTOCOL)
            except Exception as exc:  # the reader's message goes back to the parent
                data = pickle.dumps(("error", f"{type(exc).__name__}: {exc}"))
                status = 1
            with os.fdopen(write_fd, "wb") as out:
                out.write(data)
        finally:
            os._exit(status)
    os.close(write_fd)
    with os.fdopen(read_fd, "rb") as pipe:
        data = pipe.read()
    _, wait_status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(wait_status):
        raise DataError(f"{path}: damaged or truncated Darshan log (the Darshan reader "
                        f"crashed with signal {os.WTERMSIG(wait_status)})")
    try:
        kind, value = pickle.loads(data)
    except Exception:
        raise DataError(f"{path}: damaged or truncated Darshan log (the Darshan reader "
                        "stopped without a result)") from None
    if kind != "ok":
        raise DataError(f"{path}: the Darshan reader cannot decode this log ({value})")
    return dict(value)


def _extract(path: Path, dxt: bool) -> dict[str, Any]:  # pragma: no cover - runs in the child
    """Everything :class:`DarshanLog` holds, as plain picklable values (child process)."""
    import darshan
    import pandas as pd

    report = darshan.DarshanReport(str(path), read_all=False)
    job = report.metadata.get("job", {})
    modules = tuple(report.modules)
    counters: dict[str, pd.DataFrame] = {}
    for module in COUNTER_MODULES:
        if module not in modules:
            continue
        report.mod_read_all_records(module, warnings=False)
        counters[module] = _counter_frame(report.records[module])
    frames = []
    if dxt:
        for module in DXT_MODULES:
            if module in modules:
                report.mod_read_all_dxt_records(module, warnings=False)
                frames.append(_dxt_frame(module, report.records[module]))
    trace = (pd.concat(frames, ignore_index=True) if frames
             else pd.DataFrame(columns=list(DXT_COLUMNS)))
    return {
        "nprocs": job.get("nprocs", 0),
        "run_time": job.get("run_time", 0.0),
        "exe": report.metadata.get("exe", "") or "",
        "lib_version": (job.get("metadata") or {}).get("lib_ver", ""),
        "modules": modules,
        "counters": counters,
        "names": {int(k): str(v) for k, v in report.name_records.items()},
        "dxt": trace,
    }


def _counter_frame(records: Any) -> pd.DataFrame:  # pragma: no cover - runs in the child
    """One frame of a module's integer and float counters (``rank`` and ``id`` first)."""
    import pandas as pd

    empty = pd.DataFrame(columns=["rank", "id"])
    if not len(records):
        return empty
    tables = records.to_df()
    if isinstance(tables, dict) and "counters" in tables:
        ints, floats = tables["counters"], tables["fcounters"]
        if ints is None:
            return empty
        merged = pd.concat([ints.reset_index(drop=True),
                            floats.drop(columns=["rank", "id"]).reset_index(drop=True)], axis=1)
        merged["id"] = merged["id"].astype("uint64")
        merged["rank"] = merged["rank"].astype("int64")
        return merged
    return empty


def _dxt_frame(module: str, records: Any) -> pd.DataFrame:  # pragma: no cover - child
    """The traced operations of one DXT module as rows of :data:`DXT_COLUMNS` (child).

    Each pydarshan record holds its segments as lists of dicts; they are gathered column
    by column, which is much faster than one DataFrame per record.
    """
    import pandas as pd

    columns: dict[str, list[Any]] = {name: [] for name in DXT_COLUMNS}
    for i in range(len(records)):
        record = records[i]
        for op, key in (("write", "write_segments"), ("read", "read_segments")):
            segments = record[key]
            if segments is None or len(segments) == 0:
                continue
            n = len(segments)
            columns["module"] += [module] * n
            columns["file_id"] += [int(record["id"])] * n
            columns["rank"] += [int(record["rank"])] * n
            columns["op"] += [op] * n
            if isinstance(segments, pd.DataFrame):
                segments = segments.to_dict("records")
            columns["offset"] += [int(seg["offset"]) for seg in segments]
            columns["length"] += [int(seg["length"]) for seg in segments]
            columns["start"] += [float(seg["start_time"]) for seg in segments]
            columns["end"] += [float(seg["end_time"]) for seg in segments]
    frame = pd.DataFrame(columns)
    return frame.astype({"file_id": "uint64", "rank": "int64", "offset": "int64",
                         "length": "int64", "start": float, "end": float})
