from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from model_data import grid_frame

from iotune.errors import DataError
from iotune.model import fit_model

LEVELS = ("enable", "disable", "automatic")


def cb_frame(s: tuple[float, ...] = (1, 2, 4, 8, 16, 32, 64),
             a: tuple[float, ...] = (4, 8, 16, 32, 64)) -> pd.DataFrame:
    """Write time whose shape depends on romio_cb_write (cb): a scale, a term, an offset."""
    df = grid_frame("sa", [s, a])
    df = pd.concat([df.assign(cb=level) for level in LEVELS], ignore_index=True)
    base = 5 + 40 / df.s + 0.3 * df.s
    df["t"] = np.select([df.cb == "enable", df.cb == "disable"],
                        [base, 0.5 * base + 2 * df.a / df.s], base + 3)
    return df


def test_levels_get_indicator_terms_and_each_level_is_fitted() -> None:
    model = fit_model(cb_frame(), ["s", "a"], "t", categorical=["cb"], max_terms=8)
    assert model.categorical[0].levels == ("automatic", "disable", "enable")
    assert any(t.indicator == ("cb", "disable") for t in model.terms)
    assert "[cb=disable]" in model.formula()
    unseen = cb_frame(s=(3, 24, 48), a=(6, 40))
    np.testing.assert_allclose(model.predict(unseen), unseen.t, rtol=1e-8)


def test_without_the_categorical_column_the_levels_cannot_be_told_apart() -> None:
    df = cb_frame()
    model = fit_model(df, ["s", "a"], "t", max_terms=8)
    assert model.stats is not None and model.stats.rms_relative_error > 0.05


def test_relabelled_or_number_coded_levels_give_the_same_model() -> None:
    # Levels are labels, never ordinal numbers: coding them 0/1/2 in either order, or
    # renaming them, leaves every prediction unchanged.
    df = cb_frame()
    reference = fit_model(df, ["s", "a"], "t", categorical=["cb"], max_terms=8).predict(df)
    for mapping in ({"enable": 0, "disable": 1, "automatic": 2},
                    {"enable": 2, "disable": 0, "automatic": 1},
                    {"enable": "on", "disable": "off", "automatic": "auto"}):
        coded = df.assign(cb=df.cb.map(mapping))
        model = fit_model(coded, ["s", "a"], "t", categorical=["cb"], max_terms=8)
        np.testing.assert_allclose(model.predict(coded), reference, rtol=1e-9)


def test_integral_float_levels_match_integer_levels_when_predicting() -> None:
    df = cb_frame().assign(cb=lambda d: d.cb.map({"enable": 1, "disable": 2, "automatic": 3}))
    model = fit_model(df, ["s", "a"], "t", categorical=["cb"], max_terms=8)
    as_float = df.assign(cb=df.cb.astype(float))
    assert np.array_equal(model.predict(as_float), model.predict(df))


def test_a_level_unseen_in_training_is_an_error() -> None:
    df = cb_frame()
    model = fit_model(df, ["s", "a"], "t", categorical=["cb"], max_terms=8)
    new = df.head(3).assign(cb=["enable", "bogus", "enable"])
    with pytest.raises(DataError) as info:
        model.predict(new)
    assert str(info.value) == ("column 'cb': level 'bogus' at row 1 was not in the training "
                               "data (known: automatic, disable, enable)")


def test_a_categorical_column_with_one_level_is_an_error() -> None:
    df = cb_frame()
    df = df[df.cb == "enable"]
    with pytest.raises(DataError) as info:
        fit_model(df, ["s", "a"], "t", categorical=["cb"])
    assert str(info.value) == ("column 'cb': constant (every row is 'enable'); a categorical "
                               "parameter needs at least two levels")


def test_a_missing_level_is_an_error() -> None:
    df = cb_frame()
    df.loc[4, "cb"] = None
    with pytest.raises(DataError) as info:
        fit_model(df, ["s", "a"], "t", categorical=["cb"])
    assert str(info.value) == ("column 'cb': missing value at row 4 (a categorical parameter "
                               "needs a level on every row)")
