"""Equivalence classes of files (or datasets): those whose signatures are (cosine) similar.

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


def group_similar(vectors: Sequence[np.ndarray], sizes: Sequence[float],
                  threshold: float = DEFAULT_THRESHOLD) -> list[tuple[int, list[int]]]:
    """The classes of ``vectors`` (module doc): items visited from the largest ``size``
    (then by index), each joining the class whose representative it is most similar to
    when that similarity is at least ``threshold``. Returns ``(representative, members)``
    as indices into ``vectors``, classes by their members' total size, largest first."""
    if not 0.0 < threshold <= 1.0:
        raise DataError(f"class threshold {threshold}: must be in (0, 1]")
    order = sorted(range(len(vectors)), key=lambda i: (-sizes[i], i))
    groups: list[tuple[int, list[int]]] = []
    for i in order:
        best, best_sim = None, -1.0
        for g, (rep, _) in enumerate(groups):
            sim = pairwise_similarity(vectors[i], vectors[rep])
            if sim > best_sim:
                best, best_sim = g, sim
        if best is not None and best_sim >= threshold:
            groups[best][1].append(i)
        else:
            groups.append((i, [i]))
    return sorted(groups, key=lambda g: -sum(sizes[m] for m in g[1]))


def equivalence_classes(files: Sequence[FileCounters],
                        threshold: float = DEFAULT_THRESHOLD) -> list[SignatureClass]:
    """Group the files that moved data into classes, largest class (by bytes) first
    (DataError from :func:`group_similar` for a threshold outside (0, 1])."""
    data_files = sorted((f for f in files if f.has_data), key=lambda f: (-f.bytes, f.name))
    vectors = [signature(f) for f in data_files]
    groups = group_similar(vectors, [f.bytes for f in data_files], threshold)
    total = sum(f.bytes for f in data_files)
    classes = [(data_files[rep], vectors[rep], [data_files[m] for m in members],
                sum(data_files[m].bytes for m in members)) for rep, members in groups]
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
