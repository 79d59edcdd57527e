"""Every bad input gets a DataError (or ConfigError) whose message names column, row and rule."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd
import pytest
from model_data import grid_frame

from iotune.errors import ConfigError, DataError
from iotune.model import fit_model


def frame() -> pd.DataFrame:
    df = grid_frame("sa", [[1, 2, 4, 8], [2, 4, 8]])
    df["t"] = 1 + 10 / df.s + 0.5 * df.a
    return df


def with_value(column: str, row: int, value: object) -> pd.DataFrame:
    df = frame().astype({column: object})
    df.loc[row, column] = value
    return df


TARGET_RULE = "targets must be positive numbers: the relative error (m - y)/y divides by them"


@pytest.mark.parametrize(("make", "message"), [
    (lambda: with_value("t", 4, np.nan), f"column 't': missing value at row 4 ({TARGET_RULE})"),
    (lambda: with_value("t", 2, 0.0), f"column 't': value 0 at row 2 is not positive "
                                      f"({TARGET_RULE})"),
    (lambda: with_value("t", 7, -1.5), f"column 't': value -1.5 at row 7 is not positive "
                                       f"({TARGET_RULE})"),
    (lambda: with_value("t", 1, np.inf), f"column 't': value inf at row 1 is not finite "
                                         f"({TARGET_RULE})"),
    (lambda: with_value("a", 3, 0), "column 'a': value 0 at row 3 cannot be inverted "
                                    "(candidate terms with a^-1 need positive values)"),
    (lambda: with_value("s", 5, -2), "column 's': value -2 at row 5 is not positive "
                                     "(candidate terms with s^-1 need positive values)"),
    (lambda: with_value("a", 6, "many"), "column 'a': value 'many' at row 6 is not a number "
                                         "(parameters must be finite numbers)"),
    (lambda: with_value("s", 0, None), "column 's': missing value at row 0 "
                                       "(parameters must be finite numbers)"),
    (lambda: frame().assign(a=16.0), "column 'a': constant (every row is 16), so its terms "
                                     "cannot be told apart from the intercept; drop it from "
                                     "the parameters"),
    (lambda: frame().drop(columns="a"), "column 'a' not in the data (columns: s, t)"),
    (lambda: frame().head(0), "the data has no rows"),
])
def test_bad_training_data(make: Callable[[], pd.DataFrame], message: str) -> None:
    with pytest.raises(DataError) as info:
        fit_model(make(), ["s", "a"], "t")
    assert str(info.value) == message


def test_fewer_rows_than_terms() -> None:
    with pytest.raises(DataError) as info:
        fit_model(frame().head(5), ["s", "a"], "t", max_terms=7)
    assert str(info.value) == ("5 rows are fewer than the 7 terms asked for (max_terms): least "
                               "squares needs at least one row per term; add measurements or "
                               "lower max_terms")


def test_row_labels_are_the_frames_index() -> None:
    df = frame()
    df.index = [f"run{i}" for i in range(len(df))]
    df.loc["run9", "t"] = -3.0
    with pytest.raises(DataError, match=r"^column 't': value -3 at row run9 is not positive"):
        fit_model(df, ["s", "a"], "t")


def test_prediction_needs_positive_values_only_where_a_term_divides() -> None:
    model = fit_model(frame(), ["s", "a"], "t", max_terms=3, monotone_completion=False)
    assert {t.name(model.params) for t in model.terms} == {"1", "1/s", "a"}
    ok = pd.DataFrame({"s": [1.0, 2.0], "a": [0.0, -1.0]})
    np.testing.assert_allclose(model.predict(ok), [11.0, 5.5])
    with pytest.raises(DataError) as info:
        model.predict(pd.DataFrame({"s": [1.0, 0.0], "a": [1.0, 1.0]}))
    assert str(info.value) == ("column 's': value 0 at row 1 cannot be inverted (term 1/s "
                               "needs positive values)")
    with pytest.raises(DataError) as info:
        model.predict(pd.DataFrame({"s": [1.0]}))
    assert str(info.value) == "column 'a' not in the data (columns: s)"


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"actionable": ["s", "q"]}, "actionable: q not among the parameters (s, a)"),
    ({"max_terms": 0}, "max_terms: 0 is not a positive integer"),
    ({"min_gain": 1.5}, "min_gain: 1.5 must satisfy 0 <= min_gain < 1"),
    ({"cv_folds": 1}, "cv_folds: 1 must be at least 2"),
    ({"categorical": ["s"]}, "params: s given twice (a column is either a numeric parameter "
                             "or a categorical one, once)"),
])
def test_inconsistent_options_are_config_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        fit_model(frame(), ["s", "a"], "t", **kwargs)  # type: ignore[arg-type]
    assert str(info.value) == message
