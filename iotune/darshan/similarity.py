"""Normalisation of signatures and their cosine similarity (as in the paper).

Two normalisations keep a few large features (log2 sizes) from dominating the cosine:

* **pairwise**: for two vectors, each feature is divided by the larger of the two absolute
  values (0 when both are 0). The similarity of a pair does not depend on anything else,
  and it is 1 exactly when the two vectors are equal.
* **range** (feature-range): the vectors are stacked and each column is min-max scaled to
  [0, 1] over the stack. A column that is constant over the stack carries no information
  and becomes 0. The similarity of a pair therefore depends on the whole stack; it is
  meant for ranking several candidates against one application (``iotune match``).

Cosine similarity of two vectors with a zero norm is 0 (nothing in common), except that
two all-zero vectors are identical (1).
"""

from __future__ import annotations

import numpy as np

METHODS = ("pairwise", "range")


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine of the angle between ``a`` and ``b`` (see the module doc for zero vectors)."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 1.0 if na == nb else 0.0
    return float(np.clip(np.dot(a, b) / (na * nb), -1.0, 1.0))


def pairwise_normalise(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a`` and ``b`` with each feature divided by ``max(|a_i|, |b_i|)`` (0 stays 0)."""
    scale = np.maximum(np.abs(a), np.abs(b))
    safe = np.where(scale > 0, scale, 1.0)
    return a / safe, b / safe


def range_normalise(matrix: np.ndarray) -> np.ndarray:
    """Each column of ``matrix`` min-max scaled to [0, 1]; constant columns become 0."""
    matrix = np.asarray(matrix, dtype=float)
    low, high = matrix.min(axis=0), matrix.max(axis=0)
    span = high - low
    scaled = (matrix - low) / np.where(span > 0, span, 1.0)
    scaled[:, span == 0] = 0.0
    return scaled


def pairwise_similarity(a: np.ndarray, b: np.ndarray) -> float:
    """Cosine similarity of ``a`` and ``b`` after pairwise normalisation."""
    return cosine(*pairwise_normalise(a, b))


def pairwise_gaps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each feature's share of the mismatch of ``a`` and ``b``: its squared difference
    after pairwise normalisation (0 when the two values are equal, 1 when only one side
    has the feature), over the sum of them. The shares add up to 1, or are all 0 when the
    vectors are equal.

    A feature the two sides share exactly gets 0 even though it changes the cosine's
    norms: only features that differ are named as unmatched.
    """
    u, v = pairwise_normalise(np.asarray(a, dtype=float), np.asarray(b, dtype=float))
    terms = (u - v) ** 2
    total = float(terms.sum())
    return terms / total if total > 1e-12 else np.zeros_like(terms)


def similarities(target: np.ndarray, candidates: np.ndarray, method: str) -> np.ndarray:
    """Similarity of ``target`` to each row of ``candidates`` under ``method``.

    For ``range`` the stack is the target followed by all candidates.
    """
    candidates = np.atleast_2d(np.asarray(candidates, dtype=float))
    if method == "pairwise":
        return np.array([pairwise_similarity(target, row) for row in candidates])
    if method == "range":
        scaled = range_normalise(np.vstack([target, candidates]))
        return np.array([cosine(scaled[0], row) for row in scaled[1:]])
    raise ValueError(f"method {method!r}: expected one of {', '.join(METHODS)}")
