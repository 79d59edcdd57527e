"""The tune's results table: one estimate per row, best first, no impossible prediction;
and the report of a tune that kept the default names the best found as the best found."""

from __future__ import annotations

import csv
import math
from html import escape
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from iotune.backends.replay import ReplayBackend
from iotune.cli.main import cli
from iotune.cli.tune_commands import _tune_text
from iotune.config import build_config
from iotune.model.trust import NO_PREDICTION
from iotune.settings.metrics import Metric
from iotune.store import Store
from iotune.strategies.base import Evaluation
from iotune.strategies.racing import (
    MIN_GAIN,
    Estimate,
    Noise,
    ranked,
    ranked_estimates,
    shrunken_estimates,
)
from iotune.tune import tune
from iotune.tune.table import prediction_errors, table_rows
from tests.tune.replay_config import replay_config


def _landscape(path: Path, gains: dict[int, float], sigma: float = 0.08,
               repeats: int = 6, seed: int = 3) -> Path:
    """Replay data at 4 ranks: the default (10 s) and one configuration per stripe count,
    ``gains[count]`` times faster than the default, ``repeats`` noisy runs each."""
    rng = np.random.default_rng(seed)
    rows = []
    for settings, centre in [({}, 10.0), *(({"stripe_count": c}, 10.0 / g)
                                           for c, g in gains.items())]:
        rows += [{"cores": 4, **settings, "write_time": centre * float(np.exp(x))}
                 for x in rng.normal(0, sigma, repeats)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_shrunken_estimates_hold_their_centre_and_rank_as_the_race():
    rng = np.random.default_rng(1)
    pool = [Evaluation({"x": i}, str(i), times=list(np.exp(rng.normal(m, 0.3, n))), order=i)
            for i, (m, n) in enumerate([(0.0, 1), (0.1, 3), (-0.2, 2), (0.4, 5), (0.05, 1)])]
    noise = Noise(0.3, 20)
    found = shrunken_estimates(pool, noise)
    assert all(f is not None and f.low_s is not None and f.high_s is not None
               and f.low_s <= f.time_s <= f.high_s and f.low_s < f.high_s
               for f in found)
    by_estimate = [pool[i] for i in sorted(range(len(pool)),
                                           key=lambda i: found[i].time_s)]  # type: ignore
    assert by_estimate == ranked(pool, noise)
    # a configuration run once is pulled towards the others more than its plain mean
    lone = pool[0]
    plain = math.exp(float(np.mean(np.log(lone.times))))
    centre = math.exp(float(np.mean([np.mean(np.log(e.times)) for e in pool])))
    assert abs(math.log(found[0].time_s / centre)) <= abs(math.log(plain / centre))  # type: ignore


def _exhaustive_tune(tmp_path):
    """The JSON result of an exhaustive tune (budget 16) of a four-setting landscape."""
    data = _landscape(tmp_path / "land.csv", {1: 0.8, 2: 1.4, 4: 2.0, 8: 1.7})
    config = replay_config(tmp_path, data)
    out = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "4", "--strategy",
                                   "exhaustive", "--budget", "16", "--format", "json",
                                   "--no-color"])
    assert out.exit_code == 0, out.output
    return yaml.safe_load(out.stdout)


def test_rows_are_one_estimate_each_best_first(tmp_path):
    doc = _exhaustive_tune(tmp_path)
    rows = doc["rows"]
    assert len(rows) == 5 and sum(r["default"] for r in rows) == 1
    values = [r["estimate_s"] for r in rows]
    assert values == sorted(values)  # best first
    for row in rows:  # the central value inside its own interval
        low, high = row["interval_s"]
        assert low <= row["estimate_s"] <= high
    assert rows[0]["best_found"] and not any(r["best_found"] for r in rows[1:])
    assert rows[0]["settings"] == "stripe_count=4" == "stripe_count=" + str(
        doc["best_found"]["settings"]["stripe_count"])
    # the tuned document's figures are the same estimate as the row
    assert doc["best_found"]["estimate_s"] == rows[0]["estimate_s"]
    assert doc["best_found"]["interval_s"] == rows[0]["interval_s"]


def test_the_printed_table_leads_with_the_best_found_and_shows_no_impossible_prediction(
        tmp_path):
    data = _landscape(tmp_path / "land.csv", {1: 0.8, 2: 1.4, 4: 2.0})
    config = build_config({"kernel": {"name": "vpic"}, "store": str(tmp_path / "s.jsonl"),
                           "backend": {"name": "replay", "replay_data": str(data)}}, tmp_path)
    result = tune(config, ReplayBackend(config), Store(config.store), kernel="vpic", cores=4,
                  strategy="exhaustive", budget=12, fresh=True)
    searched = [e for e in result.evaluations if e.settings]
    searched[0].predicted, searched[1].predicted = 0.0, -3.0  # what a linear basis can give
    searched[2].predicted = 6.0
    rows = table_rows(result)
    assert rows[0].is_best and rows[0].evaluation is result.best
    shown = {r.settings: r.predicted for r in rows}
    assert shown[f"stripe_count={searched[0].settings['stripe_count']}"] == NO_PREDICTION
    assert shown[f"stripe_count={searched[1].settings['stripe_count']}"] == NO_PREDICTION
    errors = prediction_errors(result, rows)
    assert errors.impossible == 2 and errors.rows == 1
    estimate = result.estimates[searched[2].key]
    assert estimate is not None
    assert errors.shown == abs(6.0 - estimate.time_s) / estimate.time_s
    text = _tune_text(result)
    table = text.split("\n\n")[1].splitlines()
    assert table[2].split()[1] == "stripe_count=4"  # the first row is the best found
    assert f"{NO_PREDICTION}: the model predicted a time of zero or less (2 rows)" in text
    assert "0.0 " not in table[2] and " -3" not in text
    assert "RMS relative error against the estimates over 1 rows" in text


