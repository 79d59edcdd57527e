"""Greedy forward selection of terms (paper eq. 4), vectorised over all candidates.

Coefficients are ordinary least squares (eq. 2); the term added at each step is the one
whose OLS fit gives the smallest relative error ``E = sum(((m(x_j) - y_j) / y_j)^2)``.

Scoring every candidate at once. Let ``Q`` be an orthonormal basis of the selected columns
and ``r`` the OLS residual (orthogonal to ``Q``), ``w = 1/y^2`` and ``W = diag(w)``. For a
candidate column ``x`` (scaled to unit norm) let ``z = x - Q Q'x`` and ``q = z/|z|``. Adding
it changes the residual to ``r - q (q'r)``, so its relative error is

    E_c = r'Wr - 2 (q'r)(q'Wr) + (q'r)^2 (q'Wq).

With ``B = Q'X``, ``G = Q'WX`` and ``M = Q'WQ`` kept up to date, the pieces are

    |z|^2 = 1 - |B_c|^2,        z'r = x'r - B_c'(Q'r),     z'Wr = x'Wr - B_c'(Q'Wr),
    z'Wz  = x'Wx - 2 G_c.B_c + B_c'M B_c,

so a step costs one pass over the candidate matrix (``[q, Wq, r, Wr]' X``) plus ``O(C k^2)``.
A candidate whose orthogonal part is tiny (``|z|^2 <= SPAN_TOL``) lies numerically in the
span of the basis and is never chosen.

Weighted rows. With a weight ``v_j`` per row (e.g. the number of runs an aggregated row
stands for), coefficients minimise ``sum_j v_j (m(x_j) - y_j)^2`` and the error is
``E = sum_j v_j ((m(x_j) - y_j) / y_j)^2``. Both are the unweighted problem on the rows
scaled by ``sqrt(v_j)`` (``X``, ``y`` and the residual scale, ``(m - y)/y`` does not), with
``w = 1/y^2`` of the unscaled targets, so the scores above apply unchanged; a row of weight
``k`` then counts exactly as ``k`` copies of it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

#: Squared norm, relative to the unit-norm candidate, below which a candidate is taken to be
#: in the span of the basis (its orthogonal part is under 1/30,000 of its length).
SPAN_TOL = 1e-9
#: Root-mean-square relative error at which the fit is exact to rounding; selecting more
#: terms would fit rounding noise, so every stopping rule stops there.
EXACT_RMS = 1e-10
STOP_RULES = ("terms", "threshold", "cv")

_BLOCK_ROWS = 256  # rows per block in the one pass over X that sets up the scores


class GreedySelector:
    """The state of forward selection: the basis so far and the scores of all candidates.

    ``X`` (rows x candidates, C-ordered) holds the candidates unscaled and, without
    weights, is only read; every quantity derived from it is scaled by ``scale = 1/|x_c|``,
    so the scores see unit-norm columns. ``y`` must be positive (the caller checks).

    With ``weights`` (positive and finite, one per row; the caller checks), the rows of
    ``X`` are multiplied by ``sqrt(weights)`` *in place* (the selector takes ``X`` over, so
    a large candidate matrix is not copied) and the fit is weighted as the module says.
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None) -> None:
        self.X = X
        self.y = y
        self.w = 1.0 / (y * y)
        self.root: np.ndarray | None = None
        self.total_weight = float(len(y))
        if weights is not None:
            self.root = np.sqrt(weights)
            self.total_weight = float(np.sum(weights))
            X *= self.root[:, None]
            y = y * self.root
        rows, count = X.shape
        sq = np.zeros(count)
        wsq = np.zeros(count)
        xy = np.zeros((2, count))
        rhs = np.column_stack([y, self.w * y])
        for r0 in range(0, rows, _BLOCK_ROWS):
            block = X[r0 : r0 + _BLOCK_ROWS]
            squares = block * block
            sq += squares.sum(axis=0)
            wsq += self.w[r0 : r0 + _BLOCK_ROWS] @ squares
            xy += rhs[r0 : r0 + _BLOCK_ROWS].T @ block
        norms = np.sqrt(sq)
        self.available = norms > 0
        self.scale = np.where(self.available, 1.0 / np.where(self.available, norms, 1.0), 0.0)
        self.wnorm2 = wsq * self.scale**2  # x'Wx of each unit-norm candidate
        self.xr, self.xwr = xy * self.scale
        self.selected: list[int] = []
        self.Q = np.empty((rows, 0))
        self.B = np.empty((0, count))  # Q'X, unit-norm columns
        self.G = np.empty((0, count))  # Q'WX, unit-norm columns
        self.M = np.empty((0, 0))  # Q'WQ
        self.r = y.copy()
        self.error = float(np.sum(self.w * self.r * self.r))

    @property
    def rows(self) -> int:
        return int(self.X.shape[0])

    @property
    def is_exact(self) -> bool:
        """Whether the fit is exact to rounding (RMS relative error <= EXACT_RMS)."""
        return self.error <= self.total_weight * EXACT_RMS**2

    def columns(self, indices: list[int]) -> np.ndarray:
        """The candidates ``indices`` on the unweighted rows, scaled as the scores see them
        (to unit norm, on the weighted rows when there are weights)."""
        if self.root is None:
            return self.X[:, indices] * self.scale[indices]
        return self.X[:, indices] * self.scale[indices] / self.root[:, None]

    def scores(self, allowed: np.ndarray | None = None) -> np.ndarray:
        """Relative error after adding each candidate; ``inf`` where it cannot be added.

        ``allowed`` (boolean, one per candidate) restricts the candidates further.
        """
        B = self.B
        orth2 = 1.0 - np.einsum("kc,kc->c", B, B)
        ok = self.available & (orth2 > SPAN_TOL)
        if allowed is not None:
            ok &= allowed
        zr = self.xr - (self.Q.T @ self.r) @ B
        zwr = self.xwr - (self.Q.T @ (self.w * self.r)) @ B
        zwz = (self.wnorm2 - 2.0 * np.einsum("kc,kc->c", self.G, B)
               + np.einsum("kc,kc->c", B, self.M @ B))
        safe = np.where(ok, orth2, 1.0)
        err = self.error - 2.0 * zr * zwr / safe + zr * zr * zwz / (safe * safe)
        return np.where(ok, np.maximum(err, 0.0), np.inf)

    def add(self, c: int) -> float:
        """Add candidate ``c`` to the basis; returns the new relative error."""
        x = self.X[:, c] * self.scale[c]
        z = x - self.Q @ (self.Q.T @ x)
        z -= self.Q @ (self.Q.T @ z)  # second Gram-Schmidt pass: orthogonal to rounding
        q = z / np.linalg.norm(z)
        r = self.r - q * (q @ self.r)
        r -= self.Q @ (self.Q.T @ r)
        wq = self.w * q
        # The one pass over X per step: [q, Wq, r, Wr]' X.
        products = (np.vstack([q, wq, r, self.w * r]) @ self.X) * self.scale
        m_new = self.Q.T @ wq
        self.M = np.block([[self.M, m_new[:, None]], [m_new[None, :], np.array([[q @ wq]])]])
        self.Q = np.column_stack([self.Q, q])
        self.B = np.vstack([self.B, products[0]])
        self.G = np.vstack([self.G, products[1]])
        self.xr, self.xwr = products[2], products[3]
        self.r = r
        self.error = float(np.sum(self.w * r * r))
        self.available[c] = False
        self.selected.append(c)
        return self.error


