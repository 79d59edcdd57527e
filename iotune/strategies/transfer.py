"""What smaller scales say about the target scale: a shape model, and a check that it holds.

A training campaign measures configurations at scales below the one tuned. The absolute
times at those scales say little about the target (more ranks, more data, another share of
the file system), but the *shape* of the landscape often carries over: which settings hurt,
which level of a choice is fast. So the training rows are normalised per scale (each time
divided by the geometric mean of its scale's times) and the paper's model is fitted on the
normalised times without ``cores``: it ranks the target's candidates by how much faster than
their scale's typical run similar configurations were at the trained scales. That ranking
works when the configurations at each scale differ (random designs per scale, as in recorded
campaigns), where a per-configuration rank correlation has nothing to pair.

Whether the shape really carries over is measured, not assumed: once the target scale has
``MIN_PAIRS`` measured configurations, :func:`agreement` is the Spearman rank correlation
between the shape model's predictions and the measured target times. A correlation at or
below ``MISLEADING_CORRELATION`` (0: the predictions order the measured configurations no
better than chance) says the training scales mislead, and the search stops using them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from iotune.model.from_measurements import timed_rows, with_settings
from iotune.store.targets import target_column

if TYPE_CHECKING:
    import pandas as pd

#: Measured target-scale configurations needed before the agreement is judged. The search
#: measures the configurations it predicts fast, whose true times lie close together, so
#: their order is partly noise: with fewer than six, a rank correlation at or below zero
#: happens by chance too often to drop what the trained scales say (until then, the
#: portfolio's credit for ranking skill is the graded fallback).
MIN_PAIRS = 6
#: At or below this rank correlation the training scales are taken to mislead.
MISLEADING_CORRELATION = 0.0


def training_scales(frame: pd.DataFrame | None, names: Sequence[str], cores: int) -> list[int]:
    """The scales other than ``cores`` with measured configurations in ``frame``, ascending."""
    if frame is None or frame.empty or "cores" not in frame.columns:
        return []
    rows = with_settings(frame, names)
    return sorted(int(c) for c in rows["cores"].dropna().unique() if int(c) != cores)


def shape_frame(frame: pd.DataFrame, names: Sequence[str], cores: int,
                target: str = "write") -> pd.DataFrame:
    """The rows of ``frame`` at scales other than ``cores`` with ``target``'s time divided by
    the geometric mean of its scale's times, and ``cores`` set to ``cores`` (so the model
    fitted on them has no ``cores`` term and predicts at the target scale directly).

    Rows without settings (default runs) are dropped; a scale with a single measured row
    carries no shape and is dropped too.
    """
    column = target_column(target)
    rows = with_settings(timed_rows(frame, target), names)
    rows = rows[rows["cores"] != cores].copy()
    logs = rows[column].astype(float).map(np.log)
    centre = logs.groupby(rows["cores"]).transform("mean")
    size = rows.groupby("cores")[column].transform("size")
    rows[column] = np.exp(logs - centre)
    rows["cores"] = cores
    return rows[size.to_numpy() > 1]


def held_out_concordance(frame: pd.DataFrame, names: Sequence[str], cores: int,
                         target: str, *, members: int, max_terms: int, seed: int
                         ) -> list[float]:
    """How well the trained scales predict each other: for every trained scale (when there
    are two or more), the shape model fitted on the *other* trained scales orders that
    scale's measured configurations; the result is each held-out scale's pairwise
    concordance (the share of pairs of configurations put in the right order, ``(1 + tau)
    / 2`` with Kendall's tau; 0.5 is chance). Scales with fewer than ``MIN_PAIRS``
    configurations, or where no model can be fitted, are skipped."""
    from scipy.stats import kendalltau

    from iotune.strategies.surrogate import bootstrap_forecast

    column = target_column(target)
    scales = training_scales(frame, names, cores)
    out = []
    rows = with_settings(timed_rows(frame, target), names)
    for scale in scales if len(scales) > 1 else []:
        held = rows[rows["cores"] == scale]
        others = shape_frame(frame[frame["cores"] != scale], names, cores, target)
        if len(held) < MIN_PAIRS:
            continue
        candidates = held[[n for n in names if n in held.columns]].copy()
        candidates["cores"] = cores
        forecast = bootstrap_forecast(others, candidates, names, members=members,
                                      max_terms=max_terms, seed=seed, target=target)
        if forecast is None:
            continue
        tau = float(kendalltau(forecast.log_mean, held[column].astype(float)).statistic)
        if not np.isnan(tau):
            out.append((1.0 + tau) / 2.0)
    return out


def concordance(predicted: Sequence[float], measured: Sequence[float], new: int) -> float:
    """The share of the other configurations that ``predicted`` orders correctly against
    configuration ``new`` (by ``measured``); ties in the prediction count half. 0.5 when
    there is nothing to compare with."""
    pairs = [(predicted[new] - predicted[j]) * (measured[new] - measured[j])
             for j in range(len(measured)) if j != new]
    if not pairs:
        return 0.5
    return float(sum(1.0 if x > 0 else 0.5 if x == 0 else 0.0 for x in pairs) / len(pairs))


def agreement(predicted: Sequence[float], measured: Sequence[float]) -> float | None:
    """Spearman rank correlation of ``predicted`` and ``measured`` times of the same
    configurations; None with fewer than ``MIN_PAIRS`` pairs or no variation on a side."""
    from scipy.stats import spearmanr

    if len(predicted) < MIN_PAIRS or len(set(predicted)) < 2 or len(set(measured)) < 2:
        return None
    rho = float(spearmanr(predicted, measured).statistic)
    return None if np.isnan(rho) else rho


def misleads(rho: float | None) -> bool:
    """Whether a measured agreement says the training scales mislead."""
    return rho is not None and rho <= MISLEADING_CORRELATION
