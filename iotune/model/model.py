"""A fitted performance model: terms, coefficients, how it was chosen, and prediction.

The model file (its plain data and YAML) is :mod:`iotune.model.io`, which builds on this
module.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from iotune.model.categorical import CategoricalSpec, check_known, level_strings
from iotune.model.data import parameter_values, require_columns
from iotune.model.terms import Term, evaluate_term
from iotune.model.unset import Encoding, apply_unset

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Step:
    """One step of the selection history: the term added and the errors after it.

    ``relative_error`` is eq. 4 on the training rows; ``cv_error`` the cross-validated
    relative error when the ``cv`` stopping rule computed it; ``by_completion`` marks a
    term added by monotonicity completion rather than by the greedy selection.
    """

    term: Term
    relative_error: float
    by_completion: bool = False
    cv_error: float | None = None


@dataclass(frozen=True)
class Completion:
    """What monotonicity completion found for one actionable parameter.

    ``where`` is the level combination of the categorical columns (empty without them);
    ``term`` is the term added when ``status == "completed"``.
    """

    parameter: str
    status: str
    term: Term | None = None
    where: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class FitStats:
    """Fit statistics. Errors are sums over rows of ``((m - y)/y)^2`` (eq. 4).

    ``rows`` is the number of measurements fitted: the rows, or for a weighted fit their
    total weight (each row weighted by the runs it stands for, errors weighted alike), so
    RMS errors (``error / rows``) mean the same either way.
    """

    rows: float  # an int, except for a weighted fit with non-integral weights
    configurations: int
    relative_error: float
    cv_error: float | None
    cv_folds: int | None
    stop_reason: str

    @property
    def rms_relative_error(self) -> float:
        return math.sqrt(self.relative_error / self.rows)

    @property
    def cv_rms_relative_error(self) -> float | None:
        return None if self.cv_error is None else math.sqrt(self.cv_error / self.rows)


@dataclass(frozen=True)
class FitSettings:
    """The options the model was fitted with (see :func:`iotune.model.fit_model`)."""

    max_terms: int
    stop: str
    min_gain: float
    cv_folds: int
    seed: int
    monotone_completion: bool


@dataclass(frozen=True)
class Model:
    """``m(x) = sum_k coefficients[k] * terms[k](x)``; the target is predicted in its units.

    ``terms`` are in the order they were added, so ``steps[k].term == terms[k]``.
    """

    params: tuple[str, ...]
    target: str
    terms: tuple[Term, ...]
    coefficients: tuple[float, ...]
    categorical: tuple[CategoricalSpec, ...] = ()
    actionable: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    completion: tuple[Completion, ...] = ()
    stats: FitStats | None = None
    settings: FitSettings | None = None
    source: dict[str, str] | None = None
    #: Columns some training rows left unset and how they are encoded
    #: (:mod:`iotune.model.unset`); predictions apply the same encoding.
    unset: Encoding = ()

    @property
    def training_error(self) -> float | None:
        """Relative error (eq. 4) on the training rows."""
        return None if self.stats is None else self.stats.relative_error

    @property
    def cv_error(self) -> float | None:
        """k-fold cross-validated relative error of the final basis (None if impossible)."""
        return None if self.stats is None else self.stats.cv_error

    def term_names(self) -> list[str]:
        return [term.name(self.params) for term in self.terms]

    def formula(self, digits: int = 4) -> str:
        """The model in the paper's notation, e.g. ``m = -20.65 + 0.11 f + 4.17 f/a``.

        The intercept comes first, then the other terms in the order they were added;
        coefficients are rounded to ``digits`` significant digits (the file keeps them all).
        """
        pairs = sorted(zip(self.terms, self.coefficients, strict=True),
                       key=lambda pair: not pair[0].is_intercept)
        parts: list[str] = []
        for term, coef in pairs:
            number = f"{abs(coef):.{digits}g}"
            body = number if term.is_intercept else f"{number} {term.name(self.params)}"
            if not parts:
                parts.append(f"-{body}" if coef < 0 else body)
            else:
                parts.append(f"{'-' if coef < 0 else '+'} {body}")
        return "m = " + (" ".join(parts) if parts else "0")

    def predict(self, df: pd.DataFrame, unseen_levels: str = "error") -> np.ndarray:
        """Predicted target for every row of ``df`` (float64, in row order).

        ``df`` needs the parameters and categorical columns the terms use. DataError for a
        missing column, a non-numeric or non-finite value, a non-positive value of a
        parameter some term divides by, or (``unseen_levels="error"``) a categorical level
        unseen in training. With ``unseen_levels="shared"`` such a row gets no per-level
        term, only the shared ones (a search's surrogate fitted on a resample that missed a
        level still ranks every candidate). A column in :attr:`unset` may be missing or
        unset (NaN) on any row: such rows are encoded as the training rows were.
        """
        if self.unset:  # encode only the columns read: ``df`` may be a wide frame
            wanted = {*self.params, *(s.column for s in self.categorical),
                      *(c for c, _ in self.unset)}
            df = apply_unset(df[[c for c in df.columns if c in wanted]], self.unset)
        used = [p for j, p in enumerate(self.params) if any(t.exponents[j] for t in self.terms)]
        columns = {t.indicator[0] for t in self.terms if t.indicator is not None}
        require_columns(df, [*used, *sorted(columns)])
        inverted: dict[str, str] = {}
        for term in self.terms:
            for j, e in enumerate(term.exponents):
                if e < 0:
                    inverted.setdefault(self.params[j],
                                        f"term {term.name(self.params)} needs positive values")
        values = np.zeros((len(df), len(self.params)))
        if used:
            values[:, [self.params.index(p) for p in used]] = parameter_values(df, used, inverted)
        masks: dict[tuple[str, str], np.ndarray] = {}
        for spec in self.categorical:
            if spec.column not in columns:
                continue
            levels = level_strings(df[spec.column])
            if unseen_levels == "error":
                check_known(spec, levels, df.index)
            for level in spec.levels:
                masks[(spec.column, level)] = (levels == level).astype(float)
        return self.evaluate_arrays(values, masks)

    def evaluate_arrays(self, values: np.ndarray,
                        masks: Mapping[tuple[str, str], np.ndarray]) -> np.ndarray:
        """The model on checked arrays: ``values`` is ``(rows, len(params))`` and ``masks``
        maps each indicator ``(column, level)`` a term uses to its 0/1 row mask."""
        # A fixed order of operations, so predictions are reproducible bit for bit.
        out = np.zeros(values.shape[0])
        for term, coef in zip(self.terms, self.coefficients, strict=True):
            mask = None if term.indicator is None else masks[term.indicator]
            out += coef * evaluate_term(term, values, mask)
        return out
