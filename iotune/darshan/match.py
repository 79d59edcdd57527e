"""Rank iotune's kernels by how similar their signatures are to an application's.

The references are the kernel *variants*, which each kernel's spec lists (ior through
posix, mpiio or hdf5, shared file or one file per process, independent or collective;
vpic collective or independent), each
sized like the application (its most common request size, its requests per rank, its rank
count, timing a read when it reads, without the write when it only reads, syncing when it
syncs) and signed analytically; plus the
primary signature of any Darshan log of a kernel run the user adds.

Similarities are given under both normalisations: ``pairwise`` (independent of the other
references) and ``range`` (min-max over the stack of the application and all references).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from iotune.darshan.analytic import Candidate, kernel_file
from iotune.darshan.classes import equivalence_classes, pick_class
from iotune.darshan.records import read_counters
from iotune.darshan.signature import FEATURE_INDEX, signature
from iotune.darshan.similarity import similarities
from iotune.darshan.target import SignatureTarget
from iotune.kernel_specs import Feature, get_kernel, kernels_with
from iotune.workload.counters import FileCounters
from iotune.workload.genes import LogHints


@dataclass(frozen=True)
class Reference:
    """A signature to compare with: a named kernel variant, or a kernel's Darshan log."""

    name: str
    source: str
    vector: np.ndarray
    candidate: Candidate | None = None


def catalogue(target: FileCounters, target_vector: np.ndarray) -> list[Reference]:
    """Every kernel's variants (``KernelSpec.match_variants``), sized like ``target``, with
    their analytic signatures."""
    hints = LogHints.from_file(target)
    common = sorted(hints.sizes, key=lambda s: -s)
    access = int(target.posix.get("POSIX_ACCESS1_ACCESS",
                                  target.mpiio.get("MPIIO_ACCESS1_ACCESS", 0)))
    size = access if access > 0 else (common[0] if common else 2**20)
    sync = bool(target_vector[FEATURE_INDEX["sync"]] > 0)
    refs = []
    for kernel in kernels_with(Feature.DARSHAN):
        for variant in get_kernel(kernel).match_variants(size, hints.requests_per_rank,
                                                         hints.access, sync):
            candidate = Candidate(kernel, variant.args, variant.collective, hints.ranks)
            refs.append(Reference(variant.name, "analytic", signature(kernel_file(candidate)),
                                  candidate))
    return refs


def references_from_logs(paths: Sequence[Path]) -> list[Reference]:
    """The primary signature of each Darshan log (of a kernel run), named by file stem."""
    refs = []
    for path in paths:
        _, files = read_counters(path, "a kernel signature")
        chosen = pick_class(equivalence_classes(files), None, str(path))
        refs.append(Reference(path.stem, str(path), chosen.vector))
    return refs


def rank_references(target_vector: np.ndarray, refs: Sequence[Reference],
                    mask: np.ndarray) -> list[dict[str, object]]:
    """One row per reference with both similarities, most similar (pairwise) first."""
    if not refs:
        return []
    stack = np.vstack([r.vector * mask for r in refs])
    pairwise = similarities(target_vector * mask, stack, "pairwise")
    ranged = similarities(target_vector * mask, stack, "range")
    rows: list[dict[str, object]] = [
        {"kernel": ref.name, "source": ref.source, "pairwise": round(float(p), 4),
         "range": round(float(r), 4),
         "args": dict(ref.candidate.args) if ref.candidate else None,
         "collective": ref.candidate.collective if ref.candidate else None}
        for ref, p, r in zip(refs, pairwise, ranged, strict=True)
    ]
    rows.sort(key=lambda row: (-float(row["pairwise"]), -float(row["range"]),  # type: ignore[arg-type]
                               str(row["kernel"])))
    for i, row in enumerate(rows, start=1):
        row["rank"] = i
    return rows


def match_document(target: SignatureTarget,
                   kernel_logs: Sequence[Path] = ()) -> dict[str, Any]:
    """The ``iotune match`` document: the kernel variants (:func:`catalogue`) and the
    logs of kernel runs ``kernel_logs`` ranked against ``target``'s chosen class."""
    chosen = target.chosen
    refs = catalogue(chosen.representative, chosen.vector)
    refs += references_from_logs(list(kernel_logs))
    return {"log": str(target.log.path), "class": chosen.index,
            "representative": chosen.representative.name,
            "ignored_features": target.ignored,
            "ranking": rank_references(chosen.vector, refs, target.mask)}
