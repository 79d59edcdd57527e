"""Checks that turn a DataFrame into the arrays the model works on, or a clear DataError.

Every message names the column, the offending value and row (the DataFrame's index label)
and the rule that broke, e.g. ``column 'a': value 0 at row 3 cannot be inverted (candidate
terms with a^-1 need positive values)``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from iotune.errors import DataError

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd


def _show(value: object) -> str:
    if isinstance(value, float | np.floating) and np.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return str(value)


def require_columns(df: pd.DataFrame, columns: Iterable[str]) -> None:
    """DataError naming the first missing column and the columns there are."""
    for column in columns:
        if column not in df.columns:
            present = ", ".join(map(str, df.columns)) or "none"
            raise DataError(f"column {column!r} not in the data (columns: {present})")


def numeric_column(df: pd.DataFrame, column: str, rule: str) -> np.ndarray:
    """The column as finite float64; ``rule`` explains in messages why it must be numeric."""
    import pandas as pd

    series = df[column]
    numbers = pd.to_numeric(series, errors="coerce").to_numpy(dtype=float)
    bad = ~np.isfinite(numbers)
    if bad.any():
        i = int(np.argmax(bad))
        raw, row = series.iloc[i], df.index[i]
        if pd.isna(raw):
            raise DataError(f"column {column!r}: missing value at row {row} ({rule})")
        if np.isnan(numbers[i]):
            raise DataError(f"column {column!r}: value {raw!r} at row {row} is not a number "
                            f"({rule})")
        raise DataError(f"column {column!r}: value {_show(raw)} at row {row} is not finite "
                        f"({rule})")
    return numbers


def target_values(df: pd.DataFrame, target: str) -> np.ndarray:
    """Positive finite targets: eq. 4 divides by every ``y_j``."""
    rule = "targets must be positive numbers: the relative error (m - y)/y divides by them"
    y = numeric_column(df, target, rule)
    bad = y <= 0
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"column {target!r}: value {_show(y[i])} at row {df.index[i]} is not "
                        f"positive ({rule})")
    return y


def parameter_values(df: pd.DataFrame, params: Sequence[str],
                     inverted: Mapping[str, str]) -> np.ndarray:
    """The parameters as a ``(rows, n)`` float64 array.

    Each parameter in ``inverted`` must be positive: a term divides by it, and the
    monotonicity rule relies on ``x`` and ``1/x`` being monotone on the positive reals.
    ``inverted`` maps the parameter to the reason quoted in the message, e.g.
    ``"term f/a needs positive values"``.
    """
    columns = []
    for param in params:
        values = numeric_column(df, param, "parameters must be finite numbers")
        rule = inverted.get(param)
        bad = values <= 0
        if rule is not None and bad.any():
            i = int(np.argmax(bad))
            row = df.index[i]
            if values[i] == 0:
                raise DataError(f"column {param!r}: value 0 at row {row} cannot be inverted "
                                f"({rule})")
            raise DataError(f"column {param!r}: value {_show(values[i])} at row {row} is not "
                            f"positive ({rule})")
        columns.append(values)
    if not columns:
        return np.empty((len(df), 0))
    return np.column_stack(columns)


def check_not_constant(values: np.ndarray, params: Sequence[str]) -> None:
    """DataError for a parameter with one value: it is the intercept in disguise."""
    for j, param in enumerate(params):
        column = values[:, j]
        if np.all(column == column[0]):
            raise DataError(f"column {param!r}: constant (every row is {_show(column[0])}), so "
                            "its terms cannot be told apart from the intercept; drop it from "
                            "the parameters")


def row_weights(weights: Any, index: pd.Index) -> np.ndarray:
    """Row weights as float64: one finite positive number per row of ``index``, or the
    DataError naming the first bad one and its row."""
    w = np.asarray(weights, dtype=float).reshape(-1)
    if len(w) != len(index):
        raise DataError(f"weights: {len(w)} given for {len(index)} rows (one per row)")
    bad = ~(np.isfinite(w) & (w > 0))
    if bad.any():
        i = int(np.argmax(bad))
        raise DataError(f"weights: value {_show(w[i])} at row {index[i]} is not a positive "
                        "number (a weight is how many measurements a row stands for)")
    return w
