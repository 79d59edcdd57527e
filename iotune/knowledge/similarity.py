"""When two workloads are similar enough for one's measurements to guide the other's tune.

Two workloads of the same system (same name and file system; :mod:`iotune.knowledge.query`
never looks at another system) are *similar* when every field both descriptors know agrees:

- ``operation``, ``layer``, ``pattern`` and ``collective``: equal;
- ``files``: both one shared file, or both several (file per process);
- ``ranks``, ``bytes_per_rank``, ``bytes_per_rank_per_dataset`` and ``request_bytes``:
  within a factor of :data:`SIZE_FACTOR` of each other (:data:`RATIO_FIELDS`).

A field either side does not know is not compared; ``ranks_per_node``, ``datasets`` and the
MPI library are not compared (they are kept and shown). The rule is written twice, once as
SQL for the query (:func:`where_similar`) and once in Python (:func:`similar`), and the
tests hold the two to the same answers.
"""

from __future__ import annotations

import math
from typing import Any

from iotune.knowledge.descriptor import WorkloadDescriptor

#: Largest ratio between two workloads' sizes and scales for them to be similar. Within a
#: factor of 4 (two doublings either way), the settings that win (how many stripes, how
#: many aggregators, how large an alignment) are the ones that win at the other size in
#: the production landscapes; a 16x larger write per rank is another workload.
SIZE_FACTOR = 4.0
#: The fields compared by ratio (see :data:`SIZE_FACTOR`).
RATIO_FIELDS = ("ranks", "bytes_per_rank", "bytes_per_rank_per_dataset", "request_bytes")
#: The fields compared for equality.
EQUAL_FIELDS = ("operation", "layer", "pattern", "collective")


def similar(a: WorkloadDescriptor, b: WorkloadDescriptor) -> bool:
    """Whether ``a`` and ``b`` are similar (see the module docstring)."""
    for name in EQUAL_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if x is not None and y is not None and x != y:
            return False
    if a.files is not None and b.files is not None and (a.files > 1) != (b.files > 1):
        return False
    for name in RATIO_FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        if x is not None and y is not None and abs(math.log(x / y)) > math.log(SIZE_FACTOR):
            return False
    return True


def where_similar(workload: WorkloadDescriptor, table: str = "w") -> tuple[str, list[Any]]:
    """An SQL condition on the rows of the workloads table ``table`` that holds for those
    similar to ``workload``, and its parameters (in order). Only the fields ``workload``
    knows give a condition; a row's NULL field matches."""
    parts: list[str] = []
    values: list[Any] = []
    for name in EQUAL_FIELDS:
        value = getattr(workload, name)
        if value is not None:
            parts.append(f"({table}.{name} IS NULL OR {table}.{name} = ?)")
            values.append(value)
    if workload.files is not None:
        parts.append(f"({table}.files IS NULL OR ({table}.files > 1) = ?)")
        values.append(workload.files > 1)
    for name in RATIO_FIELDS:
        value = getattr(workload, name)
        if value is not None:
            parts.append(f"({table}.{name} IS NULL OR abs(ln({table}.{name} / ?)) <= ?)")
            # a hair of slack so that exactly a factor of SIZE_FACTOR is in, as in Python
            values += [float(value), math.log(SIZE_FACTOR) + 1e-12]
    return (" AND ".join(parts) or "TRUE"), values
