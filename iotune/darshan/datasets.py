"""Records per HDF5 dataset, as the paper keeps them, with their own signatures and classes.

Darshan's H5D module keeps one record per dataset (``file:/dataset``; rank -1 when every
rank opened it, else one record per rank). The file signature
(:mod:`iotune.darshan.signature`) merges a file's datasets into it; here each dataset is a
record of its own: its records merged across ranks (:func:`~iotune.darshan.records.
merge_counters`) and its signature built from its H5D counters alone
(:data:`DATASET_FEATURES`). Datasets then fall into classes of similar signature by the
same rule as files (:func:`~iotune.darshan.classes.group_similar`), so an application
writing one dataset per variable and step shows how many kinds of datasets it has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotune.darshan.classes import DEFAULT_THRESHOLD, group_similar
from iotune.darshan.logfile import DarshanLog
from iotune.darshan.records import merge_counters
from iotune.darshan.signature import BIN_NAMES, histogram, log2p, share


def _features() -> tuple[tuple[str, str], ...]:
    rows = [("write_share", "bytes written / bytes moved (H5D_BYTES_*)"),
            ("read_share", "bytes read / bytes moved")]
    for op in ("write", "read"):
        rows += [(f"h5d_{op}_{b}", f"share of H5D {op}s in the {b} byte bin "
                                   f"(H5D_SIZE_{op.upper()}_AGG_*)") for b in BIN_NAMES]
    rows += [
        ("shared", "1 if more than one rank accessed the dataset"),
        ("collective", "1 if its transfers were collective (H5D_USE_MPIIO_COLLECTIVE)"),
        ("rw_switches", "H5D_RW_SWITCHES / requests"),
        ("regular_hyperslabs", "H5D_REGULAR_HYPERSLAB_SELECTS / requests"),
        ("irregular_hyperslabs", "H5D_IRREGULAR_HYPERSLAB_SELECTS / requests"),
        ("point_selections", "H5D_POINT_SELECTS / requests"),
        ("log2_write_size", "log2(1 + mean write in bytes)"),
        ("log2_read_size", "log2(1 + mean read in bytes)"),
        ("log2_rank_bytes", "log2(1 + bytes moved per accessing rank)"),
        ("log2_rank_requests", "log2(1 + requests per accessing rank)"),
        ("log2_common_access", "log2(1 + most common access size, H5D_ACCESS1_ACCESS)"),
        ("common_access_share", "H5D_ACCESS1_COUNT / requests"),
        ("dimensions", "H5D_DATASPACE_NDIMS"),
        ("log2_type_size", "log2(1 + H5D_DATATYPE_SIZE)"),
        ("flushed", "1 if the dataset was flushed (H5D_FLUSHES)"),
    ]
    return tuple(rows)


#: ``(name, definition)`` of every dataset feature, in vector order.
DATASET_FEATURES: tuple[tuple[str, str], ...] = _features()
DATASET_FEATURE_NAMES: tuple[str, ...] = tuple(name for name, _ in DATASET_FEATURES)


@dataclass(frozen=True)
class DatasetRecord:
    """One HDF5 dataset: its ``file``, its path inside, and its merged H5D counters."""

    file: str
    dataset: str
    ranks: int
    h5d: Mapping[str, float]

    @property
    def name(self) -> str:
        return f"{self.file}:/{self.dataset}"

    @property
    def bytes(self) -> float:
        return self.h5d.get("H5D_BYTES_WRITTEN", 0.0) + self.h5d.get("H5D_BYTES_READ", 0.0)

    @property
    def requests(self) -> float:
        return self.h5d.get("H5D_WRITES", 0.0) + self.h5d.get("H5D_READS", 0.0)


def dataset_records(log: DarshanLog) -> list[DatasetRecord]:
    """One record per dataset of the log's H5D module, largest (bytes moved) first; empty
    without H5D records."""
    frame = log.counters.get("H5D")
    if frame is None or frame.empty:
        return []
    rows: dict[str, list[dict[str, float]]] = {}
    ranks: dict[str, set[int]] = {}
    for row in frame.to_dict("records"):
        name = log.names.get(int(row["id"]), f"<record {int(row['id'])}>")
        rows.setdefault(name, []).append({str(k): float(v) for k, v in row.items()})
        ranks.setdefault(name, set()).add(int(row["rank"]))
    records = []
    for name, mine in rows.items():
        file, _, dataset = name.partition(":/")
        seen = ranks[name]
        count = log.nprocs if -1 in seen else len(seen)
        records.append(DatasetRecord(file, dataset, max(count, 1),
                                     merge_counters(mine, "H5D_BYTES_WRITTEN")))
    return sorted(records, key=lambda r: (-r.bytes, r.name))


def dataset_signature(record: DatasetRecord) -> np.ndarray:
    """The feature vector of one dataset (:data:`DATASET_FEATURES`); undefined ones 0."""
    c = record.h5d
    written, read = c.get("H5D_BYTES_WRITTEN", 0.0), c.get("H5D_BYTES_READ", 0.0)
    writes, reads = c.get("H5D_WRITES", 0.0), c.get("H5D_READS", 0.0)
    requests = writes + reads
    values: dict[str, float] = {"write_share": share(written, written + read),
                                "read_share": share(read, written + read)}
    for op in ("write", "read"):
        bins = histogram(c, "H5D_SIZE", f"{op.upper()}_AGG")
        values.update({f"h5d_{op}_{b}": n for b, n in zip(BIN_NAMES, bins, strict=True)})
    values.update({
        "shared": 1.0 if record.ranks > 1 else 0.0,
        "collective": 1.0 if c.get("H5D_USE_MPIIO_COLLECTIVE", 0.0) > 0 else 0.0,
        "rw_switches": share(c.get("H5D_RW_SWITCHES", 0.0), requests),
        "regular_hyperslabs": share(c.get("H5D_REGULAR_HYPERSLAB_SELECTS", 0.0), requests),
        "irregular_hyperslabs": share(c.get("H5D_IRREGULAR_HYPERSLAB_SELECTS", 0.0),
                                       requests),
        "point_selections": share(c.get("H5D_POINT_SELECTS", 0.0), requests),
        "log2_write_size": log2p(share(written, writes)),
        "log2_read_size": log2p(share(read, reads)),
        "log2_rank_bytes": log2p((written + read) / record.ranks),
        "log2_rank_requests": log2p(requests / record.ranks),
        "log2_common_access": log2p(c.get("H5D_ACCESS1_ACCESS", 0.0)),
        "common_access_share": share(c.get("H5D_ACCESS1_COUNT", 0.0), requests),
        "dimensions": c.get("H5D_DATASPACE_NDIMS", 0.0),
        "log2_type_size": log2p(c.get("H5D_DATATYPE_SIZE", 0.0)),
        "flushed": 1.0 if c.get("H5D_FLUSHES", 0.0) > 0 else 0.0,
    })
    return np.array([values[name] for name in DATASET_FEATURE_NAMES], dtype=float)


def dataset_document(records: Sequence[DatasetRecord],
                     threshold: float = DEFAULT_THRESHOLD) -> dict[str, Any]:
    """The ``datasets`` part of ``iotune profile``: one row per dataset with its class,
    and the classes (representative, members, share of the bytes), largest first."""
    moved = [r for r in records if r.requests > 0]
    vectors = [dataset_signature(r) for r in moved]
    groups = group_similar(vectors, [r.bytes for r in moved], threshold)
    total = sum(r.bytes for r in moved)
    class_of = {m: i for i, (_, members) in enumerate(groups) for m in members}
    rows = [{"dataset": r.name, "class": class_of[i], "ranks": r.ranks,
             "writes": int(r.h5d.get("H5D_WRITES", 0.0)),
             "reads": int(r.h5d.get("H5D_READS", 0.0)),
             "bytes_written": int(r.h5d.get("H5D_BYTES_WRITTEN", 0.0)),
             "bytes_read": int(r.h5d.get("H5D_BYTES_READ", 0.0)),
             "collective": bool(r.h5d.get("H5D_USE_MPIIO_COLLECTIVE", 0.0) > 0)}
            for i, r in enumerate(moved)]
    classes = [{"class": i, "datasets": len(members),
                "bytes_share": round(share(sum(moved[m].bytes for m in members), total), 4),
                "representative": moved[rep].name,
                "features": {n: round(float(v), 3) for n, v in
                             zip(DATASET_FEATURE_NAMES, vectors[rep], strict=True) if v}}
               for i, (rep, members) in enumerate(groups)]
    return {"records": rows, "classes": classes}
