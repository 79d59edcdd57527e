"""The model behind the report's predictions, refitted from the store.

Which model: the tuned YAML records the formula with coefficients rounded to four digits
and no exponent vectors, so it cannot be rebuilt exactly. The report therefore refits the
model with :func:`iotune.model.from_measurements.fit_for_space` on the dataset's training
measurements (campaign ``train``, every scale), folded into one row per configuration and
scale weighted by its runs (as the tune fits it, so a store of many repetitions costs what
its configurations cost), with the model strategy's ``max_terms`` and ``seed`` as the
config sets them (``tune.options.model``, ``tune.max_terms``,
``tune.seed``; the strategy's defaults without a config). That is the model of the pruning
step of ``iotune tune``: its predictions at the tuned scale were not fitted on the tune
measurements they are compared with. Without training data it is fitted on the tune
measurements (stated on the page).

The search space comes from the config when its kernel is the report's; otherwise it is
rebuilt from the settings found in the data.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from iotune.config import Config, TuneConfig
from iotune.errors import ConfigError, DataError
from iotune.model import Model
from iotune.model.from_measurements import fit_for_space
from iotune.model.trust import error_label, prediction_warning
from iotune.report.data import Dataset, is_setting_column
from iotune.settings.space import Limits, SearchSpace, is_valid
from iotune.settings.values import SETTINGS
from iotune.strategies.base import make_strategy, resolve_options
from iotune.strategies.model_guided import ModelGuided

#: Rows predicted at a time: the model's arrays for 10^5 runs cost tens of MB at once.
PREDICT_CHUNK = 20_000


@dataclass
class ModelView:
    """The refitted model of one dataset, or why there is none.

    ``basis`` says what it was fitted on; ``frame`` is the dataset's frame with a
    ``predicted`` column (NaN where the model cannot predict, e.g. default runs).
    """

    model: Model | None
    basis: str
    note: str | None
    space: SearchSpace
    frame: pd.DataFrame

    def without_rows(self) -> ModelView:
        """This view without its frame's rows (once the report drew and tabled them)."""
        return dataclasses.replace(self, frame=self.frame.iloc[0:0])

    @property
    def cv_error(self) -> float | None:
        """The model's cross-validated RMS relative error; None without a model or an error."""
        stats = self.model.stats if self.model is not None else None
        return stats.cv_rms_relative_error if stats is not None else None

    @property
    def error_label(self) -> str | None:
        """What is shown beside the model's predictions (see :mod:`iotune.model.trust`)."""
        return error_label(self.cv_error) if self.model is not None else None

    @property
    def warning(self) -> str | None:
        """One line when the predictions are not to be trusted; None when they are or
        when there is no model."""
        return prediction_warning(self.cv_error) if self.model is not None else None

    @property
    def used_columns(self) -> list[str]:
        """Numeric parameters and categorical columns the model's terms use."""
        if self.model is None:
            return []
        used = [p for j, p in enumerate(self.model.params)
                if any(t.exponents[j] for t in self.model.terms)]
        used += [t.indicator[0] for t in self.model.terms if t.indicator is not None]
        return list(dict.fromkeys(used))


def space_for(dataset: Dataset, config: Config | None) -> SearchSpace:
    """The config's space when it is for this kernel, else one rebuilt from the data."""
    if config is not None and config.kernel.name == dataset.provenance.kernel \
            and config.space.names:
        return config.space
    values = []
    for column in dataset.setting_columns():
        seen = [v for v in dataset.frame[column].dropna().unique().tolist()]
        values.append((column, tuple(sorted(seen, key=_sort_key))))
    return SearchSpace(tuple(values))


def _sort_key(value: Any) -> tuple[int, float, str]:
    if isinstance(value, bool):
        return (1, float(value), "")
    if isinstance(value, int | float):
        return (0, float(value), "")
    return (2, 0.0, str(value))


def fit_view(dataset: Dataset, config: Config | None) -> ModelView:
    """Refit the dataset's model and predict every row (see the module docstring)."""
    space = space_for(dataset, config)
    options = resolve_options(config.tune if config is not None else TuneConfig(), "model")
    strategy = make_strategy("model", **options)
    assert isinstance(strategy, ModelGuided)
    max_terms, seed = strategy.max_terms(), int(strategy.values["seed"])
    frame = dataset.frame.copy(deep=False)  # its own "predicted" column, the data shared
    # Only the columns the fit reads: the rows of a big store are copied while fitting.
    fitted = [c for c in (*space.names, "cores", "write_time") if c in frame.columns]
    campaign = frame["campaign"]
    train = frame.loc[campaign == "train", fitted]
    basis = f"{len(train)} training measurements (campaign train)"
    if train.empty:
        train = frame.loc[campaign == "tune", fitted]
        basis = (f"{len(train)} tune measurements (the store has no training data for this "
                 "kernel and backend, so the fit is in-sample)")
    frame["predicted"] = np.nan
    try:
        model = fit_for_space(train, space, max_terms, seed, aggregate=True)
    except (DataError, ConfigError) as exc:
        return ModelView(None, basis, f"no model: {exc}", space, frame)
    frame["predicted"] = predict_rows(model, frame)
    return ModelView(model, basis, None, space, frame)


