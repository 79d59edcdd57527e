"""Categorical parameters as indicator terms (never as ordinal numbers).

A categorical column (e.g. ``romio_cb_write`` in enable/disable/automatic) contributes,
for each of its levels, a copy of every base candidate multiplied by the indicator
``1[column = level]``. The greedy selection can then pick a per-level offset
(``[w=disable]``) or a per-level change of any term (``[w=disable] a/s``), while the shared
terms apply to all levels and are fitted on all rows. Every level gets its indicator terms
(there is no reference level): the candidate set is then the same whatever the levels are
called, so relabelling them cannot change the selection. The redundancy this brings (the
indicator versions of a term over all levels add up to the shared term) is harmless: a
candidate in the span of the basis is never chosen.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iotune.errors import DataError

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class CategoricalSpec:
    """One categorical column and its levels (as text, sorted)."""

    column: str
    levels: tuple[str, ...]


def level_strings(series: pd.Series) -> np.ndarray:
    """The column's values as level names: integral numbers print without ``.0``.

    Raises DataError for a missing value, naming the row.
    """
    import pandas as pd

    missing = series.isna().to_numpy()
    if missing.any():
        row = series.index[int(np.argmax(missing))]
        raise DataError(f"column {series.name!r}: missing value at row {row} "
                        "(a categorical parameter needs a level on every row)")
    if pd.api.types.is_bool_dtype(series):
        return series.astype(str).to_numpy()
    if pd.api.types.is_numeric_dtype(series):
        numbers = series.to_numpy(dtype=float)
        if np.all(np.isfinite(numbers)) and np.all(numbers == np.round(numbers)):
            return numbers.astype(np.int64).astype(str)
    return series.astype(str).to_numpy()


def spec_from_data(column: str, levels: np.ndarray) -> CategoricalSpec:
    """The spec of a training column; DataError when it has a single level."""
    names = np.unique(levels)
    if len(names) < 2:
        raise DataError(f"column {column!r}: constant (every row is {names[0]!r}); a "
                        "categorical parameter needs at least two levels")
    return CategoricalSpec(column, tuple(str(n) for n in names))


def indicator_masks(spec: CategoricalSpec, levels: np.ndarray) -> list[np.ndarray]:
    """One float mask per level, in ``spec.levels`` order."""
    return [(levels == level).astype(float) for level in spec.levels]


def check_known(spec: CategoricalSpec, levels: np.ndarray, index: pd.Index) -> None:
    """DataError when a row has a level the model was not trained on."""
    unknown = ~np.isin(levels, np.asarray(spec.levels))
    if unknown.any():
        i = int(np.argmax(unknown))
        raise DataError(f"column {spec.column!r}: level {levels[i]!r} at row {index[i]} was "
                        f"not in the training data (known: {', '.join(spec.levels)})")


def level_combinations(specs: Sequence[CategoricalSpec]) -> Iterator[dict[str, str]]:
    """Every combination of one level per categorical column (one empty dict if none)."""
    for combo in itertools.product(*(spec.levels for spec in specs)):
        yield {spec.column: level for spec, level in zip(specs, combo, strict=True)}
