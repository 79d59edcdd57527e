"""A knowledge base's file: a DuckDB database of five tables, and how it is opened.

Why DuckDB: it is embedded (no server), keeps one file, stores columns compressed, and
aggregates 10^7 rows in SQL in a fraction of a second; any number of processes may read
one file at once (read-only connections), and a build replaces the file atomically
(:mod:`iotune.knowledge.build`).

The tables (:data:`TABLES`; ``docs/knowledge.md`` has every column):

- ``meta``: ``key``/``value`` pairs: the format's name and version, the build id, when
  it was built;
- ``sources``: one row per source read (and per provenance within it): its kind (``csv``,
  ``store``, ``journal``), content hash, provenance, how many runs it gave, when it was
  added; a ``label`` only when the builder asked for one (never a path otherwise);
- ``workloads``: one row per (system, workload descriptor, measure);
- ``configurations``: one row per configuration: its settings as canonical JSON and
  their key; the default is the one with no setting (``is_default``);
- ``runs``: one row per run: source, workload, configuration, provenance, seconds.

Opening: :func:`open_base` opens read-only, with DuckDB's access to other files, network
and extensions turned off, and refuses, in one line (DataError), a missing file, a
directory, a file that is not a DuckDB database (text, SQLite, random or truncated bytes),
a DuckDB database that is not a knowledge base of this format, and one whose tables are
views (which could read other files). A knowledge base is data only: nothing in it runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from iotune.errors import DataError
from iotune.inputs import regular_file

if TYPE_CHECKING:
    import duckdb

#: The format's name, in ``meta`` under ``format``.
FORMAT = "iotune-knowledge"
#: The format's version, in ``meta`` under ``version``: a reader refuses another.
VERSION = "1"
#: The provenances a run may have: measured on a real system, replayed from recorded
#: runs by the replay backend, or simulated.
PROVENANCES = ("measured", "replayed", "simulated")
#: The kinds of source a build reads.
SOURCE_KINDS = ("csv", "store", "journal")
#: Memory DuckDB may use while a query or a check runs; above it DuckDB spills to disk
#: or fails with a message (the query's budget is 300 MB of added memory).
QUERY_MEMORY = "200MB"

#: Each table's columns: name, SQL type, whether NULL is allowed.
TABLES: dict[str, tuple[tuple[str, str, bool], ...]] = {
    "meta": (("key", "VARCHAR", False), ("value", "VARCHAR", False)),
    "sources": (
        ("source_id", "INTEGER", False), ("kind", "VARCHAR", False),
        ("content_sha256", "VARCHAR", False), ("head_sha256", "VARCHAR", True),
        ("bytes", "BIGINT", False), ("provenance", "VARCHAR", False),
        ("runs", "BIGINT", False), ("added_at", "VARCHAR", False),
        ("build_id", "VARCHAR", False), ("label", "VARCHAR", True)),
    "workloads": (
        ("workload_id", "INTEGER", False), ("workload_key", "VARCHAR", False),
        ("system", "VARCHAR", False), ("file_system", "VARCHAR", True),
        ("mpi", "VARCHAR", True), ("measure", "VARCHAR", False),
        ("operation", "VARCHAR", True), ("layer", "VARCHAR", True),
        ("ranks", "BIGINT", True), ("ranks_per_node", "BIGINT", True),
        ("files", "BIGINT", True), ("datasets", "BIGINT", True),
        ("bytes_per_rank", "BIGINT", True), ("bytes_per_rank_per_dataset", "BIGINT", True),
        ("pattern", "VARCHAR", True), ("collective", "BOOLEAN", True),
        ("request_bytes", "BIGINT", True)),
    "configurations": (
        ("config_id", "INTEGER", False), ("config_key", "VARCHAR", False),
        ("settings", "VARCHAR", False), ("is_default", "BOOLEAN", False)),
    "runs": (
        ("source_id", "INTEGER", False), ("workload_id", "INTEGER", False),
        ("config_id", "INTEGER", False), ("provenance", "VARCHAR", False),
        ("time_s", "DOUBLE", False)),
}

#: The descriptor's columns of ``workloads``, in order (the fields of
#: :class:`~iotune.knowledge.descriptor.WorkloadDescriptor`).
DESCRIPTOR_COLUMNS = ("operation", "layer", "ranks", "ranks_per_node", "files", "datasets",
                      "bytes_per_rank", "bytes_per_rank_per_dataset", "pattern", "collective",
                      "request_bytes")


def create_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Create the tables of an empty knowledge base (the ``meta`` rows are the build's)."""
    for table, columns in TABLES.items():
        spec = ", ".join(f"{name} {kind}{'' if null else ' NOT NULL'}"
                         for name, kind, null in columns)
        con.execute(f"CREATE TABLE {table} ({spec})")


