from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from model_data import grid_frame

from iotune.errors import ConfigError
from iotune.model import fit_model

PARAMS = ["c", "s", "a"]
TRUE_TERMS = {(0, 0, 0), (-1, 0, 0), (1, 1, -1)}  # 3 + 50/c + 0.2 cs/a


def noisy_frame(noise: float = 0.01, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = grid_frame("csa", [[1, 2, 4, 8, 16, 32], [1, 2, 4, 8, 16, 32], [4, 8, 16, 32]])
    df["t"] = (3 + 50 / df.c + 0.2 * df.c * df.s / df.a) * rng.lognormal(0, noise, len(df))
    return df


def test_default_is_the_papers_term_limit() -> None:
    model = fit_model(noisy_frame(), PARAMS, "t", monotone_completion=False)
    assert model.settings is not None and model.stats is not None
    assert model.settings.stop == "terms"
    assert len(model.terms) == 7
    assert model.stats.stop_reason == "term limit (7)"


@pytest.mark.parametrize("min_gain", [0.01, 0.05])
def test_threshold_keeps_only_terms_that_gain_min_gain(min_gain: float) -> None:
    df = noisy_frame()
    model = fit_model(df, PARAMS, "t", max_terms=12, stop="threshold", min_gain=min_gain,
                      monotone_completion=False)
    k = len(model.terms)
    assert 3 <= k < 12
    assert model.stats is not None and model.stats.stop_reason.startswith("negligible gain")
    assert model.steps  # else the pairs below are none and every check passes
    errors = [float(len(df))] + [step.relative_error for step in model.steps]
    assert all((before - after) / before >= min_gain
               for before, after in itertools.pairwise(errors))
    # The term the rule refused is the one plain selection would add next.
    longer = fit_model(df, PARAMS, "t", max_terms=k + 1, monotone_completion=False)
    assert longer.terms[:k] == model.terms
    assert (errors[-1] - longer.steps[-1].relative_error) / errors[-1] < min_gain


def test_threshold_at_five_percent_finds_the_true_terms_in_noisy_data() -> None:
    model = fit_model(noisy_frame(), PARAMS, "t", max_terms=12, stop="threshold",
                      min_gain=0.05, monotone_completion=False)
    assert {t.exponents for t in model.terms} == TRUE_TERMS


def test_cv_stops_when_the_cross_validated_error_no_longer_falls() -> None:
    df = noisy_frame(noise=0.02)
    model = fit_model(df, PARAMS, "t", max_terms=12, stop="cv", monotone_completion=False)
    k = len(model.terms)
    assert 3 <= k < 12
    assert model.stats is not None
    assert model.stats.stop_reason.startswith("cross-validated error stopped falling")
    assert model.steps and all(step.cv_error is not None for step in model.steps)
    cv = [float(len(df))] + [float(step.cv_error or 0) for step in model.steps]
    assert all((b - a) / b >= 0.01 for b, a in itertools.pairwise(cv))
    assert model.cv_error == pytest.approx(cv[-1], rel=1e-9)
    # Plain selection of one more term gives a cross-validated error that did not fall.
    longer = fit_model(df, PARAMS, "t", max_terms=k + 1, monotone_completion=False)
    assert longer.terms[:k] == model.terms
    assert longer.cv_error is not None
    assert longer.cv_error > cv[-1] * (1 - 0.01)
    assert {t.exponents for t in model.terms} >= TRUE_TERMS


def test_an_exact_fit_stops_every_rule() -> None:
    df = noisy_frame(noise=0.0)
    for stop in ("terms", "threshold", "cv"):
        model = fit_model(df, PARAMS, "t", max_terms=7, stop=stop, monotone_completion=False)
        assert {t.exponents for t in model.terms} == TRUE_TERMS, stop
        assert model.stats is not None and model.stats.stop_reason.startswith("exact fit")


def test_unknown_stop_rule_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^stop: 'aic' is not one of terms, threshold, cv$"):
        fit_model(noisy_frame(), PARAMS, "t", stop="aic")