@dataclass(frozen=True)
class Pick:
    """One selected candidate: its index, the relative error after it, and how it came."""

    index: int
    relative_error: float
    by_completion: bool = False
    cv_error: float | None = None


def forward_select(selector: GreedySelector, *, max_terms: int, stop: str, min_gain: float,
                   cv_error: Callable[[list[int]], float | None] | None = None,
                   ) -> tuple[list[Pick], str]:
    """Add the best candidate until a stopping rule fires; returns the picks and the reason.

    Every rule stops at ``max_terms``, when no candidate is left outside the span of the
    basis, or when the fit is exact to rounding. ``stop="threshold"`` also stops when the
    best candidate lowers the relative error by less than the fraction ``min_gain``;
    ``stop="cv"`` when it lowers the cross-validated error (``cv_error(indices)``) by less
    than that fraction. A term that fails the test is not added.
    """
    picks: list[Pick] = []
    cv_before: float | None = selector.total_weight  # the empty model: every |m-y|/y is 1
    while True:
        if len(picks) >= max_terms:
            return picks, f"term limit ({max_terms})"
        if selector.is_exact:
            return picks, "exact fit (relative error at rounding level)"
        scores = selector.scores()
        best = int(np.argmin(scores))
        if not np.isfinite(scores[best]):
            return picks, "candidates exhausted"
        cv_after = None
        if stop == "threshold":
            gain = (selector.error - float(scores[best])) / selector.error
            if gain < min_gain:
                return picks, (f"negligible gain: the next term lowers the relative error "
                               f"by {100 * gain:.3g}%, less than min_gain {100 * min_gain:.3g}%")
        elif stop == "cv" and cv_error is not None:
            cv_after = cv_error([*selector.selected, best])
            if cv_before is not None and cv_after is not None:
                gain = (cv_before - cv_after) / cv_before if cv_before > 0 else 0.0
                if gain < min_gain:
                    return picks, (f"cross-validated error stopped falling: the next term "
                                   f"changes it by {-100 * gain:+.3g}%; it must fall by min_gain "
                                   f"{100 * min_gain:.3g}%")
            cv_before = cv_after
        picks.append(Pick(best, selector.add(best), cv_error=cv_after))
