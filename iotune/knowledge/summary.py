"""What ``iotune knowledge show`` prints of a base: systems, workloads, sources, and what
wins where. Every figure is an SQL aggregate; no run is loaded into this process.

*What wins where*: per system and workload class (operation and layer), each
configuration's wins over the class's workloads by the query's rule
(:data:`iotune.knowledge.query.WIN_SPEEDUP`: the fastest median and at least 10% faster
than the default's), and its median speedup over the workloads where it and the default
were both measured; the configuration with the most wins (then the highest median
speedup) is shown. Measured runs only, as the query uses by default.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iotune.knowledge.query import WIN_SPEEDUP
from iotune.knowledge.schema import base_name, check_format, open_base


@dataclass(frozen=True)
class Table:
    """One titled table of a summary."""

    title: str
    rows: list[dict[str, Any]]


def summarise(path: str | os.PathLike[str], system: str | None = None
              ) -> tuple[str, list[Table]]:
    """The heading line and the tables of the base at ``path`` (of ``system`` only when
    given). DataError when it is not a knowledge base."""
    with open_base(path) as con:
        meta = check_format(con, Path(path))
        where, values = ("WHERE w.system = ?", [system]) if system else ("", [])
        totals = con.execute(
            f"SELECT count(*), count(DISTINCT r.workload_id) FROM runs r "
            f"JOIN workloads w USING (workload_id) {where}", values).fetchone() or (0, 0)
        heading = (f"knowledge {base_name(path, meta)}: built {meta.get('built_at', '?')}, "
                   f"{totals[0]} runs of {totals[1]} workloads"
                   + (f" on {system}" if system else ""))
        tables = [
            Table("Systems", _rows(con,
                  "SELECT w.system, w.file_system, w.mpi, count(DISTINCT w.workload_id) AS "
                  "workloads, count(*) FILTER (WHERE r.provenance = 'measured') AS measured, "
                  "count(*) FILTER (WHERE r.provenance = 'replayed') AS replayed, "
                  "count(*) FILTER (WHERE r.provenance = 'simulated') AS simulated "
                  f"FROM runs r JOIN workloads w USING (workload_id) {where} "
                  "GROUP BY ALL ORDER BY ALL", values)),
            Table("Workloads", _rows(con,
                  "SELECT w.system, w.operation, w.layer, w.measure, "
                  "count(DISTINCT w.workload_id) AS workloads, count(*) AS runs, "
                  "count(DISTINCT r.config_id) AS configurations "
                  f"FROM runs r JOIN workloads w USING (workload_id) {where} "
                  "GROUP BY ALL ORDER BY ALL", values)),
            Table("Sources", _rows(con,
                  "SELECT s.kind, s.provenance, count(DISTINCT s.content_sha256) AS sources, "
                  "sum(s.runs) AS runs FROM sources s "
                  + ("WHERE s.source_id IN (SELECT r.source_id FROM runs r JOIN workloads w "
                     "USING (workload_id) WHERE w.system = ?) " if system else "")
                  + "GROUP BY ALL ORDER BY ALL", values)),
            Table("What wins where (measured runs)", _winners(con, where, values)),
        ]
    return heading, tables


def _rows(con: Any, sql: str, values: list[Any]) -> list[dict[str, Any]]:
    cursor = con.execute(sql, values)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def _winners(con: Any, where: str, values: list[Any]) -> list[dict[str, Any]]:
    rows = _rows(con,
        "WITH g AS (SELECT r.workload_id, r.config_id, median(r.time_s) AS med FROM runs r "
        f"  JOIN workloads w USING (workload_id) {where} "
        f"  {'AND' if where else 'WHERE'} r.provenance = 'measured' GROUP BY ALL), "
        "d AS (SELECT g.workload_id, g.med AS dmed FROM g JOIN configurations c "
        "  USING (config_id) WHERE c.is_default), "
        "best AS (SELECT workload_id, min(med) AS bmed FROM g GROUP BY workload_id), "
        "s AS (SELECT w.system, w.file_system, w.operation, w.layer, g.config_id, "
        "  d.dmed / g.med AS speedup, (g.med <= best.bmed AND d.dmed / g.med >= ?) AS won "
        "  FROM g JOIN d USING (workload_id) JOIN best USING (workload_id) "
        "  JOIN workloads w USING (workload_id) JOIN configurations c USING (config_id) "
        "  WHERE NOT c.is_default), "
        "t AS (SELECT system, file_system, operation, layer, config_id, "
        "  sum(won::INTEGER) AS wins, count(*) AS workloads, median(speedup) AS speedup "
        "  FROM s GROUP BY ALL), "
        "ranked AS (SELECT *, row_number() OVER (PARTITION BY system, file_system, "
        "  operation, layer ORDER BY wins DESC, speedup DESC, config_id) AS place FROM t) "
        "SELECT system, file_system, operation, layer, c.settings AS best, wins, workloads, "
        "  speedup FROM ranked JOIN configurations c USING (config_id) WHERE place = 1 "
        "ORDER BY system, file_system, operation, layer",
        [*values, WIN_SPEEDUP])
    for row in rows:
        settings = json.loads(row["best"])
        row["best"] = (" ".join(f"{k}={v}" for k, v in settings.items())
                       if row["wins"] else "(default: nothing won)")
        row["speedup"] = f"{row['speedup']:.2f}x"
    return rows