#: DuckDB's settings for reading a base: no other file, no network, no extension.
_SAFE_CONFIG: dict[str, str | bool | int] = {
    "enable_external_access": False, "autoinstall_known_extensions": False,
    "autoload_known_extensions": False, "memory_limit": QUERY_MEMORY, "threads": 2}


def check_path(path: str | os.PathLike[str]) -> Path:
    """``path`` when it is a regular file; DataError naming it otherwise (missing, a
    directory, a pipe or device: refused before DuckDB opens it)."""
    return regular_file(path, "knowledge base", DataError)


#: The bytes a DuckDB database file carries at offset 8 (its magic).
_DUCKDB_MAGIC = b"DUCK"


def looks_like_duckdb(path: Path) -> bool:
    """Whether ``path`` starts as a DuckDB database file does."""
    try:
        with path.open("rb") as handle:
            head = handle.read(12)
    except OSError:
        return False
    return head[8:12] == _DUCKDB_MAGIC


@contextmanager
def open_base(path: str | os.PathLike[str]) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection to the knowledge base ``path``, checked to be one of this
    format (:func:`check_format`); closed after the block. DataError (one line) for
    anything else (see the module docstring), also for a DuckDB error inside the block
    (a damaged file found while reading)."""
    import duckdb

    p = check_path(path)
    if not looks_like_duckdb(p):
        raise DataError(f"{p}: not a knowledge base (not a DuckDB database file)")
    try:
        con = duckdb.connect(str(p), read_only=True, config=dict(_SAFE_CONFIG))
    except duckdb.Error as exc:
        raise DataError(f"{p}: cannot open as a knowledge base: {_first_line(exc)}") from None
    try:
        con.execute("SET enable_progress_bar = false")  # a long query draws nothing
        check_format(con, p)
        yield con
    except duckdb.Error as exc:
        raise DataError(f"{p}: damaged knowledge base: {_first_line(exc)}") from None
    finally:
        con.close()


def check_format(con: duckdb.DuckDBPyConnection, p: Path) -> dict[str, str]:
    """The ``meta`` pairs of the base behind ``con``; DataError unless it has the tables of
    :data:`TABLES` as base tables (not views) with their columns, and ``meta`` names this
    format and version."""
    kinds = dict(con.execute(
        "SELECT table_name, table_type FROM information_schema.tables "
        "WHERE table_schema = 'main'").fetchall())
    if "meta" not in kinds:
        raise DataError(f"{p}: not a knowledge base (a DuckDB database without its meta "
                        "table)")
    found: dict[str, dict[str, str]] = {}
    for table, name, kind in con.execute(
            "SELECT table_name, column_name, data_type FROM information_schema.columns "
            "WHERE table_schema = 'main'").fetchall():
        found.setdefault(table, {})[name] = kind
    for table, columns in TABLES.items():
        if kinds.get(table) != "BASE TABLE":
            what = "missing" if table not in kinds else f"a {kinds[table].lower()}"
            raise DataError(f"{p}: not a knowledge base of format {FORMAT} {VERSION}: table "
                            f"{table} is {what}")
        have = found.get(table, {})
        for name, kind, _ in columns:
            if have.get(name) != kind:
                raise DataError(f"{p}: not a knowledge base of format {FORMAT} {VERSION}: "
                                f"column {table}.{name} is "
                                f"{have.get(name, 'missing')}, not {kind}")
    meta = {str(k): str(v) for k, v in con.execute("SELECT key, value FROM meta").fetchall()}
    if meta.get("format") != FORMAT:
        raise DataError(f"{p}: not a knowledge base (meta format {meta.get('format')!r}, "
                        f"not {FORMAT!r})")
    if meta.get("version") != VERSION:
        raise DataError(f"{p}: knowledge base format version {meta.get('version')!r}; this "
                        f"iotune reads version {VERSION} (rebuild it with 'iotune knowledge "
                        "build')")
    return meta


def base_name(path: str | os.PathLike[str], meta: dict[str, str]) -> str:
    """How output names a base: its file name and short build id, never its path."""
    return f"{Path(path).name}@{meta.get('build_id', '?')[:8]}"


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def query_rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None
               ) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` on ``con`` (a small result: summaries, not runs)."""
    return con.execute(sql, params or []).fetchall()
