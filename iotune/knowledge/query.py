"""What a knowledge base knows for one tune: :func:`priors_for`.

The query opens the base read-only (:func:`iotune.knowledge.schema.open_base`), keeps the
workloads of the same system (name, and file system where both are known: knowledge of
another system changes nothing) that are similar to the one being tuned
(:mod:`iotune.knowledge.similarity`), and of their runs only those of the provenances
asked for (``measured`` unless told otherwise). From them, in SQL (the runs are never
loaded into this process):

- the noise: the pooled standard deviation of log times around each (workload,
  configuration)'s own mean, over the groups with at least two runs, with its degrees of
  freedom (runs less groups);
- the candidates: per similar workload, each configuration's median time and the
  default's; a configuration *wins* a workload when its median is the workload's fastest
  and at least :data:`WIN_SPEEDUP` times faster than the default's. Candidates are the
  configurations that won at least one similar workload and whose median speedup over the
  workloads where both it and the default were measured is at least 1, ordered by wins,
  then median speedup, then settings (so equal bases give equal answers).
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from iotune.errors import DataError
from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor
from iotune.knowledge.priors import KnownCandidate, KnownNoise, Priors
from iotune.knowledge.schema import PROVENANCES, base_name, check_format, open_base
from iotune.knowledge.similarity import where_similar

#: A configuration wins a workload when it is the fastest there and the default's median
#: time is at least this many times its own (10% faster, the race's rule for a change
#: worth making).
WIN_SPEEDUP = 1.10
#: The provenances a query uses unless asked for others: real measurements only.
DEFAULT_PROVENANCES = ("measured",)


def priors_for(path: str | os.PathLike[str], system: SystemKey, workload: WorkloadDescriptor,
               *, limit: int = 3, provenance: Sequence[str] = DEFAULT_PROVENANCES) -> Priors:
    """What the knowledge base at ``path`` knows for ``workload`` on ``system``: the noise
    and at most ``limit`` candidates (see the module docstring), from runs of the given
    ``provenance`` only. Empty priors (``similar_workloads`` 0) when nothing similar was
    measured on that system. DataError (one line) when ``path`` is not a knowledge base
    of this format or is damaged."""
    if limit < 0:
        raise ValueError(f"limit {limit} is negative")
    chosen = tuple(dict.fromkeys(provenance))
    unknown = [p for p in chosen if p not in PROVENANCES]
    if unknown or not chosen:
        raise DataError(f"provenance: {', '.join(unknown) or 'none given'}: choose among "
                        f"{', '.join(PROVENANCES)}")
    with open_base(path) as con:
        name = base_name(path, check_format(con, _path(path)))
        con.execute("SET preserve_insertion_order = false")
        condition, values = where_similar(workload)
        system_values: list[Any] = [system.name]
        fs_condition = ""
        if system.file_system is not None:
            fs_condition = "AND (w.file_system IS NULL OR w.file_system = ?)"
            system_values.append(system.file_system.lower())
        marks = ", ".join("?" for _ in chosen)
        con.execute(
            "CREATE TEMP TABLE g AS "
            "WITH sim AS (SELECT w.workload_id FROM workloads w "
            f"WHERE w.system = ? {fs_condition} AND {condition}) "
            "SELECT r.workload_id, r.config_id, count(*) AS n, median(r.time_s) AS med, "
            "var_samp(ln(r.time_s)) AS v FROM runs r JOIN sim USING (workload_id) "
            f"WHERE r.provenance IN ({marks}) GROUP BY r.workload_id, r.config_id",
            [*system_values, *values, *chosen])
        similar = con.execute("SELECT count(DISTINCT workload_id) FROM g").fetchone()
        count = int(similar[0]) if similar else 0
        if count == 0:
            return Priors(base=name, system=system.text(), similar_workloads=0)
        noise = _noise(con, system)
        candidates = _candidates(con, limit) if limit else ()
    return Priors(base=name, system=system.text(), similar_workloads=count, noise=noise,
                  candidates=candidates)


def _path(path: str | os.PathLike[str]) -> Any:
    from pathlib import Path

    return Path(path)


def _noise(con: Any, system: SystemKey) -> KnownNoise | None:
    """The pooled noise of the groups in ``g`` with two runs or more; None without any."""
    row = con.execute("SELECT sum(n), sum((n - 1) * v), sum(n - 1) FROM g "
                      "WHERE n >= 2 AND v IS NOT NULL").fetchone()
    if row is None or not row[2]:
        return None
    runs, squares, freedom = int(row[0]), float(row[1]), int(row[2])
    return KnownNoise(sigma=(squares / freedom) ** 0.5, degrees_of_freedom=freedom, runs=runs,
                      where=system.text())


def _candidates(con: Any, limit: int) -> tuple[KnownCandidate, ...]:
    """The candidates of the groups in ``g`` (see the module docstring)."""
    rows = con.execute(
        "WITH d AS (SELECT g.workload_id, g.med AS dmed FROM g "
        "  JOIN configurations c USING (config_id) WHERE c.is_default), "
        "best AS (SELECT workload_id, min(med) AS bmed FROM g GROUP BY workload_id), "
        "s AS (SELECT g.config_id, d.dmed / g.med AS speedup, "
        "  (g.med <= best.bmed AND d.dmed / g.med >= ?) AS won FROM g "
        "  JOIN d USING (workload_id) JOIN best USING (workload_id) "
        "  JOIN configurations c USING (config_id) WHERE NOT c.is_default) "
        "SELECT c.settings, sum(won::INTEGER) AS wins, count(*) AS workloads, "
        "  median(speedup) AS ms FROM s JOIN configurations c USING (config_id) "
        "GROUP BY c.settings HAVING sum(won::INTEGER) >= 1 AND median(speedup) >= 1 "
        "ORDER BY wins DESC, ms DESC, c.settings LIMIT ?",
        [WIN_SPEEDUP, limit]).fetchall()
    return tuple(KnownCandidate(settings=json.loads(settings), wins=int(wins),
                                workloads=int(workloads), median_speedup=float(speedup))
                 for settings, wins, workloads, speedup in rows)
