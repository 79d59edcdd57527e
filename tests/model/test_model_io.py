from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from model_data import eq5_frame, grid_frame

from iotune.errors import DataError
from iotune.model import (
    SCHEMA_VERSION,
    Model,
    Term,
    fit_model,
    load_model,
    model_to_dict,
    save_model,
)


def noisy_model(tmp_path: Path, categorical: bool = False) -> tuple[Model, pd.DataFrame, Path]:
    rng = np.random.default_rng(2)
    df = eq5_frame(c=(16, 32, 156), s=(1, 4, 16, 64), a=(16, 48, 80), f=(256, 2048))
    if categorical:
        df = pd.concat([df.assign(cb="enable"), df.assign(cb="disable")], ignore_index=True)
        df.loc[df.cb == "disable", "write_time"] *= 1.5
    df["write_time"] *= rng.lognormal(0, 0.05, len(df))
    csv = tmp_path / "train.csv"
    df.to_csv(csv, index=False)
    model = fit_model(df, list("csaf"), "write_time", actionable=list("csa"),
                      categorical=["cb"] if categorical else None, stop="cv")
    return model, df, csv


@pytest.mark.parametrize("categorical", [False, True])
def test_a_loaded_model_predicts_bit_for_bit_the_same(tmp_path: Path, categorical: bool) -> None:
    model, df, csv = noisy_model(tmp_path, categorical)
    path = tmp_path / "model.yaml"
    save_model(model, path, source=csv)
    loaded = load_model(path)
    assert loaded.terms == model.terms
    assert loaded.coefficients == model.coefficients
    assert loaded.steps == model.steps
    assert loaded.completion == model.completion
    assert loaded.stats == model.stats and loaded.settings == model.settings
    assert loaded.categorical == model.categorical
    assert np.array_equal(loaded.predict(df), model.predict(df))
    wide = grid_frame("csaf", [[1, 7, 200], [0.5, 3, 100], [2, 33, 99], [10, 777]])
    if categorical:
        wide = wide.assign(cb="disable")
    assert np.array_equal(loaded.predict(wide), model.predict(wide))
    # Saving the loaded model again gives the same file.
    again = tmp_path / "again.yaml"
    save_model(loaded, again)
    assert again.read_text() == path.read_text()


def test_the_file_is_readable_yaml_with_formula_exponents_and_provenance(tmp_path: Path) -> None:
    model, _, csv = noisy_model(tmp_path)
    path = tmp_path / "model.yaml"
    save_model(model, path, source=csv)
    text = path.read_text()
    data = yaml.safe_load(text)
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["formula"] == model.formula()
    assert text.count("formula: m = ") == 1
    assert data["parameters"] == ["c", "s", "a", "f"]
    assert data["target"] == "write_time"
    assert [e["exponents"] for e in data["terms"]] == [list(t.exponents) for t in model.terms]
    assert f"exponents: {list(model.terms[0].exponents)}" in text  # one line, like [0, 0, 0, 1]
    assert [e["coefficient"] for e in data["terms"]] == list(model.coefficients)  # repr floats
    assert data["source"] == {"path": str(csv),
                              "sha256": hashlib.sha256(csv.read_bytes()).hexdigest()}
    fit = data["fit"]
    assert fit["rows"] == len(pd.read_csv(csv))
    assert fit["relative_error"] == model.training_error
    assert fit["cv_relative_error"] == model.cv_error
    assert data["settings"]["stop"] == "cv"
    assert [e["added_by"] for e in data["terms"]].count("completion") == sum(
        s.by_completion for s in model.steps)


def test_model_to_dict_is_plain_json() -> None:
    model = fit_model(eq5_frame(), list("csaf"), "write_time")
    data = json.loads(json.dumps(model_to_dict(model)))
    assert data["terms"][0]["term"] == model.terms[0].name(model.params)
    assert data["source"] is None


def test_formula_in_the_papers_notation() -> None:
    terms = [Term(e) for e in [(0, 0, 0, 0), (0, 0, 0, 1), (0, 0, -1, 1), (-1, 0, 1, 0),
                               (0, -1, 1, 0), (1, 1, -1, 0), (1, 0, -1, 1)]]
    model = Model(("c", "s", "a", "f"), "write_time", tuple(terms),
                  (-20.65, 0.11, 4.17, 27.13, 4.50, 0.0038, 0.01))
    assert model.formula() == ("m = -20.65 + 0.11 f + 4.17 f/a + 27.13 a/c + 4.5 a/s "
                               "+ 0.0038 cs/a + 0.01 cf/a")
    negative = Model(("x",), "t", (Term((1,)), Term((0,))), (-2.0, 3.0))
    assert negative.formula() == "m = 3 - 2 x"


@pytest.mark.parametrize(("text", "message"), [
    ("- 1\n- 2\n", "not an iotune model file (expected a YAML mapping with schema_version, "
                  "parameters and terms)"),
    ("target: t\n", "schema_version: missing"),
    ("schema_version: 99\n", "schema_version 99 is newer than this iotune reads (1); "
                             "upgrade iotune"),
    ("schema_version: 1\nparameters: [x]\ntarget: t\nterms:\n- exponents: [2]\n  coefficient: 1\n",
     "terms[0].exponents: expected one of -1, 0, 1 per parameter (1 in all), got [2]"),
    ("schema_version: 1\nparameters: [x]\ntarget: t\nterms:\n- exponents: [1]\n",
     "terms[0].coefficient: missing"),
    ("schema_version: 1\nparameters: [x]\ntarget: t\nterms:\n- exponents: [1]\n"
     "  coefficient: one\n", "terms[0].coefficient: expected int or float, got 'one'"),
    ("a: [\n", None),
])
def test_a_bad_model_file_is_a_data_error(tmp_path: Path, text: str, message: str | None,
                                          ) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(DataError) as info:
        load_model(path)
    if message is None:
        assert str(info.value).startswith(f"{path}: malformed YAML at line 2, column 1")
    else:
        assert str(info.value) == f"{path}: {message}"
