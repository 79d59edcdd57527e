"""Data generators shared by the model tests (imported by name: tests/model has no package)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import pandas as pd

#: The paper's eq. 5: m = b1 + b2 f + b3 f/a + b4 a/c + b5 a/s + b6 cs/a + b7 cf/a.
EQ5_COEFFICIENTS = (-20.65, 0.11, 4.17, 27.13, 4.50, 0.0038, 0.01)
#: Its terms as exponent vectors over (c, s, a, f), in the same order.
EQ5_EXPONENTS = ((0, 0, 0, 0), (0, 0, 0, 1), (0, 0, -1, 1), (-1, 0, 1, 0), (0, -1, 1, 0),
                 (1, 1, -1, 0), (1, 0, -1, 1))


def eq5_time(c: np.ndarray, s: np.ndarray, a: np.ndarray, f: np.ndarray) -> np.ndarray:
    b = EQ5_COEFFICIENTS
    return b[0] + b[1] * f + b[2] * f / a + b[3] * a / c + b[4] * a / s + b[5] * c * s / a \
        + b[6] * c * f / a


def grid_frame(columns: Sequence[str], values: Sequence[Sequence[float]]) -> pd.DataFrame:
    """Every combination of the given values, one row each."""
    return pd.DataFrame(list(itertools.product(*values)), columns=list(columns), dtype=float)


def eq5_frame(c: Sequence[float] = (16, 32, 64, 156), s: Sequence[float] = (1, 4, 16, 64),
              a: Sequence[float] = (16, 32, 64, 96),
              f: Sequence[float] = (256, 512, 1024, 2048)) -> pd.DataFrame:
    """Noise-free eq. 5 write times over a grid (default: stripe settings and aggregators
    like the paper's 2048-core training set, file sizes of the larger scales)."""
    df = grid_frame("csaf", [c, s, a, f])
    df["write_time"] = eq5_time(df.c, df.s, df.a, df.f)
    return df
