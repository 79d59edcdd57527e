"""Equivalence classes of files: files whose signatures are (cosine) similar.

The application signature is one representative per class (the paper's "one record ID
from each class"). Files are visited from the most bytes moved to the least; a file joins
the class whose representative it is most similar to when that similarity (pairwise
normalised cosine) is at least ``threshold``, else it starts a new class and represents
it. The representative of a class is thus its largest file. Files that were only opened or
stat'ed (no reads or writes) have no signature and join no class.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from iotune.darshan.signature import signature
from iotune.darshan.similarity import pairwise_similarity
from iotune.errors import DataError
from iotune.workload.counters import FileCounters

DEFAULT_THRESHOLD = 0.9


@dataclass(frozen=True)
class SignatureClass:
    """One kind of I/O behaviour in the application."""

    index: int
    representative: FileCounters
    vector: np.ndarray
    members: tuple[FileCounters, ...]
    bytes: float
    share: float

    @property
    def files(self) -> int:
        return len(self.members)


def equivalence_classes(files: Sequence[FileCounters],
                        threshold: float = DEFAULT_THRESHOLD) -> list[SignatureClass]:
    """Group the files that moved data into classes, largest class (by bytes) first."""
    if not 0.0 < threshold <= 1.0:
        raise DataError(f"class threshold {threshold}: must be in (0, 1]")
    data_files = sorted((f for f in files if f.has_data), key=lambda f: (-f.bytes, f.name))
    groups: list[tuple[FileCounters, np.ndarray, list[FileCounters]]] = []
    for fc in data_files:
        vector = signature(fc)
        best, best_sim = None, -1.0
        for i, (_, rep_vector, _) in enumerate(groups):
            sim = pairwise_similarity(vector, rep_vector)
            if sim > best_sim:
                best, best_sim = i, sim
        if best is not None and best_sim >= threshold:
            groups[best][2].append(fc)
        else:
            groups.append((fc, vector, [fc]))
    total = sum(f.bytes for f in data_files)
    classes = [
        (rep, vector, members, sum(m.bytes for m in members))
        for rep, vector, members in groups
    ]
    classes.sort(key=lambda c: (-c[3], c[0].name))
    return [
        SignatureClass(index=i, representative=rep, vector=vector, members=tuple(members),
                       bytes=moved, share=moved / total if total > 0 else 0.0)
        for i, (rep, vector, members, moved) in enumerate(classes)
    ]


def pick_class(classes: Sequence[SignatureClass], index: int | None, where: str) -> SignatureClass:
    """Class ``index`` (default: the one that moved the most bytes); DataError if absent."""
    if not classes:
        raise DataError(f"{where}: no file in the log was read or written; there is no "
                        "signature to use")
    chosen = 0 if index is None else index
    if not 0 <= chosen < len(classes):
        raise DataError(f"{where}: class {chosen} does not exist; the log has classes "
                        f"0..{len(classes) - 1}")
    return classes[chosen]
