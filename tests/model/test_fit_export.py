"""The README flow: ``iotune results --export runs.csv`` then ``iotune fit runs.csv``, on a
store that holds runs of the default configuration (no settings) beside the training runs."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml
from click.testing import CliRunner, Result

from iotune.cli.main import cli

PARAMS = "stripe_count,stripe_size,cb_nodes,cores"
NOTE = "skipped 2 that set none of stripe_count, stripe_size, cb_nodes"


def invoke(*args: str) -> Result:
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result


@pytest.fixture
def sim_store(tmp_path: Path) -> Path:
    """A simulated store: a small training design at 48 and 96 ranks, and two default runs.

    Returns the config; its store is ``tmp_path / "store.jsonl"``.
    """
    config = tmp_path / "sim.yaml"
    config.write_text(yaml.safe_dump({
        "system": {"name": "hopperish", "scratch": str(tmp_path), "cores_per_node": 24,
                   "ost_count": 156, "aggregators_per_node": 1},
        "store": "store.jsonl",
        "kernel": {"name": "vpic", "args": {"fsync": False}},
        "space": {"stripe_count": [1, 4, 16, 64], "stripe_size": ["1MiB", "4MiB", "16MiB"],
                  "cb_nodes": [1, 2, 4]},
        "train": {"scales": [{"cores": 48, "design": "full"}, {"cores": 96, "design": "full"}]},
        "backend": {"name": "sim", "system": "hopper"},
    }))
    trained = invoke("train", "-c", str(config), "--no-color")
    assert trained.exit_code == 0, trained.output
    for cores in ("48", "96"):  # the default configuration: a record without settings
        ran = invoke("run", "-c", str(config), "--cores", cores)
        assert ran.exit_code == 0, ran.output
    return config


def export(config: Path, path: Path) -> Path:
    result = invoke("results", "-c", str(config), "--export", str(path))
    assert result.exit_code == 0, result.output
    return path


def fit(data: Path, *extra: str) -> Result:
    return invoke("fit", str(data), "--params", PARAMS, "--target", "write_time",
                  "--max-terms", "3", *extra)


def test_fit_of_an_exported_csv_skips_the_default_runs(sim_store: Path, tmp_path: Path) -> None:
    csv = export(sim_store, tmp_path / "runs.csv")
    frame = pd.read_csv(csv)
    assert frame["stripe_count"].isna().sum() == 2  # the export has the default runs
    result = fit(csv, "--format", "json")
    assert result.exit_code == 0, result.output
    assert result.stderr.count("iotune: fitting") == 1
    assert f"fitting {len(frame) - 2} of {len(frame)} rows: {NOTE}" in result.stderr
    assert "runs of the default configuration" in result.stderr
    data = json.loads(result.stdout)
    assert data["fit"]["rows"] == len(frame) - 2
    assert data["parameters"] == ["stripe_count", "stripe_size", "cb_nodes", "cores"]


def test_fit_of_the_store_and_of_its_parquet_export_agree(sim_store: Path,
                                                          tmp_path: Path) -> None:
    pytest.importorskip("pyarrow")
    parquet = export(sim_store, tmp_path / "runs.parquet")
    from_parquet = fit(parquet, "--format", "json")
    from_store = fit(tmp_path / "store.jsonl", "--format", "json")
    for result in (from_parquet, from_store):
        assert result.exit_code == 0, result.output
        assert NOTE in result.stderr
    assert json.loads(from_parquet.stdout)["formula"] == json.loads(from_store.stdout)["formula"]


def test_a_row_missing_only_some_settings_is_an_error(sim_store: Path, tmp_path: Path) -> None:
    csv = export(sim_store, tmp_path / "runs.csv")
    frame = pd.read_csv(csv)
    row = int(frame.index[frame["stripe_count"].notna()][3])
    frame.loc[row, "stripe_size"] = None
    frame.to_csv(csv, index=False)
    result = fit(csv)
    assert result.exit_code == 3
    assert (f"column 'stripe_size': missing value at row {row}, which sets stripe_count, "
            "cb_nodes") in result.stderr
    assert "iotune: fitting" not in result.stderr


def test_only_default_runs_is_an_error(sim_store: Path, tmp_path: Path) -> None:
    csv = export(sim_store, tmp_path / "runs.csv")
    frame = pd.read_csv(csv)
    frame[frame["stripe_count"].isna()].to_csv(csv, index=False)
    result = fit(csv)
    assert result.exit_code == 3
    assert "no row sets any of stripe_count, stripe_size, cb_nodes: all 2 are runs of the " \
           "default configuration" in result.stderr


def test_columns_that_are_not_settings_are_not_skipped(tmp_path: Path) -> None:
    csv = tmp_path / "plain.csv"
    pd.DataFrame({"c": [1.0, 2.0, None, 4.0], "write_time": [1.0, 2.0, 3.0, 4.0]}).to_csv(
        csv, index=False)
    result = invoke("fit", str(csv), "--params", "c", "--target", "write_time")
    assert result.exit_code == 3
    assert "column 'c': missing value at row 2" in result.stderr
