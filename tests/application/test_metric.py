"""A program's own metric, named: its label, unit and direction from the config through
the record, the tune's table, the tuned file, ``results`` and the report; a bandwidth
metric chooses the higher bandwidth."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.errors import ConfigError
from iotune.execution.application import parse_application
from iotune.settings.metrics import Metric, command_metric
from iotune.store import Store

HERE = Path(__file__).resolve().parent
PROGRAM = f"{sys.executable} {HERE / 'bandwidth_app.py'} {{scratch}}/f.bin"
MAX_WRITE = {"regex": r"Max Write: ([0-9.]+) MiB/sec", "label": "IOR Max Write",
             "unit": "MiB/s"}


def _config(tmp_path: Path, metric: dict, **extra) -> Path:
    scratch = tmp_path / "scratch"
    scratch.mkdir(exist_ok=True)
    path = tmp_path / "iotune.yaml"
    path.write_text(yaml.safe_dump({
        "system": {"name": "testbox", "scratch": str(scratch), "cores_per_node": 2,
                   "timeout": "2m"},
        "store": "store.jsonl",
        "kernel": {"command": PROGRAM, "metric": metric},
        "space": {"cb_buffer_size": ["1MiB", "4MiB"], "romio_cb_write": ["enable", "disable"]},
        "tune": {"repetitions": 1}, **extra}))
    return path


def test_a_bandwidth_is_minimised_as_its_reciprocal_and_shown_in_its_unit():
    bandwidth = Metric("IOR Max Write", "MiB/s")
    assert bandwidth.higher_is_better and bandwidth.better == "higher"
    assert bandwidth.minimised(2000.0) == pytest.approx(1 / 2000)
    assert bandwidth.shown(bandwidth.minimised(2000.0)) == pytest.approx(2000.0)
    # the default over the best, of what is minimised, is the best's MiB/s over the default's
    assert bandwidth.minimised(500.0) / bandwidth.minimised(2000.0) == pytest.approx(4.0)
    assert bandwidth.shown_interval(1 / 1900, 1 / 2100) == pytest.approx((1900, 2100))
    seconds = Metric("checkpoint write")
    assert seconds.minimised(3.0) == seconds.shown(3.0) == 3.0 and seconds.better == "lower"


def test_metric_keys_round_trip_through_the_kernel_arguments():
    app = parse_application({"command": "ior", "metric": {**MAX_WRITE, "match": "first"}})
    params = app.as_params()
    assert params["metric"] == "regex:" + MAX_WRITE["regex"]
    assert (params["metric_label"], params["metric_unit"], params["metric_match"]) == (
        "IOR Max Write", "MiB/s", "first")
    assert parse_application(params) == app  # the stored arguments give the same metric
    assert command_metric(params) == Metric("IOR Max Write", "MiB/s")
    # the defaults add no argument: stores of metrics without them keep their keys
    plain = parse_application({"command": "ior", "metric": {"regex": "t: ([0-9.]+)"}})
    assert set(plain.as_params()) == {"command", "output_dir", "metric", "preload"}
    # on the command line, the same mapping in YAML flow style
    flow = parse_application({"command": "ior", "metric": "{regex: 'Max Write: ([0-9.]+) "
                              "MiB/sec', label: IOR Max Write, unit: MiB/s, match: first}"})
    assert flow == app
    with pytest.raises(ConfigError, match=r"kernel.metric.unit: 'GB' is not one of s, MiB/s"):
        parse_application({"command": "ior", "metric": {**MAX_WRITE, "unit": "GB"}})


@pytest.mark.mpi
def test_which_match_counts_first_or_last(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    figures = {}
    for match in ("first", "last"):
        config = _config(tmp_path, {**MAX_WRITE, "match": match})
        out = CliRunner().invoke(cli, ["run", "-c", str(config), "--cores", "1", "--set",
                                       "romio_cb_write=disable", "--no-store",
                                       "--format", "json"])
        assert out.exit_code == 0, out.output
        record = json.loads(out.stdout)
        record = record[0] if isinstance(record, list) else record
        figures[match] = record["result"]["metric"]["value"]
        assert record["result"]["metric"]["unit"] == "MiB/s"
    assert figures["first"] == pytest.approx(1.0)  # the warm-up's line
    assert 1900 < figures["last"] < 2100  # the run's own


@pytest.mark.mpi
def test_a_bandwidth_metric_chooses_the_higher_bandwidth_and_is_named_throughout(tmp_path):
    config = _config(tmp_path, MAX_WRITE)
    runner = CliRunner()
    tuned_path = tmp_path / "tuned.yaml"
    out = runner.invoke(cli, ["tune", "-c", str(config), "--cores", "1", "--budget", "10",
                              "--strategy", "exhaustive", "-o", str(tuned_path), "--no-color"])
    assert out.exit_code == 0, out.output
    assert "target write: IOR Max Write, MiB/s, higher is better" in out.stdout
    doc = yaml.safe_load(tuned_path.read_text())
    assert doc["metric"] == {"label": "IOR Max Write", "unit": "MiB/s", "better": "higher"}
    assert doc["target_time"] == "IOR Max Write"
    best, default = doc["best_found"], doc["default"]
    assert best["settings"]["romio_cb_write"] == "disable"  # about 2000 MiB/s, not 600
    assert 1900 < best["estimate_mib_s"] < 2100 and 750 < default["estimate_mib_s"] < 850
    low, high = best["interval_mib_s"]
    assert low <= best["estimate_mib_s"] <= high
    assert "time_s" not in best  # no reciprocal seconds shown as a time
    gain = doc["best_found_speedup"]["estimate"]
    assert gain == pytest.approx(best["estimate_mib_s"] / default["estimate_mib_s"], rel=0.05)
    assert doc["recommendation"] == "tuned" and doc["settings"]["romio_cb_write"] == "disable"
    # the table: MiB/s, the highest first
    table = out.stdout.split("\n\n")[1].splitlines()
    assert table[0].split()[:3] == ["rank", "settings", "MiB/s"]
    shown = [float(line.split()[-3]) for line in table[2:]]
    assert shown == sorted(shown, reverse=True) and "romio_cb_write=disable" in table[2]

    results = runner.invoke(cli, ["results", "-c", str(config), "--format", "json"])
    assert results.exit_code == 0, results.output
    rows = json.loads(results.stdout)
    assert all("IOR Max Write (MiB/s)" in r and "write_time" not in r for r in rows)
    assert max(r["IOR Max Write (MiB/s)"] for r in rows) > 1900
    records = Store(tmp_path / "store.jsonl").records()
    assert all(r["result"]["times_s"]["total"] == pytest.approx(
        1 / r["result"]["metric"]["value"]) for r in records)

    report = runner.invoke(cli, ["report", "-c", str(config), "--tuned", str(tuned_path),
                                 "-o", str(tmp_path / "r"), "--no-color"])
    assert report.exit_code == 0, report.output
    (table_3,) = (tmp_path / "r").glob("speedup-*.csv")
    with table_3.open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["unit"] == "MiB/s" and row["recommendation"] == "tuned"
    assert float(row["best_found"]) > 1900 and float(row["default"]) < 850
    assert "IOR Max Write (MiB/s)" in (tmp_path / "r" / "index.html").read_text()
    (top,) = (tmp_path / "r").glob("topk-*.csv")
    with top.open() as handle:
        searched = [r for r in csv.DictReader(handle) if r["rank"] != "default"]
    shown = [float(r["measured_mib_s"]) for r in searched]
    assert shown == sorted(shown, reverse=True) and shown[0] > 1900  # highest first


@pytest.mark.mpi
def test_configurations_that_ran_identically_are_one_row_naming_each(write_config):
    # One node, ROMIO's one aggregator per node: cb_nodes=1 and cb_nodes=2 both run with 1.
    config = write_config({"space": {"cb_nodes": [1, 2], "romio_cb_write": ["enable"]}})
    out = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "2", "--budget", "6",
                                   "--strategy", "exhaustive", "--format", "json",
                                   "--no-color"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    (merged,) = [r for r in doc["rows"] if "ran_identically" in r]
    assert merged["settings"] == "cb_nodes=1|2 romio_cb_write=enable"
    assert [m["cb_nodes"] for m in merged["ran_identically"]] == [1, 2]
    runs = [r for r in Store(Path(config).parent / "store.jsonl").records()
            if r["settings"] and r["status"] == "ok"]
    assert merged["runs"] == len(runs)  # the runs of both
    assert len(doc["rows"]) == 2 and doc["search"]["configurations"] == 2
