from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from model_data import EQ5_EXPONENTS, eq5_frame

from iotune.cli.model_commands import fit_command, predict_command
from iotune.errors import DataError
from iotune.model import load_model, model_to_dict


@pytest.fixture
def train_csv(tmp_path: Path) -> Path:
    path = tmp_path / "train.csv"
    eq5_frame().to_csv(path, index=False)
    return path


def test_fit_json_reports_steps_formula_and_statistics(train_csv: Path, tmp_path: Path) -> None:
    args = [str(train_csv), "--params", "c,s,a,f", "--target", "write_time", "--max-terms", "7",
            "--actionable", "c,s,a", "--format", "json"]
    result = CliRunner().invoke(fit_command, args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["parameters"] == ["c", "s", "a", "f"]
    assert {tuple(t["exponents"]) for t in data["terms"]} == set(EQ5_EXPONENTS)
    errors = [t["relative_error_after"] for t in data["terms"]]
    assert errors[-1] < 1e-20
    assert data["formula"].startswith("m = -20.65 + 0.11 f")
    assert data["fit"]["rows"] == 256 and data["fit"]["stop_reason"] == "term limit (7)"
    assert data["source"]["path"] == str(train_csv)
    assert [c["parameter"] for c in data["completion"]] == ["c", "s", "a"]
    out = tmp_path / "model.yaml"
    saved = CliRunner().invoke(fit_command, [*args, "-o", str(out)])
    assert saved.exit_code == 0, saved.output
    assert model_to_dict(load_model(out)) == data


def test_fit_table_lists_each_step_then_the_formula(train_csv: Path) -> None:
    result = CliRunner().invoke(fit_command, [
        str(train_csv), "--params", "c, s, a, f", "--target", "write_time"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["step", "term", "relative_error", "rms_relative_error",
                                "cv_error", "added_by"]
    assert [line.split()[1] for line in lines[2:9]] == [
        "f", "a/s", "f/a", "a/c", "1", "cf/a", "cs/a"]
    assert any(line.startswith("formula") and "m = -20.65" in line for line in lines)
    assert any(line.startswith("stop_reason") for line in lines)


def test_fit_yaml_options_and_categorical(tmp_path: Path) -> None:
    df = eq5_frame(f=(512, 2048))
    df = pd.concat([df.assign(cb="enable"), df.assign(cb="disable")], ignore_index=True)
    df.loc[df.cb == "disable", "write_time"] += 10
    path = tmp_path / "cb.csv"
    df.to_csv(path, index=False)
    result = CliRunner().invoke(fit_command, [
        str(path), "--params", "c,s,a,f", "--target", "write_time", "--categorical", "cb",
        "--no-monotone-completion", "--stop", "threshold", "--min-gain", "0.001",
        "--max-terms", "12", "--format", "yaml"])
    assert result.exit_code == 0, result.output
    data = yaml.safe_load(result.stdout)
    assert data["categorical"] == {"cb": ["disable", "enable"]}
    assert data["settings"]["monotone_completion"] is False
    assert data["settings"]["stop"] == "threshold"
    assert any("indicator" in t for t in data["terms"])
    assert data["fit"]["rms_relative_error"] < 1e-9


def test_fit_reads_an_iotune_store(train_csv: Path, tmp_path: Path,
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import iotune.store.index

    store = tmp_path / "store"
    store.mkdir()
    (store / "measurements.jsonl").write_text("{}\n")
    seen: list[Path] = []

    def fake_read_dataframe(path: Path) -> pd.DataFrame:
        seen.append(Path(path))
        return pd.read_csv(train_csv)

    monkeypatch.setattr(iotune.store.index, "read_dataframe", fake_read_dataframe)
    result = CliRunner().invoke(fit_command, [str(store), "--params", "c,s,a,f", "--target",
                                              "write_time", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert seen == [store]
    assert json.loads(result.stdout)["source"]["path"] == str(store / "measurements.jsonl")


def test_fit_bad_data_raises_the_data_error(tmp_path: Path) -> None:
    df = eq5_frame()
    df.loc[3, "a"] = 0
    path = tmp_path / "bad.csv"
    df.to_csv(path, index=False)
    result = CliRunner().invoke(fit_command, [str(path), "--params", "c,s,a,f", "--target",
                                              "write_time"])
    assert isinstance(result.exception, DataError)
    assert str(result.exception) == ("column 'a': value 0 at row 3 cannot be inverted "
                                     "(candidate terms with a^-1 need positive values)")


def test_predict_adds_a_predicted_column(train_csv: Path, tmp_path: Path) -> None:
    model_path = tmp_path / "model.yaml"
    fitted = CliRunner().invoke(fit_command, [str(train_csv), "--params", "c,s,a,f",
                                              "--target", "write_time", "-o", str(model_path)])
    assert fitted.exit_code == 0, fitted.output
    configs = eq5_frame(c=(8, 128), s=(2, 32), a=(24, 72), f=(300, 1500))
    configs_path = tmp_path / "configs.csv"
    configs.drop(columns="write_time").to_csv(configs_path, index=False)

    shown = CliRunner().invoke(predict_command, [str(model_path), str(configs_path)])
    assert shown.exit_code == 0, shown.output
    table = pd.read_csv(io.StringIO(shown.stdout))
    assert list(table.columns) == ["c", "s", "a", "f", "predicted"]
    np.testing.assert_allclose(table.predicted, configs.write_time, rtol=1e-9)

    out = tmp_path / "out.csv"
    written = CliRunner().invoke(predict_command, [str(model_path), str(configs_path),
                                                   "-o", str(out)])
    assert written.exit_code == 0, written.output
    assert np.array_equal(pd.read_csv(out).predicted.to_numpy(), table.predicted.to_numpy())
    assert np.array_equal(table.predicted.to_numpy(),
                          load_model(model_path).predict(configs.drop(columns="write_time")))
