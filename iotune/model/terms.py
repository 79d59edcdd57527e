"""Candidate terms ``prod_i x_i^p_i`` with ``p_i in {-1, 0, 1}`` (paper eq. 3).

A term is an exponent vector over the model's numeric parameters, optionally multiplied
by the indicator ``1[column = level]`` of one categorical column (see ``categorical.py``).
Candidate ``c`` of the ``3^n`` base candidates has exponents
``p_j = (c // 3^j) % 3 - 1``: parameter 0 varies fastest, and index ``(3^n - 1) / 2``
is the intercept (all exponents zero).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

Indicator = tuple[str, str]


@dataclass(frozen=True)
class Term:
    """One basis function: exponents aligned with the model's parameters, plus an indicator.

    ``indicator`` is ``(column, level)`` for a term that is zero outside that level of a
    categorical column, or ``None`` for a term that applies to every row.
    """

    exponents: tuple[int, ...]
    indicator: Indicator | None = None

    @property
    def is_intercept(self) -> bool:
        return not any(self.exponents) and self.indicator is None

    def name(self, params: Sequence[str]) -> str:
        """The term in the paper's notation: ``1``, ``f``, ``f/a``, ``cs/a``, ``1/(ac)``.

        Parameter names are juxtaposed when every name is one character, and joined
        with ``*`` otherwise. An indicator prints first: ``[w=disable] a/s``.
        """
        sep = "" if all(len(p) == 1 for p in params) else "*"
        num = sep.join(p for p, e in zip(params, self.exponents, strict=True) if e > 0)
        den_names = [p for p, e in zip(params, self.exponents, strict=True) if e < 0]
        den = sep.join(den_names)
        if len(den_names) > 1:
            den = f"({den})"
        body = f"{num or '1'}/{den}" if den else num
        if self.indicator is None:
            return body or "1"
        column, level = self.indicator
        return f"[{column}={level}] {body}" if body else f"[{column}={level}]"


def exponent_grid(n_params: int) -> np.ndarray:
    """All ``3^n`` exponent vectors, shape ``(3^n, n)``, int8, in candidate order."""
    index = np.arange(3**n_params)
    powers = 3 ** np.arange(n_params)
    return ((index[:, None] // powers[None, :]) % 3 - 1).astype(np.int8)


def candidate_matrix(values: np.ndarray, indicators: Sequence[np.ndarray],
                     block_rows: int = 32) -> np.ndarray:
    """Every candidate term evaluated on every row, shape ``(rows, 3^n * (1 + k))``.

    ``values`` is ``(rows, n)`` with positive entries; ``indicators`` are ``k`` row masks
    (0/1). Columns ``[0, 3^n)`` are the base candidates in :func:`exponent_grid` order;
    block ``b`` (1-based) repeats them multiplied by ``indicators[b - 1]``.
    """
    rows, n = values.shape
    base = 3**n
    out = np.empty((rows, base * (1 + len(indicators))))
    inverse = 1.0 / values
    # A few rows at a time, so that the whole expansion of those rows stays in cache.
    for r0 in range(0, rows, block_rows):
        r1 = min(rows, r0 + block_rows)
        block = out[r0:r1]
        block[:, 0] = 1.0
        width = 1
        # The block [0, w) becomes the p_j = -1 block, a copy the p_j = 0 block and a
        # multiple the p_j = +1 block, matching exponent_grid's order.
        for j in range(n):
            np.multiply(block[:, :width], values[r0:r1, j : j + 1],
                        out=block[:, 2 * width : 3 * width])
            block[:, width : 2 * width] = block[:, :width]
            np.multiply(block[:, :width], inverse[r0:r1, j : j + 1], out=block[:, :width])
            width *= 3
        for b, mask in enumerate(indicators, start=1):
            np.multiply(block[:, :base], mask[r0:r1, None],
                        out=block[:, b * base : (b + 1) * base])
    return out


def evaluate_term(term: Term, values: np.ndarray, indicator: np.ndarray | None) -> np.ndarray:
    """One term on every row of ``values`` (``(rows, n)``); ``indicator`` masks rows.

    The same arithmetic, in the same order, is used for fitting the final coefficients
    and for prediction, so a saved and reloaded model predicts bit for bit the same.
    """
    column = np.ones(values.shape[0])
    for j, e in enumerate(term.exponents):
        if e > 0:
            column = column * values[:, j]
        elif e < 0:
            column = column / values[:, j]
    if indicator is not None:
        column = column * indicator
    return column
