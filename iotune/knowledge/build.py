"""``iotune knowledge build``: sources into one knowledge base, replaced atomically.

A build takes sources (replay CSVs with their sidecars, stores, production journals, and
folders of them, walked for ``*.csv`` with a sidecar and ``*.jsonl``), adds what the base
does not hold yet (:mod:`.csv_source`, :mod:`.jsonl_source` say how each is recognised),
and replaces the base:

1. under the base's lock (a lock file beside it, ``KB.lock``: the store's lock,
   :mod:`iotune.store.lock`), so two builds never race;
2. the base is copied to a temporary file in its directory (``.KB.<random>.tmp``) and
   the new runs are added to the copy;
3. the copy is checkpointed, closed, synced and renamed over the base. A reader that
   opened the old file keeps reading it (the rename leaves its inode alone); a reader
   opening after the rename sees the new one. A build that fails leaves the old base as
   it was and removes its copy.

The base's meta gets a new build id each time; :attr:`iotune.knowledge.priors.Priors.base`
names it.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from iotune.errors import DataError
from iotune.execution.outputs import fsync_path
from iotune.knowledge.csv_source import read_csv_source, sidecar_of
from iotune.knowledge.ingest import Added, Loader
from iotune.knowledge.jsonl_source import read_jsonl_source
from iotune.knowledge.schema import (
    FORMAT,
    VERSION,
    base_name,
    check_format,
    check_path,
    create_tables,
    looks_like_duckdb,
    open_base,
)
from iotune.store import now_iso
from iotune.store.lock import JournalLock

if TYPE_CHECKING:
    import duckdb

#: Seconds after which another host's lock on a base counts as abandoned. A build holds
#: the lock for as long as it reads (minutes for 10^7 runs), so it is far longer than a
#: store append's; a build on this host whose process is gone is broken at once.
LOCK_STALE_S = 6 * 3600.0
#: Seconds a build waits for another build of the same base to finish.
LOCK_WAIT_S = 3600.0
#: Memory DuckDB may use while a build writes (the build's budget is 2 GB in all).
BUILD_MEMORY = "1GB"


@dataclass(frozen=True)
class Source:
    """One file to read: ``kind`` ``csv`` or ``jsonl``."""

    kind: str
    path: Path


@dataclass
class BuildReport:
    """What a build did, for its summary line."""

    base: str
    read: int = 0
    already: int = 0
    added: Added = field(default_factory=Added)
    skipped: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unpaired_csv: int = 0

    def lines(self) -> list[str]:
        runs = sum(self.added.runs.values())
        by = ", ".join(f"{n} {p}" for p, n in sorted(self.added.runs.items())) or "none"
        out = [f"knowledge {self.base}: {self.read} source(s) read, {self.already} already in; "
               f"{runs} run(s) added ({by}); {self.added.workloads} new workload(s), "
               f"{self.added.configurations} new configuration(s)"]
        if self.unpaired_csv:
            out.append(f"  {self.unpaired_csv} CSV file(s) in the folders have no "
                       ".workload.yaml sidecar and were not read")
        for why, count in sorted(self.skipped.items()):
            out.append(f"  left out {count} record(s): {why}")
        out += [f"  {note}" for note in self.notes]
        return out


def collect_sources(given: Sequence[str | os.PathLike[str]]) -> tuple[list[Source], int]:
    """The files of the ``SOURCE`` arguments: a ``.csv`` file (its sidecar must be beside
    it), a ``.jsonl`` file, or a folder walked for both (regular files only, links not
    followed; CSV files without a sidecar are counted, not read). DataError naming the
    argument for a missing path or a file of another kind."""
    out: list[Source] = []
    unpaired = 0
    for raw in given:
        path = Path(raw)
        if path.is_dir():
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.endswith(".cache"))
                for name in sorted(files):
                    file = Path(folder) / name
                    if not file.is_file() or file.is_symlink():
                        continue  # only regular files: a named pipe is never opened
                    if name.endswith(".csv"):
                        if sidecar_of(file).is_file():
                            out.append(Source("csv", file))
                        else:
                            unpaired += 1
                    elif name.endswith(".jsonl"):
                        out.append(Source("jsonl", file))
            continue
        if not path.exists():
            raise DataError(f"SOURCE: {path} does not exist")
        if not path.is_file():
            raise DataError(f"SOURCE: {path} is not a regular file or a folder")
        if path.suffix == ".csv":
            if not sidecar_of(path).is_file():
                raise DataError(f"SOURCE: {path} has no workload sidecar "
                                f"{sidecar_of(path).name} beside it (docs/knowledge.md)")
            out.append(Source("csv", path))
        elif path.suffix == ".jsonl":
            out.append(Source("jsonl", path))
        else:
            raise DataError(f"SOURCE: {path} is not a .csv landscape, a .jsonl store or "
                            "journal, or a folder of them")
    unique = list({s.path.resolve(): s for s in out}.values())
    return unique, unpaired


def check_output(out: Path) -> bool:
    """Whether ``out`` exists (as a knowledge base); DataError when its directory is
    missing, or it is a directory or a file that is not a knowledge base (never
    replaced)."""
    if not out.parent.is_dir():
        raise DataError(f"-o: directory {out.parent} does not exist")
    if not out.exists() and not out.is_symlink():
        return False
    check_path(out)
    if not looks_like_duckdb(out):
        raise DataError(f"-o: {out} exists and is not a knowledge base; it is not replaced")
    with open_base(out):
        pass
    return True


def build(given: Sequence[str | os.PathLike[str]], out: str | os.PathLike[str], *,
          labels: bool = False, note: Callable[[str], None] = lambda _: None) -> BuildReport:
    """Add the runs of the sources ``given`` to the knowledge base ``out`` (made when
    missing), as the module docstring says. ``labels``: keep each source's file name as
    its ``label`` (otherwise no name or path is kept). ``note`` hears progress lines."""
    import duckdb

    target = Path(out)
    sources, unpaired = collect_sources(given)
    check_output(target)
    lock = JournalLock(target, stale_after_s=LOCK_STALE_S, wait_s=LOCK_WAIT_S)
    with lock.held():
        exists = check_output(target)  # again: another build may have made it meanwhile
        temp = target.with_name(f".{target.name}.{uuid.uuid4().hex[:12]}.tmp")
        try:
            if exists:
                shutil.copyfile(target, temp)
            build_id = uuid.uuid4().hex[:12]
            con = duckdb.connect(str(temp), config={"memory_limit": BUILD_MEMORY})
            try:
                con.execute("SET enable_progress_bar = false")
                if not exists:
                    create_tables(con)
                    con.executemany("INSERT INTO meta VALUES (?, ?)",
                                    [("format", FORMAT), ("version", VERSION),
                                     ("created_at", now_iso())])
                else:
                    check_format(con, target)
                report = _read_all(con, sources, build_id, labels, note)
                report.unpaired_csv = unpaired
                con.execute("DELETE FROM meta WHERE key IN ('build_id', 'built_at')")
                con.executemany("INSERT INTO meta VALUES (?, ?)",
                                [("build_id", build_id), ("built_at", now_iso())])
                con.execute("CHECKPOINT")
            finally:
                con.close()
            fsync_path(temp)
            os.replace(temp, target)
            fsync_path(target.parent)
        except BaseException:
            temp.unlink(missing_ok=True)
            Path(str(temp) + ".wal").unlink(missing_ok=True)
            raise
    report.base = base_name(target, {"build_id": build_id})
    return report


def _read_all(con: duckdb.DuckDBPyConnection, sources: Iterable[Source], build_id: str,
              labels: bool, note: Callable[[str], None]) -> BuildReport:
    loader = Loader(con, build_id)
    known = {str(r[0]) for r in con.execute(
        "SELECT content_sha256 FROM sources WHERE kind = 'csv'").fetchall()}
    report = BuildReport(base="")
    for number, source in enumerate(sources, 1):
        label = source.path.name if labels else None
        if source.kind == "csv":
            runs = read_csv_source(loader, source.path, label=label, known=known)
            if runs is None:
                report.already += 1
            else:
                report.read += 1
        else:
            found = read_jsonl_source(loader, source.path, label=label,
                                      note=report.notes.append)
            if found.already:
                report.already += 1
            else:
                report.read += 1
            for why, count in found.skipped.items():
                report.skipped[why] = report.skipped.get(why, 0) + count
        if number % 1000 == 0:
            note(f"knowledge: {number} sources looked at")
    loader.flush()
    report.added = loader.added
    return report

