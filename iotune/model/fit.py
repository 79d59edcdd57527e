"""``fit_model``: checks the data, selects the terms, completes them, fits the coefficients."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from iotune.errors import ConfigError, DataError
from iotune.model.categorical import indicator_masks, level_strings, spec_from_data
from iotune.model.crossval import assign_folds, configuration_ids, cv_relative_error
from iotune.model.data import (
    check_not_constant,
    parameter_values,
    require_columns,
    row_weights,
    target_values,
)
from iotune.model.model import Completion, FitSettings, FitStats, Model, Step
from iotune.model.monotone import complete
from iotune.model.selection import STOP_RULES, GreedySelector, Pick, forward_select
from iotune.model.terms import Indicator, Term, candidate_matrix, evaluate_term, exponent_grid

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

#: Largest candidate matrix (rows x 3^n x (1 + levels), float64) fit_model will build.
MAX_CANDIDATE_BYTES = 4 * 2**30


def _check_options(params: Sequence[str], target: str, categorical: Sequence[str],
                   actionable: Sequence[str], max_terms: int, stop: str, min_gain: float,
                   cv_folds: int) -> None:
    names = [*params, *categorical]
    if not names:
        raise ConfigError("params: at least one parameter is needed")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"params: {', '.join(duplicates)} given twice (a column is either a "
                          "numeric parameter or a categorical one, once)")
    if target in names:
        raise ConfigError(f"target: {target!r} is also a parameter")
    unknown = [a for a in actionable if a not in names]
    if unknown:
        raise ConfigError(f"actionable: {', '.join(unknown)} not among the parameters "
                          f"({', '.join(names)})")
    if max_terms < 1:
        raise ConfigError(f"max_terms: {max_terms} is not a positive integer")
    if stop not in STOP_RULES:
        raise ConfigError(f"stop: {stop!r} is not one of {', '.join(STOP_RULES)}")
    if not 0 <= min_gain < 1:
        raise ConfigError(f"min_gain: {min_gain} must satisfy 0 <= min_gain < 1")
    if cv_folds < 2:
        raise ConfigError(f"cv_folds: {cv_folds} must be at least 2")


#: Terms chosen by greedy selection unless asked otherwise: the paper's models have at most
#: seven, which its 60-70 training runs per scale support with room to spare.
MAX_TERMS = 7
#: ``stop="threshold"`` or ``"cv"``: the fraction by which the next term must lower the
#: error to be added (1%: below that a term fits noise more than the landscape).
MIN_GAIN = 0.01
#: ``stop="cv"``: folds of the cross-validated error (5, the usual bias/variance balance).
CV_FOLDS = 5


def fit_model(df: pd.DataFrame, params: Sequence[str], target: str, *,
              max_terms: int = MAX_TERMS,
              actionable: Sequence[str] | None = None,
              categorical: Sequence[str] | None = None, monotone_completion: bool = True,
              stop: str = "terms", min_gain: float = MIN_GAIN, cv_folds: int = CV_FOLDS,
              seed: int = 0, interactions: bool = True,
              weights: Sequence[float] | np.ndarray | None = None) -> Model:
    """Fit the paper's empirical model of ``target`` over the numeric ``params``.

    Candidates are ``prod_i x_i^p_i``, ``p_i in {-1, 0, 1}`` (the intercept included), and,
    per level of each ``categorical`` column, the same terms times the level's indicator.
    Terms are added greedily, each time the one whose OLS fit (eq. 2) gives the smallest
    relative error ``sum(((m - y)/y)^2)`` (eq. 4), until ``max_terms``, until no candidate
    is left outside the basis's span, until the fit is exact to rounding, or
    (``stop="threshold"``) until the best term lowers the relative error by less than the
    fraction ``min_gain``, or (``stop="cv"``) until it lowers the ``cv_folds``-fold
    cross-validated error by less than that fraction.

    With ``monotone_completion``, each ``actionable`` parameter (default: all ``params``)
    in which the basis is monotone for every coefficient sign gets the best term with the
    opposite exponent sign for it (see :mod:`iotune.model.monotone`); these terms come on
    top of ``max_terms``.

    Without ``interactions``, a categorical level may only shift the model (the indicator
    times the intercept), not change the other terms: far fewer candidates, for fits on a
    few dozen noisy runs where per-level copies of every term would fit the noise.

    Rows are measurements: replicates of one configuration are separate rows, and are
    kept in one fold in cross-validation (folds drawn with ``seed``). With ``weights``
    (positive, one per row, e.g. the runs each row of
    :func:`iotune.model.from_measurements.aggregate_runs` stands for), least squares
    minimises ``sum(w (m - y)^2)`` and the relative error is ``sum(w ((m - y)/y)^2)``:
    a row of weight ``k`` counts exactly as ``k`` copies of it, and ``stats.rows`` is the
    total weight (the measurements the rows stand for). ``None`` weighs every row 1.

    Raises DataError for a missing column, a non-positive or missing target, a
    non-numeric, missing or non-positive parameter value, a constant column, fewer
    rows than ``max_terms``, or weights that are not one positive number per row;
    ConfigError for inconsistent options.
    """
    params = list(params)
    categorical = list(categorical or [])
    actionable = list(params if actionable is None else actionable)
    _check_options(params, target, categorical, actionable, max_terms, stop, min_gain, cv_folds)
    y, values, levels = _training_arrays(df, params, target, categorical, max_terms)
    w = None if weights is None else row_weights(weights, df.index)
    specs = [spec_from_data(c, levels[c]) for c in categorical]
    families: list[Indicator] = [(s.column, level) for s in specs for level in s.levels]
    _check_size(len(params), len(families), len(y))
    masks = [m for s in specs for m in indicator_masks(s, levels[s.column])]

    matrix = candidate_matrix(values, masks)
    grid = exponent_grid(len(params))
    exponents = np.tile(grid, (1 + len(families), 1))
    blocks = np.repeat(np.arange(1 + len(families)), len(grid))
    if not interactions:
        keep = (blocks == 0) | ~exponents.any(axis=1)
        matrix, exponents, blocks = matrix[:, keep], exponents[keep], blocks[keep]
    selector = GreedySelector(matrix, y, w)

    config = configuration_ids([*values.T, *levels.values()])
    folds = assign_folds(config, cv_folds, seed)

    def cv_of(indices: list[int]) -> float | None:
        return (None if folds is None
                else cv_relative_error(selector.columns(indices), y, folds, w))

    picks, reason = forward_select(selector, max_terms=max_terms, stop=stop,
                                   min_gain=min_gain, cv_error=cv_of)
    added, notes = complete(selector, exponents, blocks, families, specs, params, actionable,
                            monotone_completion)
    picks += added

    def term_of(index: int) -> Term:
        block = int(blocks[index])
        return Term(tuple(int(e) for e in exponents[index]),
                    families[block - 1] if block else None)

    terms = [term_of(p.index) for p in picks]
    masks_by_family = dict(zip(families, masks, strict=True))
    coefficients, design = _least_squares(terms, values, masks_by_family, y, w)
    model = Model(
        params=tuple(params),
        target=target,
        terms=tuple(terms),
        coefficients=tuple(float(c) for c in coefficients),
        categorical=tuple(specs),
        actionable=tuple(actionable),
        steps=tuple(_step(p, term_of(p.index)) for p in picks),
        completion=tuple(Completion(n.parameter, n.status,
                                    None if n.index is None else term_of(n.index), n.where)
                         for n in notes),
        settings=FitSettings(max_terms, stop, float(min_gain), cv_folds, seed,
                             monotone_completion),
    )
    relative = (model.evaluate_arrays(values, masks_by_family) - y) / y
    stats = FitStats(
        rows=len(y) if w is None else _total(w),
        configurations=int(config.max()) + 1,
        relative_error=float(relative @ (relative if w is None else w * relative)),
        cv_error=(None if folds is None or not terms
                  else cv_relative_error(design, y, folds, w)),
        cv_folds=None if folds is None else int(folds.max()) + 1,
        stop_reason=reason,
    )
    return replace(model, stats=stats)


def _training_arrays(df: pd.DataFrame, params: Sequence[str], target: str,
                     categorical: Sequence[str], max_terms: int,
                     ) -> tuple[np.ndarray, np.ndarray, dict[str, np.ndarray]]:
    """Targets, parameter values and categorical levels, or the DataError that explains
    why ``df`` cannot be fitted."""
    require_columns(df, [*params, *categorical, target])
    if len(df) == 0:
        raise DataError("the data has no rows")
    y = target_values(df, target)
    values = parameter_values(
        df, params, {p: f"candidate terms with {p}^-1 need positive values" for p in params})
    check_not_constant(values, params)
    if len(df) < max_terms:
        raise DataError(f"{len(df)} rows are fewer than the {max_terms} terms asked for "
                        "(max_terms): least squares needs at least one row per term; add "
                        "measurements or lower max_terms")
    return y, values, {c: level_strings(df[c]) for c in categorical}


def _total(weights: np.ndarray) -> float:
    """The total weight, as an int when it is one (the usual case: run counts)."""
    total = float(np.sum(weights))
    return int(total) if total.is_integer() else total


def _check_size(n_params: int, n_levels: int, rows: int) -> None:
    candidates = 3**n_params * (1 + n_levels)
    size = 8 * candidates * rows
    if size > MAX_CANDIDATE_BYTES:
        raise ConfigError(
            f"params: {n_params} parameters and {n_levels} categorical levels give "
            f"{candidates} candidate terms, which over {rows} rows need {size / 2**30:.1f} "
            f"GiB (limit {MAX_CANDIDATE_BYTES / 2**30:.0f} GiB); use fewer parameters or rows")


def _step(pick: Pick, term: Term) -> Step:
    return Step(term, pick.relative_error, pick.by_completion, pick.cv_error)


def _least_squares(terms: Sequence[Term], values: np.ndarray,
                   masks: dict[Indicator, np.ndarray], y: np.ndarray,
                   weights: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """OLS coefficients (eq. 2) of ``terms``, solved on norm-scaled columns for conditioning;
    with ``weights``, weighted least squares (``sum(w (m - y)^2)``).

    Returns the coefficients and the scaled design matrix (of the unweighted rows).
    """
    if not terms:
        return np.zeros(0), np.empty((len(y), 0))
    design = np.column_stack([
        evaluate_term(t, values, None if t.indicator is None else masks[t.indicator])
        for t in terms])
    if weights is None:
        norms = np.linalg.norm(design, axis=0)
        design /= norms
        scaled = np.linalg.lstsq(design, y, rcond=None)[0]
        return scaled / norms, design
    root = np.sqrt(weights)
    weighted = design * root[:, None]
    norms = np.linalg.norm(weighted, axis=0)
    weighted /= norms
    design /= norms
    scaled = np.linalg.lstsq(weighted, y * root, rcond=None)[0]
    return scaled / norms, design

