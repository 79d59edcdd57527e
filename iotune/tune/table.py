"""The rows of a tune's results table, one estimate per row.

Every row's figure and interval are the same estimate, the one the race ranks by
(:attr:`iotune.tune.result.TuneResult.estimates`), shown in the metric's unit; rows are in
its order, so the first row is the best found. The default is a row like the others.
Configurations that ran identically are one row naming each (:mod:`iotune.tune.identical`).
A prediction the model cannot make (a time of zero or less) is not shown; the rows say
how far the shown predictions are from the estimates, beside the model's own
cross-validated error, since the two measure different things (:func:`prediction_errors`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from iotune.model.trust import NO_PREDICTION, possible
from iotune.settings.values import describe_value
from iotune.strategies.base import Evaluation
from iotune.tune.merged import members
from iotune.tune.result import TuneResult


@dataclass(frozen=True)
class Row:
    """One configuration (or several that ran identically) with its estimate in the
    metric's unit: ``value`` and ``interval`` (None: unbounded), the runs, and the model's
    ``predicted`` figure (None: no prediction; :data:`NO_PREDICTION` when the model
    predicted a time of zero or less)."""

    evaluation: Evaluation
    settings: str
    value: float | None
    interval: tuple[float, float] | None
    runs: int
    failed: int
    predicted: float | str | None
    is_default: bool
    is_best: bool


def table_rows(result: TuneResult, limit: int | None = None) -> list[Row]:
    """The rows of ``result``, best first by the race's estimate (at most ``limit``,
    keeping the default's row when it falls below)."""
    metric = result.metric
    rows = []
    for evaluation in result.ranked():
        found = result.estimates.get(evaluation.key)
        value = None if found is None else metric.shown(found.time_s)
        interval = None if found is None else found.shown_interval(metric)
        rows.append(Row(
            evaluation, settings_text(evaluation), value, interval, len(evaluation.times),
            len(evaluation.failures), _predicted(result, evaluation),
            evaluation is result.default,
            result.best is not None and evaluation.key == result.best.key))
    if limit is not None and len(rows) > limit:
        kept = rows[:limit]
        if not any(r.is_default for r in kept):
            kept.append(next(r for r in rows if r.is_default))
        rows = kept
    return rows


def settings_text(evaluation: Evaluation) -> str:
    """``name=value`` words of a configuration, ``default`` for none; for configurations
    that ran identically each setting they differ in as ``name=a|b``."""
    group = members(evaluation)
    if not evaluation.settings and len(group) == 1:
        return "default"
    names = list(dict.fromkeys(n for e in group for n in e.settings))
    words = []
    for name in names:
        values = list(dict.fromkeys(
            describe_value(name, e.settings[name]) if name in e.settings else "unset"
            for e in group))
        words.append(f"{name}={'|'.join(str(v) for v in values)}")
    return " ".join(words)


def _predicted(result: TuneResult, evaluation: Evaluation) -> float | str | None:
    if evaluation.predicted is None:
        return None
    if not possible(evaluation.predicted):
        return NO_PREDICTION
    return result.metric.shown(evaluation.predicted)


@dataclass(frozen=True)
class PredictionErrors:
    """How far the shown predictions are from the rows' estimates (RMS of the relative
    error of the minimised figure, as the model's own errors are), over ``rows``;
    ``impossible`` predictions (zero or less) are counted apart. ``cv`` is the model's
    cross-validated error on its ``training_rows``."""

    shown: float | None
    rows: int
    impossible: int
    cv: float | None
    training_rows: int | None


def prediction_errors(result: TuneResult, rows: Sequence[Row]) -> PredictionErrors:
    """The shown predictions' error against the estimates, beside the model's CV error.

    They differ by design: each prediction was made when the search chose the configuration,
    by the model of that moment (before the configuration's own runs), while the CV error
    is the final model's, on every row it was fitted on (all scales of the training data
    and this search), with its terms chosen on all of them, which makes it optimistic."""
    errors, impossible = [], 0
    for row in rows:
        predicted, found = row.evaluation.predicted, result.estimates.get(row.evaluation.key)
        if predicted is None or found is None:
            continue
        if row.predicted == NO_PREDICTION:
            impossible += 1
            continue
        errors.append((predicted - found.time_s) / found.time_s)
    stats = result.model.stats if result.model is not None else None
    return PredictionErrors(
        math.sqrt(sum(e * e for e in errors) / len(errors)) if errors else None,
        len(errors), impossible,
        None if stats is None else stats.cv_rms_relative_error,
        None if stats is None else stats.rows)


def row_document(result: TuneResult, row: Row) -> dict[str, Any]:
    """A row as JSON and YAML output hold it (in the metric's unit)."""
    unit = result.metric.unit
    out: dict[str, Any] = {
        "settings": row.settings, "default": row.is_default, "best_found": row.is_best,
        f"estimate_{_unit_key(unit)}": None if row.value is None else round(row.value, 6),
        f"interval_{_unit_key(unit)}": (None if row.interval is None
                                        else [round(v, 6) for v in row.interval]),
        "runs": row.runs, "failed_runs": row.failed}
    if len(members(row.evaluation)) > 1:
        out["ran_identically"] = [dict(e.settings) for e in members(row.evaluation)]
    if row.predicted is not None:
        out[f"predicted_{_unit_key(unit)}"] = (
            None if isinstance(row.predicted, str) else round(row.predicted, 6))
    return out


def _unit_key(unit: str) -> str:
    """A unit as a key's suffix: ``s`` or ``mib_s``."""
    return unit.lower().replace("/", "_")
