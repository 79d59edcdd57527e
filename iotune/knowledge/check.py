"""``iotune knowledge check``: is this file a sound knowledge base of this format?

Opening it checks the format (:func:`iotune.knowledge.schema.check_format`: tables as
base tables, columns and their types, format name and version); then every rule below is
one SQL count, and each that fails is one problem line:

- no NULL where the format allows none;
- ``meta`` has exactly one of each of ``format``, ``version``, ``build_id``,
  ``built_at``;
- ids and keys unique (sources' ids, workloads' ids and keys, configurations' ids and
  keys); every run's source, workload and configuration exists;
- run times finite and positive; provenances and source kinds among the known words;
- each source's ``runs`` equals its rows in ``runs``;
- settings are JSON objects, ``is_default`` exactly when they are empty, and the key is
  the settings' key; descriptor fields within their words and positive.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from iotune.knowledge.descriptor import LAYERS, OPERATIONS, PATTERNS
from iotune.knowledge.ingest import NO_RUNS
from iotune.knowledge.schema import (
    PROVENANCES,
    SOURCE_KINDS,
    TABLES,
    base_name,
    check_format,
    open_base,
)


def _words(values: tuple[str, ...]) -> str:
    return "(" + ", ".join(f"'{v}'" for v in values) + ")"


#: Each rule: what a failure says, and SQL counting the rows that break it.
RULES: tuple[tuple[str, str], ...] = (
    *((f"{table}.{column} is NULL", f"SELECT count(*) FROM {table} WHERE {column} IS NULL")
      for table, columns in TABLES.items() for column, _, null in columns if not null),
    *((f"meta has not exactly one '{key}'",
       f"SELECT CASE WHEN count(*) = 1 THEN 0 ELSE 1 END FROM meta WHERE key = '{key}'")
      for key in ("format", "version", "build_id", "built_at")),
    ("repeated sources.source_id with different kinds or hashes",
     "SELECT count(*) FROM (SELECT source_id FROM sources GROUP BY source_id "
     "HAVING count(*) > 1)"),
    ("repeated workloads.workload_id or workload_key",
     "SELECT (SELECT count(*) - count(DISTINCT workload_id) FROM workloads) + "
     "(SELECT count(*) - count(DISTINCT workload_key) FROM workloads)"),
    ("repeated configurations.config_id or config_key",
     "SELECT (SELECT count(*) - count(DISTINCT config_id) FROM configurations) + "
     "(SELECT count(*) - count(DISTINCT config_key) FROM configurations)"),
    ("runs of a source not in sources",
     "SELECT count(*) FROM runs r ANTI JOIN sources s USING (source_id)"),
    ("runs of a workload not in workloads",
     "SELECT count(*) FROM runs r ANTI JOIN workloads w USING (workload_id)"),
    ("runs of a configuration not in configurations",
     "SELECT count(*) FROM runs r ANTI JOIN configurations c USING (config_id)"),
    ("runs whose time_s is not a finite positive number of seconds",
     "SELECT count(*) FROM runs WHERE NOT (isfinite(time_s) AND time_s > 0)"),
    (f"runs whose provenance is not one of {', '.join(PROVENANCES)}",
     f"SELECT count(*) FROM runs WHERE provenance NOT IN {_words(PROVENANCES)}"),
    ("sources whose provenance is not a known word",
     f"SELECT count(*) FROM sources WHERE provenance NOT IN "
     f"{_words((*PROVENANCES, NO_RUNS))}"),
    (f"sources whose kind is not one of {', '.join(SOURCE_KINDS)}",
     f"SELECT count(*) FROM sources WHERE kind NOT IN {_words(SOURCE_KINDS)}"),
    ("sources whose runs count differs from their rows in runs",
     "SELECT count(*) FROM sources s LEFT JOIN (SELECT source_id, count(*) AS n FROM runs "
     "GROUP BY source_id) r USING (source_id) WHERE s.runs <> coalesce(r.n, 0)"),
    ("configurations whose settings are not a JSON object",
     "SELECT count(*) FROM configurations WHERE NOT coalesce(json_valid(settings) AND "
     "json_type(settings) = 'OBJECT', false)"),
    ("configurations marked default whose settings are not empty, or the other way",
     "SELECT count(*) FROM configurations WHERE is_default <> (settings = '{}')"),
    ("configurations whose config_key is not their settings' key",
     "SELECT count(*) FROM configurations WHERE config_key <> left(sha256(settings), 16)"),
    (f"workloads whose operation is not one of {', '.join(OPERATIONS)}",
     f"SELECT count(*) FROM workloads WHERE operation NOT IN {_words(OPERATIONS)}"),
    (f"workloads whose layer is not one of {', '.join(LAYERS)}",
     f"SELECT count(*) FROM workloads WHERE layer NOT IN {_words(LAYERS)}"),
    (f"workloads whose pattern is not one of {', '.join(PATTERNS)}",
     f"SELECT count(*) FROM workloads WHERE pattern NOT IN {_words(PATTERNS)}"),
    ("workloads with a count or size that is not positive",
     "SELECT count(*) FROM workloads WHERE ranks <= 0 OR ranks_per_node <= 0 OR files <= 0 "
     "OR datasets <= 0 OR bytes_per_rank <= 0 OR bytes_per_rank_per_dataset <= 0 "
     "OR request_bytes <= 0"),
)


def check_base(path: str | os.PathLike[str]) -> tuple[str, list[str]]:
    """The ``ok:`` line of the base at ``path``, and one line per broken rule (empty when
    sound). DataError when it cannot be opened as a knowledge base of this format."""
    problems = []
    with open_base(path) as con:
        meta = check_format(con, Path(path))
        for what, sql in RULES:
            found = _count(con, sql)
            if found:
                problems.append(f"{Path(path).name}: {what} ({found} row(s))")
        runs, workloads, configs, sources = (
            _count(con, f"SELECT count(*) FROM {t}")
            for t in ("runs", "workloads", "configurations", "sources"))
    ok = (f"ok: {base_name(path, meta)}: format {meta.get('format')} {meta.get('version')}, "
          f"{runs} runs, {workloads} workloads, {configs} configurations, {sources} source "
          "rows")
    return ok, problems


def _count(con: Any, sql: str) -> int:
    row = con.execute(sql).fetchone()
    return int(row[0]) if row and row[0] is not None else 0
