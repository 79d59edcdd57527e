"""Where candidates lie, and a space-filling choice among them (a search's cold start).

Every candidate gets coordinates in the unit cube, one axis per setting that varies:
numeric settings (counts, byte sizes) on a log scale mapped onto [0, 1] by their range among
the candidates (a stripe count of 2 is as far from 4 as 32 is from 64, which is how I/O
settings act); other settings are categorical, one level per distinct value (an unset
value is a level of its own).

:func:`space_filling` draws a scrambled Latin hypercube in that cube
(``scipy.stats.qmc.LatinHypercube``, seeded, with the centred-discrepancy optimisation) and
maps each point onto the nearest candidate not yet taken. On a categorical axis the point's
coordinate names a level (``floor(u * levels)``) and a candidate of another level is one
unit away, so a design spreads over the levels as evenly as the hypercube spreads over
each axis, on full factorial spaces and on sparse recorded sets alike.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from iotune.settings.values import SETTINGS

Configuration = dict[str, Any]


@dataclass(frozen=True)
class Axes:
    """The candidates as coordinates: ``numeric`` (N x a, in [0,1], NaN for unset) and
    ``levels`` (N x b level numbers), with the level counts of the categorical axes."""

    numeric_names: tuple[str, ...]
    numeric: np.ndarray
    categorical_names: tuple[str, ...]
    levels: np.ndarray
    level_counts: tuple[int, ...]

    @property
    def dimensions(self) -> int:
        return len(self.numeric_names) + len(self.categorical_names)


def is_numeric(name: str, values: Sequence[Any]) -> bool:
    """Whether setting ``name`` is a numeric axis: a numeric setting (counts, byte sizes)
    whose every value is a finite positive number."""
    setting = SETTINGS.get(name)
    return setting is not None and setting.numeric and all(
        isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool)
        and math.isfinite(float(v)) and float(v) > 0 for v in values)


def candidate_axes(candidates: Sequence[Configuration]) -> Axes:
    """The coordinates of ``candidates`` on every setting that takes two values or more."""
    names = list(dict.fromkeys(n for c in candidates for n in c))
    numeric_names, numeric_cols, cat_names, cat_cols, counts = [], [], [], [], []
    for name in names:
        values = [c.get(name) for c in candidates]
        distinct = {repr(v) for v in values}
        if len(distinct) < 2:
            continue
        if is_numeric(name, [v for v in values if v is not None]):
            logs = np.array([math.log(float(v)) if v is not None else np.nan for v in values])
            low, high = np.nanmin(logs), np.nanmax(logs)
            numeric_names.append(name)
            numeric_cols.append((logs - low) / (high - low) if high > low else logs * 0.0)
        else:
            order = {key: i for i, key in enumerate(dict.fromkeys(repr(v) for v in values))}
            cat_names.append(name)
            cat_cols.append(np.array([order[repr(v)] for v in values]))
            counts.append(len(order))
    n = len(candidates)
    return Axes(tuple(numeric_names),
                np.column_stack(numeric_cols) if numeric_cols else np.zeros((n, 0)),
                tuple(cat_names),
                np.column_stack(cat_cols) if cat_cols else np.zeros((n, 0), dtype=int),
                tuple(counts))


def distances_to(axes: Axes, numeric_point: np.ndarray, level_point: np.ndarray) -> np.ndarray:
    """Squared distance of every candidate to a point (numeric coordinates, level numbers):
    squared differences on numeric axes (1 for an unset value), 1 per categorical mismatch."""
    diff = axes.numeric - numeric_point
    numeric = np.where(np.isnan(diff), 1.0, diff * diff).sum(axis=1)
    mismatches = (axes.levels != level_point).sum(axis=1)
    return numeric + mismatches


@functools.lru_cache(maxsize=256)
def latin_hypercube(dimensions: int, count: int, seed: int) -> np.ndarray:
    """``count`` points of a Latin hypercube in ``dimensions``, its centered discrepancy
    lowered by scipy's random-cd (read-only). They depend on the three numbers alone, and
    the optimization can take seconds even for three points (it stops only after 100
    swaps in a row that do not lower the discrepancy, or after 10,000): each design is
    computed once per process, where the searches of one seed would each compute it."""
    from scipy.stats import qmc

    points = qmc.LatinHypercube(d=dimensions, seed=seed, optimization="random-cd").random(count)
    points.setflags(write=False)
    return points


def space_filling(candidates: Sequence[Configuration], count: int, seed: int,
                  taken: set[int] | None = None) -> list[int]:
    """Indices of ``count`` distinct candidates spread over the space (fewer if fewer exist).

    ``taken`` candidates (e.g. already measured) are never chosen. Deterministic for a seed.
    """
    taken = set(taken or ())
    free = len(candidates) - len(taken)
    count = min(count, free)
    if count <= 0:
        return []
    axes = candidate_axes(candidates)
    if axes.dimensions == 0:
        return [i for i in range(len(candidates)) if i not in taken][:count]
    points = latin_hypercube(axes.dimensions, count, seed)
    a = len(axes.numeric_names)
    counts = np.array(axes.level_counts, dtype=float)
    chosen: list[int] = []
    blocked = np.zeros(len(candidates), dtype=bool)
    blocked[list(taken)] = True
    for point in points:
        levels = np.minimum(np.floor(point[a:] * counts), counts - 1).astype(int)
        d = distances_to(axes, point[:a], levels)
        d[blocked] = np.inf
        best = int(np.argmin(d))
        chosen.append(best)
        blocked[best] = True
    return chosen