def model_input(model: Model, frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with the model's categorical columns as level text, as in training."""
    out = frame.copy()
    for spec in model.categorical:
        if spec.column in out.columns:
            column = out[spec.column]
            out[spec.column] = column.where(column.isna(), column.astype(str))
    return out


def predict_rows(model: Model, frame: pd.DataFrame) -> np.ndarray:
    """The model's prediction for each row of ``frame``; NaN where it cannot predict
    (a column missing or empty on that row, an unseen categorical level)."""
    out = np.full(len(frame), np.nan)
    needed = [c for c in (*model.params, *(s.column for s in model.categorical))
              if _uses(model, c)]
    if any(c not in frame.columns for c in needed):
        return out
    usable = frame[needed].notna().all(axis=1).to_numpy() if needed else np.ones(len(frame),
                                                                                  bool)
    if not usable.any():
        return out
    positions = np.flatnonzero(usable)
    for start in range(0, len(positions), PREDICT_CHUNK):
        chunk = positions[start:start + PREDICT_CHUNK]
        subset = model_input(model, frame.iloc[chunk][needed])
        try:
            out[chunk] = model.predict(subset)
        except DataError:  # one bad row: predict row by row and leave the bad ones out
            for k, position in enumerate(chunk):
                try:
                    out[position] = model.predict(subset.iloc[k : k + 1])[0]
                except DataError:
                    continue
    return out


def _uses(model: Model, column: str) -> bool:
    if column in model.params:
        j = model.params.index(column)
        return any(t.exponents[j] for t in model.terms)
    return any(t.indicator is not None and t.indicator[0] == column for t in model.terms)


def predict_settings(view: ModelView, settings: Sequence[Mapping[str, Any]], cores: int,
                     ) -> list[float | None]:
    """Predicted write time of each configuration at ``cores`` ranks (None: cannot)."""
    if view.model is None or not settings:
        return [None] * len(settings)
    frame = pd.DataFrame([{**s, "cores": cores} for s in settings])
    values = predict_rows(view.model, frame)
    return [None if np.isnan(v) else float(v) for v in values]


@dataclass
class Effect:
    """Predicted time along one setting with the others held at ``anchor``."""

    setting: str
    values: list[Any]
    predicted: list[float | None]
    anchor_value: Any
    numeric: bool


def parameter_effects(view: ModelView, anchor: Mapping[str, Any], cores: int,
                      limits: Limits | None = None) -> list[Effect]:
    """One :class:`Effect` per setting the model uses, over the space's values.

    ``anchor`` is the tuned configuration; settings it lacks are held at the value most
    common in the training data. ``cores`` is the scale of the prediction; with the
    system's ``limits``, values that break a rule at that scale (more aggregators than
    allowed, a stripe count above the OST count) are left out.
    """
    if view.model is None:
        return []
    base = dict(anchor)
    for column in view.used_columns:
        if column not in base and column in view.frame.columns and column != "cores":
            common = view.frame[column].dropna()
            if not common.empty:
                base[column] = common.mode().iloc[0]
    space = view.space.as_dict()
    effects = []
    for column in view.used_columns:
        if column == "cores" or not is_setting_column(column):
            continue
        values = list(space.get(column) or sorted(view.frame[column].dropna().unique()))
        if limits is not None:
            values = [v for v in values if is_valid({**base, column: v}, cores, limits)]
        sweep = [{**base, column: v} for v in values]
        predicted = predict_settings(view, sweep, cores)
        setting = SETTINGS.get(column)
        effects.append(Effect(column, values, predicted, base.get(column),
                              bool(setting and setting.numeric)))
    return effects


def step_errors(model: Model) -> list[dict[str, Any]]:
    """The selection history: after each term, the RMS relative error (eq. 4 over rows)."""
    rows = model.stats.rows if model.stats else None
    out = []
    for k, step in enumerate(model.steps, start=1):
        rms = float(np.sqrt(step.relative_error / rows)) if rows else None
        cv = (float(np.sqrt(step.cv_error / rows)) if rows and step.cv_error is not None
              else None)
        out.append({"step": k, "term": step.term.name(model.params),
                    "added_by": "completion" if step.by_completion else "selection",
                    "rms_relative_error": rms, "cv_rms_relative_error": cv})
    return out


def term_rows(model: Model) -> list[dict[str, Any]]:
    """The selected terms with coefficients, in the order they were added."""
    history = {k: row for k, row in enumerate(step_errors(model))}
    rows = []
    for k, (term, coef) in enumerate(zip(model.terms, model.coefficients, strict=True)):
        step = history.get(k, {})
        rows.append({"term": term.name(model.params), "coefficient": float(coef),
                     "added_by": step.get("added_by", ""),
                     "rms_relative_error_after": step.get("rms_relative_error")})
    return rows

