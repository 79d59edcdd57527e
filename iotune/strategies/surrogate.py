"""The paper's model with an uncertainty: a bootstrap ensemble of the forward selection.

One greedy selection of ``prod x^{-1|0|1}`` terms on a few dozen noisy runs is brittle: a
single lucky draw can pull a term in or out and turn the ranking of the whole space. So the
selection is repeated on ``members`` bootstrap resamples of the measured *configurations*
(all repeats of a configuration stay together, as in the model's cross-validation), each
resample fitted by :func:`iotune.model.from_measurements.fit_for_settings`, and every
candidate is predicted by every member.

The runs are folded first (:func:`iotune.model.from_measurements.aggregate_runs`): one row
per configuration and scale at the geometric mean of its runs, weighted by their number, and
the resamples draw those rows (a configuration drawn twice weighs twice). A store that holds
a year of training runs of the kernel then costs what its distinct configurations cost, not
what its runs do. Members are kept small for the data they see: at
most one term per ``CONFIGURATIONS_PER_TERM`` configurations, and categorical settings enter
as per-level offsets only (no per-level copy of every term); the paper's monotonicity
completion stays, since it is what lets a member put an optimum inside a setting's range
instead of at an edge. The spread of the members' predictions is the doubt about a
candidate: large where the data say little (far from what was measured, or where the
selection is unsure which terms matter), small where the members agree.

Predictions are compared on a log scale (I/O times are positive and their errors
multiplicative). A member's prediction below half the fastest time ever measured is held at
that floor: a linear combination of terms can go to zero or below when it extrapolates,
and such a value says "faster than anything seen", not "infinitely fast".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from iotune.errors import DataError
from iotune.model.from_measurements import (
    WEIGHT,
    aggregate_runs,
    fit_for_settings,
    model_columns,
    model_view,
    prepare,
    timed_rows,
    with_settings,
)
from iotune.store.targets import target_column

if TYPE_CHECKING:
    import pandas as pd

    from iotune.model import Model

#: The fewest distinct configurations the model is fitted on (two terms and a check).
MIN_CONFIGURATIONS = 3
#: A prediction is never taken as faster than this fraction of the fastest measured time.
FLOOR_FRACTION = 0.5
#: Each member has at most one term per this many measured configurations: a fit on a few
#: dozen noisy runs with a term for every two or three of them would fit the noise.
CONFIGURATIONS_PER_TERM = 2


@dataclass(frozen=True)
class Forecast:
    """The members' log predicted times (members x candidates), and per candidate their
    mean and standard deviation."""

    member_logs: np.ndarray

    @property
    def members(self) -> int:
        return int(self.member_logs.shape[0])

    @property
    def log_mean(self) -> np.ndarray:
        return np.asarray(self.member_logs.mean(axis=0))

    @property
    def log_sd(self) -> np.ndarray:
        return np.asarray(self.member_logs.std(axis=0))

    @property
    def time(self) -> np.ndarray:
        """The ensemble's predicted time per candidate (geometric mean of the members)."""
        return np.exp(self.log_mean)


def bootstrap_forecast(frame: pd.DataFrame, candidates: pd.DataFrame, names: Sequence[str],
                       *, members: int, max_terms: int, seed: int, target: str = "write"
                       ) -> Forecast | None:
    """Fit ``members`` models on bootstrap resamples of ``frame``'s configurations and
    predict every row of ``candidates``.

    ``names`` are the settings the model may use; rows of ``frame`` without any (default
    runs) are ignored. Returns None when the data cannot support a model (fewer than three
    configurations, or no numeric setting varies) or no member could be fitted. The time
    modelled is ``target``'s (see :mod:`iotune.model.from_measurements`).

    A configuration's runs enter as one row at their geometric mean, weighted by their
    number: repeating every run of ``frame`` leaves the forecast as it is (to rounding),
    and the cost grows with the configurations measured, not with their runs.
    """
    configs, fastest = _configurations(frame, names, target)
    count = 0 if configs is None else len(configs)
    if configs is None or count < MIN_CONFIGURATIONS:
        return None
    floor = FLOOR_FRACTION * fastest
    runs = configs[WEIGHT].to_numpy()
    rng = np.random.default_rng(seed)
    logs = []
    for member in range(members):
        drawn = np.bincount(rng.integers(count, size=count), minlength=count)
        rows = np.flatnonzero(drawn)
        sample = configs.iloc[rows].assign(**{WEIGHT: runs[rows] * drawn[rows]})
        try:
            model = fit_for_settings(sample, names, max_terms, seed + member,
                                     configurations_per_term=CONFIGURATIONS_PER_TERM,
                                     interactions=False, target=target, weights=WEIGHT)
        except DataError:
            continue  # a resample without variation in any setting: no member from it
        logs.append(np.log(np.maximum(predict_all(model, candidates), floor)))
    if not logs:
        return None
    return Forecast(np.vstack(logs))


def _configurations(frame: pd.DataFrame, names: Sequence[str], target: str,
                    ) -> tuple[pd.DataFrame | None, float]:
    """The usable rows of ``frame`` folded into one per configuration (in order of first
    appearance, each with its runs in :data:`WEIGHT`) and the fastest run's time; None when
    no numeric setting varies."""
    column = target_column(target)
    narrow = timed_rows(model_view(frame, names, target), target)
    numeric, categorical = model_columns(names, narrow)
    if not numeric:
        return None, 0.0
    columns = numeric + categorical
    data = prepare(narrow, columns, target)
    fastest = float(data[column].min()) if len(data) else 0.0
    return aggregate_runs(data, columns, target), fastest


def predict_all(model: Model, candidates: pd.DataFrame) -> np.ndarray:
    """``model``'s prediction for every candidate; a level a resample never saw gets the
    shared terms only."""
    return model.predict(candidates, unseen_levels="shared")


def final_model(frame: pd.DataFrame | None, names: Sequence[str], max_terms: int, seed: int,
                target: str = "write") -> Model | None:
    """The single model on everything measured, for the tune's output and the report
    (predictions, CV error), fitted on one row per configuration weighted by its runs (a
    store may hold many). None when the data has no row with a setting or too little
    variation for a model: the search itself did not need one."""
    if frame is None or frame.empty or with_settings(frame, names).empty:
        return None
    try:
        return fit_for_settings(frame, names, max_terms, seed, target=target, aggregate=True)
    except DataError:
        return None
