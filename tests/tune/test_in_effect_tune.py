"""Settings that do not take effect: found from what the runs read back, searched no
further, never recommended; a replaced value is recommended as it was in effect."""

from __future__ import annotations

import csv

import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.store import Store
from iotune.store.records import Measurement
from iotune.strategies.base import Evaluation
from iotune.tune.result import verify

IGNORED_HERE = ("stripe_count", "hint.romio_no_such_hint")


@pytest.mark.mpi
def test_a_tune_stops_varying_what_this_system_ignores_and_never_recommends_it(
        write_config, tmp_path):
    # Off Lustre striping cannot act; ROMIO drops a hint it does not know. Both are found
    # from the first run that asks for them.
    config = write_config({"space": {"stripe_count": [1, 4], "romio_cb_write":
                                     ["enable", "disable"],
                                     "hint.romio_no_such_hint": ["a", "b"]}})
    tuned_path = tmp_path / "tuned.yaml"
    result = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "2", "--budget",
                                      "8", "-o", str(tuned_path), "--no-color"])
    assert result.exit_code == 0, result.output
    for name in IGNORED_HERE:
        assert result.stderr.count(f"{name} has no effect here") == 1
        assert f"not in effect: {name}" in result.stdout
    records = [r for r in Store(tmp_path / "store.jsonl").records() if r["settings"]]
    assert records
    for name in IGNORED_HERE:  # the first run's value, and no other, was measured
        assert len({r["settings"][name] for r in records if name in r["settings"]}) == 1
    effects = records[0]["result"]["settings_effect"]
    assert effects["stripe_count"]["status"] == "not_applicable"
    assert effects["hint.romio_no_such_hint"]["status"] == "absent"
    assert effects["romio_cb_write"]["status"] == "in_effect"
    tuned = yaml.safe_load(tuned_path.read_text())
    assert not set(IGNORED_HERE) & set(tuned["settings"])
    assert set(IGNORED_HERE) <= set(tuned["search"]["not_varied"])
    if tuned["recommendation"] == "tuned":  # what was dropped from it, and why
        assert set(IGNORED_HERE) <= set(tuned["not_in_effect"])

    report = CliRunner().invoke(cli, ["report", "-c", str(config), "-o",
                                      str(tmp_path / "report"), "--no-color"])
    assert report.exit_code == 0, report.output
    (table,) = (tmp_path / "report").glob("in-effect-*.csv")
    rows = list(csv.DictReader(table.open()))
    striping = [r for r in rows if r["setting"] == "stripe_count"]
    assert striping and all(r["ignored"] == r["runs"] and r["in_effect"] == "0"
                            for r in striping)
    assert any(r["setting"] == "romio_cb_write" and r["in_effect"] == r["runs"] for r in rows)


@pytest.mark.mpi
def test_run_says_which_settings_did_not_take_effect(write_config):
    config = write_config()
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--cores", "2",
                                      "--set", "stripe_count=4", "--set", "cb_nodes=2",
                                      "--set", "cb_config_list=*:1", "--no-store"])
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if line.startswith("not in effect")]
    assert any("stripe_count=4: not applicable" in line and "not Lustre" in line
               for line in lines), lines
    # One node and one aggregator per node: ROMIO uses one, whatever was asked.
    assert any("cb_nodes=2: in effect 1" in line for line in lines), lines


def _run(settings, effects):
    record = {"kernel": "vpic", "cores": 2, "backend": "mpi", "status": "ok",
              "settings": settings,
              "result": {"times_s": {"total": 1.0}, "settings_effect": effects}}
    return Measurement.from_record(record)


def test_a_replaced_value_is_recommended_as_it_was_in_effect():
    settings = {"cb_nodes": 4, "romio_cb_write": "disable"}
    effects = {"cb_nodes": {"status": "differs", "requested": "4", "in_effect": "1"},
               "romio_cb_write": {"status": "in_effect", "requested": "disable",
                                  "in_effect": "disable"}}
    evaluation = Evaluation(settings, "k", times=[1.0, 1.1],
                            measurements=[_run(settings, effects), _run(settings, effects)])
    verified = verify(evaluation, {}, measured=True)
    assert verified.settings == {"cb_nodes": 1, "romio_cb_write": "disable"}
    assert verified.not_in_effect["cb_nodes"]["in_effect"] == "1"
    assert verified.unverified == {}


def test_what_could_not_be_read_back_is_not_recommended_and_said():
    settings = {"alignment": 2**20, "romio_cb_write": "disable"}
    effects = {"alignment": {"status": "unverified", "requested": "1048576"},
               "romio_cb_write": {"status": "in_effect", "requested": "disable",
                                  "in_effect": "disable"}}
    evaluation = Evaluation(settings, "k", times=[1.0], measurements=[_run(settings, effects)])
    verified = verify(evaluation, {}, measured=True)
    assert verified.settings == {"romio_cb_write": "disable"}
    assert verified.unverified == {"alignment": "1MiB"}
    # Simulated and replayed runs read nothing back: nothing to verify, nothing dropped.
    assert verify(evaluation, {"alignment": "why"}, measured=False).settings == settings