def test_a_tune_that_kept_the_default_is_reported_as_such_with_the_best_found(tmp_path):
    # One configuration 5% faster: below the gain a change must promise, so the default
    # is kept; the report says so and shows the best found as the best found.
    data = _landscape(tmp_path / "land.csv", {2: 1.05, 4: 0.7}, sigma=0.03, repeats=8)
    config = replay_config(tmp_path, data)
    runner = CliRunner()
    tuned = runner.invoke(cli, ["tune", "-c", str(config), "--cores", "4", "--strategy",
                                "exhaustive", "--budget", "16", "-o", str(tmp_path / "t.yaml"),
                                "--no-color"])
    assert tuned.exit_code == 0, tuned.output
    doc = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert doc["recommendation"] == "default" and doc["settings"] == {}
    assert doc["best_found"]["settings"] == {"stripe_count": 2}
    report = runner.invoke(cli, ["report", "-c", str(config), "-o", str(tmp_path / "r"),
                                 "--no-color"])
    assert report.exit_code == 0, report.output
    with (tmp_path / "r" / "speedup-vpic-replay.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["recommendation"] == "default" and row["decided_by"] == "these runs"
    assert f"less than the {MIN_GAIN:g}x" in row["why"]
    assert row["best_found_settings"] == "c=2"
    assert float(row["speedup_low"]) <= float(row["speedup"]) <= float(row["speedup_high"])
    assert 1.0 < float(row["speedup"]) < MIN_GAIN
    out = report.stdout
    assert "what was recommended at each scale, and the best found" in out
    assert "speedups of the tuned over the default" not in out
    line = next(x for x in out.splitlines() if x.startswith("4 "))
    assert line.split()[1] == "default" and "c=2" in line
    # with the tuned file the report takes its word, and the page says it
    with_file = runner.invoke(cli, ["report", "-c", str(config), "--tuned",
                                    str(tmp_path / "t.yaml"), "-o", str(tmp_path / "r2"),
                                    "--no-color"])
    assert with_file.exit_code == 0, with_file.output
    with (tmp_path / "r2" / "speedup-vpic-replay.csv").open() as handle:
        (row,) = list(csv.DictReader(handle))
    assert row["decided_by"] == "the tuned file" and row["why"] == doc["reason"]
    html = (tmp_path / "r2" / "index.html").read_text()
    assert "stripe_count=2: " in html and "not recommended" in html
    assert escape(doc["reason"]).replace("&#x27;", "&#39;") in html  # as jinja escapes


def test_ranked_estimates_leave_out_failed_configurations_and_break_ties_by_order():
    tied = [Evaluation({"x": i}, str(i), times=[2.0, 2.0], order=i) for i in (2, 1)]
    failed = Evaluation({"x": 3}, "3", failures=["crashed"], order=0)
    fast = Evaluation({"x": 4}, "4", times=[1.0], order=5)
    pairs = ranked_estimates([*tied, failed, fast], Noise(None, 0))
    assert [e for e, _ in pairs] == [fast, tied[1], tied[0]]
    assert [f.time_s for _, f in pairs] == pytest.approx([1.0, 2.0, 2.0])


def test_an_estimate_interval_is_shown_in_the_metric_unit_low_end_first():
    bandwidth = Metric("bandwidth", "MiB/s")
    assert Estimate(1.0, 0.5, 2.0, 3).shown_interval(bandwidth) == (0.5, 2.0)
    assert Estimate(1.0, 0.25, 2.0, 3).shown_interval(bandwidth) == (0.5, 4.0)
    assert Estimate(1.0, None, None, 1).shown_interval(Metric("time")) is None


def test_the_tuned_file_gives_the_speedup_estimate_and_the_test_that_decided(tmp_path):
    doc = _exhaustive_tune(tmp_path)
    gain = doc["best_found_speedup"]
    low, high = gain["interval"]
    assert low < gain["estimate"] < high and high > low
    assert gain["states"].startswith("the ratio of the default's typical time")
    test = gain["decided_by"]
    assert test["test"].startswith("rank") and len(test["interval"]) == 2
    assert doc["recommendation"] == "tuned" and doc["speedup"] == gain["estimate"]
    # the estimate is the ratio of the geometric means, the best found's first run left out
    assert gain["estimate"] != test["estimate"] or low != test["interval"][0]
