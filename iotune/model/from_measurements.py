"""The bridge between measurements and the empirical model: which columns it is fitted on.

Numeric settings (counts and byte sizes) are the model's parameters; choice, boolean and
text settings enter as categorical columns (indicator terms, never ordinal numbers);
``cores`` is added when the training data spans several scales, so the model can be trained
at small scales and asked about a larger one, as in the paper. Rows without any setting
(runs of the default configuration) are dropped *before* deciding what varies: a default run
at the target scale must not make ``cores`` look varied when every row with settings is at
one scale. Settings with a single value in the remaining data carry no information and are
left out.

The time modelled is the tuned target's (:mod:`iotune.store.targets`): the write's
open-to-close time (``write_time``, the default and the paper's), the read's (``read_time``)
or both added (``io_time``). Only rows that timed the target are used, so a store holding
write-only and read runs of a kernel never mixes them in one fit.

A store that has served a year of tuning holds many runs of each configuration.
:func:`aggregate_runs` folds them into one row per configuration and scale, at the
geometric mean of the runs' times and weighted by their number, so a fit costs what the
distinct configurations cost, not what the runs do (``fit_for_settings(aggregate=True)``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from iotune.errors import DataError
from iotune.model.unset import apply_unset, indicators, unset_encoding
from iotune.settings.space import SearchSpace
from iotune.settings.values import SETTINGS
from iotune.store.targets import target_column

if TYPE_CHECKING:
    import pandas as pd

    from iotune.model import Model

#: The column modelled by default (target ``write``).
TARGET = target_column("write")
#: The column of :func:`aggregate_runs` holding how many runs a row stands for.
WEIGHT = "runs"


def timed_rows(frame: pd.DataFrame, target: str = "write") -> pd.DataFrame:
    """The rows of ``frame`` that timed ``target`` (none if the frame lacks its column)."""
    column = target_column(target)
    if column not in frame.columns:
        return frame.iloc[0:0]
    return frame[frame[column].notna()]


def model_view(frame: pd.DataFrame, names: Sequence[str], target: str = "write"
               ) -> pd.DataFrame:
    """Only the columns of ``frame`` a model of ``target`` over ``names`` reads (the
    settings, ``cores``, the target's time): filtering a store's wide frame row by row would
    copy every other column too."""
    wanted = [c for c in dict.fromkeys([*names, "cores", target_column(target)])
              if c in frame.columns]
    return frame[wanted]


def with_settings(frame: pd.DataFrame, names: Sequence[str]) -> pd.DataFrame:
    """The rows of ``frame`` that have at least one of the settings ``names`` (not default runs)."""
    present = [n for n in names if n in frame.columns]
    if not present:
        return frame.iloc[0:0]
    return frame[frame[present].notna().any(axis=1)]


def model_columns(names: Sequence[str], frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """``(numeric params, categorical params)`` to fit on, from setting ``names`` and the data."""
    rows = with_settings(frame, names)
    numeric, categorical = [], []
    for name in names:
        if name not in rows.columns or rows[name].nunique(dropna=True) < 2:
            continue
        setting = SETTINGS.get(name)
        if setting is not None and setting.numeric:
            numeric.append(name)
        else:
            categorical.append(name)
    if "cores" in rows.columns and rows["cores"].nunique() > 1:
        numeric.append("cores")
    return numeric, categorical


def prepare(frame: pd.DataFrame, columns: list[str], target: str = "write") -> pd.DataFrame:
    """Rows with a time for ``target``, a known scale (when ``cores`` is a model column) and
    at least one model setting set (not default runs); a setting a row leaves unset stays
    unset (NaN), a value of its own (:mod:`iotune.model.unset`). Categorical values become
    text."""
    frame = timed_rows(frame, target)
    needed = [c for c in (target_column(target), "cores") if c in columns or c != "cores"]
    usable = frame.dropna(subset=[c for c in needed if c in frame.columns])
    settings = [c for c in columns if c != "cores" and c in usable.columns]
    if settings:
        usable = usable[usable[settings].notna().any(axis=1)]
    usable = usable.copy()
    for name in columns:
        if usable[name].dtype == bool or usable[name].dtype == object:
            usable[name] = usable[name].where(usable[name].isna(), usable[name].astype(str))
    return usable


def aggregate_runs(frame: pd.DataFrame, columns: Sequence[str], target: str = "write", *,
                   weights: str | None = None) -> pd.DataFrame:
    """One row per distinct combination of ``columns`` (the model's columns: settings and
    cores): those columns, ``target``'s time as the geometric mean of the rows' times, and
    :data:`WEIGHT`, the number of runs folded in. Rows in order of first appearance, with a
    fresh index; other columns are dropped.

    A missing value (an unset setting) is a value of its own: such rows group together,
    apart from the set ones. The times must be positive. ``weights`` names a column of
    rows that were aggregated before (each counts that many runs), so aggregating
    aggregates, or the aggregates of parts of a frame, gives the aggregate of the whole.
    Fitting the result with its weights (:func:`iotune.model.fit_model`) is the fit on the
    rows themselves when every configuration's runs agree, and weighs a configuration by
    its runs when they do not.
    """
    import pandas as pd

    keys = list(columns)
    column = target_column(target)
    runs = np.ones(len(frame)) if weights is None else frame[weights].to_numpy(dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):  # fit_model names a bad time
        logs = np.log(frame[column].to_numpy(dtype=float))
    parts = frame[keys].assign(_log=logs * runs, _runs=runs)
    sums = parts.groupby(keys, sort=False, dropna=False)[["_log", "_runs"]].sum()
    counts = sums["_runs"].to_numpy()
    out = sums.index.to_frame(index=False) if keys else pd.DataFrame(index=range(len(sums)))
    out[column] = np.exp(sums["_log"].to_numpy() / counts)
    out[WEIGHT] = counts.astype(np.int64) if np.all(counts == np.round(counts)) else counts
    return out


def fit_for_space(frame: pd.DataFrame, space: SearchSpace, max_terms: int,
                  seed: int = 0, target: str = "write", *, aggregate: bool = False) -> Model:
    """Fit the paper's model of ``target``'s time on ``frame`` over ``space``'s settings
    (on one row per configuration and scale with ``aggregate``, see
    :func:`fit_for_settings`)."""
    return fit_for_settings(frame, space.names, max_terms, seed, target=target,
                            aggregate=aggregate)


def fit_for_settings(frame: pd.DataFrame, names: Sequence[str], max_terms: int,
                     seed: int = 0, *, configurations_per_term: int = 1,
                     monotone_completion: bool = True, interactions: bool = True,
                     target: str = "write", aggregate: bool = False,
                     weights: str | None = None) -> Model:
    """Fit the paper's model of ``target``'s time (write by default) on ``frame`` over the
    settings ``names``, from the rows that timed it.

    ``max_terms`` is lowered to what the number of distinct configurations can support: one
    term fewer than there are configurations, and at most one term per
    ``configurations_per_term`` of them. Raises DataError when the data cannot support any
    model.

    ``weights`` names a column of ``frame`` holding how many runs each row stands for (rows
    aggregated before, as :func:`aggregate_runs` makes them); the fit is then weighted by
    it. With ``aggregate``, the usable rows are first folded into one row per configuration
    and scale (:func:`aggregate_runs`, counting ``weights``): the same model when a
    configuration's runs agree, at a cost that grows with the configurations, not the runs.
    Either way the measurements counted (at least 3, and ``stats.rows``) are the runs.
    """
    from iotune.model import fit_model

    frame = timed_rows(frame, target)
    numeric, categorical = model_columns(names, frame)
    if not numeric:
        raise DataError("no numeric setting varies in the training data; the model needs at "
                        "least one (add values to the space and train again)")
    columns = numeric + categorical
    data = prepare(frame, columns, target)
    if aggregate:
        data = aggregate_runs(data, columns, target, weights=weights)
        weights = WEIGHT
    unset = unset_encoding(data, numeric, categorical)
    categorical = [*categorical, *indicators(unset, data)]
    data = apply_unset(data, unset)
    runs = len(data) if weights is None else float(data[weights].sum())
    configurations = len(data.drop_duplicates(subset=columns))
    terms = max(1, min(max_terms, configurations - 1, len(data) - 1,
                       configurations // configurations_per_term))
    if runs < 3:
        raise DataError(f"only {runs:g} usable training measurement(s); the model needs at "
                        "least 3 (run 'iotune train' first)")
    actionable = [n for n in numeric if n != "cores"]
    model = fit_model(data, numeric, target_column(target), max_terms=terms,
                      actionable=actionable, categorical=categorical, seed=seed,
                      monotone_completion=monotone_completion, interactions=interactions,
                      weights=None if weights is None else data[weights].to_numpy(dtype=float))
    return dataclasses.replace(model, unset=unset)
