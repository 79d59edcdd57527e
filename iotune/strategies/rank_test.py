"""A distribution-free comparison of two configurations' run times (Mann-Whitney, Moses).

Production run times have heavy tails: one run in six is often 2-3x slower than its
siblings. A test built on the spread of log times (Student's t) lets one such run widen the
interval until a consistent 5x gain is no longer "confident". A rank test does not care how
far out a run lies, only where it ranks, so one outlier moves the verdict by one rank.

The statistic is the shift ``delta`` of log times from one configuration (``slow``) to the
other (``fast``): the speedup is ``exp(delta)``. With ``D`` the ``m x n`` differences
``log s_i - log f_j``:

- the estimate is their median (Hodges-Lehmann);
- the one-sided ``1 - alpha`` lower bound is the ``(mn - u* + 1)``-th smallest of ``D``
  (Moses), and the upper bound the ``u*``-th, where ``u*`` is the smallest count with
  ``P(U >= u*) <= alpha`` under the exact null distribution of the Mann-Whitney count ``U``
  (the pairs with ``s_i > f_j``). The lower bound is above 0 exactly when the one-sided
  Mann-Whitney test rejects "``fast`` is not faster" at level ``alpha``.

It assumes only that the two sets of runs are independent draws and that a configuration
shifts the distribution of log times; no shape. With too few runs (``1 / C(m + n, m) >
alpha``: fewer than 3 and 3 at 5%) no bound exists and the interval is unbounded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np


@dataclass(frozen=True)
class Shift:
    """Log-time shift from ``slow`` to ``fast``: estimate and bounds (None: unbounded)."""

    estimate: float
    low: float | None
    high: float | None


@lru_cache(maxsize=256)
def _upper_tail(m: int, n: int) -> tuple[float, ...]:
    """``P(U >= u)`` for ``u = 0..mn`` under the null: the coefficients of the Gaussian
    binomial ``[m + n choose m]_q`` (the counts of each ``U``), normalised and summed from
    the top."""
    size = m * n + 1
    counts = np.zeros(size)
    counts[0] = 1.0
    for i in range(1, m + 1):  # multiply by (1 - q^(n+i)) / (1 - q^i)
        shifted = np.zeros(size)
        shifted[n + i:] = counts[: size - n - i]
        counts = counts - shifted
        for k in range(i, size):
            counts[k] += counts[k - i]
    probabilities = counts / counts.sum()
    return tuple(np.cumsum(probabilities[::-1])[::-1])


#: Beyond this many pairs the exact distribution gives way to the normal approximation of
#: ``U`` (its error there is far below the noise of the runs).
EXACT_PAIRS = 2500


def critical_count(m: int, n: int, alpha: float) -> int | None:
    """The smallest ``u`` with ``P(U >= u) <= alpha`` for ``m`` and ``n`` runs; None when even
    ``U = mn`` is more likely than ``alpha`` (too few runs for any bound)."""
    if m < 1 or n < 1:
        return None
    if m * n > EXACT_PAIRS:
        from scipy.stats import norm

        spread = math.sqrt(m * n * (m + n + 1) / 12)
        return min(m * n, math.ceil(m * n / 2 + norm.ppf(1 - alpha) * spread + 0.5))
    tail = _upper_tail(m, n)
    for u in range(m * n + 1):
        if tail[u] <= alpha * (1 + 1e-9):  # exact ties with alpha (1/20 at 3 and 3) count
            return u
    return None


def log_shift(slow: Sequence[float], fast: Sequence[float], alpha: float) -> Shift | None:
    """The shift of log times from ``slow`` to ``fast`` (positive: ``fast`` is faster) with
    its one-sided ``1 - alpha`` bounds on each side; None when either has no positive time."""
    s = np.log(np.asarray([t for t in slow if t > 0], dtype=float))
    f = np.log(np.asarray([t for t in fast if t > 0], dtype=float))
    if not len(s) or not len(f):
        return None
    differences = np.sort((s[:, None] - f[None, :]).ravel())
    centre = float(np.median(differences))
    u = critical_count(len(s), len(f), alpha)
    if u is None:
        return Shift(centre, None, None)
    pairs = len(differences)
    return Shift(centre, float(differences[pairs - u]), float(differences[u - 1]))
