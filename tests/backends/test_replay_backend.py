"""The replay backend answers from recorded data only, labelled as replayed."""

import dataclasses
import json

import pandas as pd
import pytest
from click.testing import CliRunner

from iotune.backends import RunRequest, make_backend
from iotune.cli.common import with_backend
from iotune.cli.main import cli
from iotune.config import load_config
from iotune.errors import ConfigError, DataError
from iotune.execution.files import file_sha256


@pytest.fixture
def landscape(tmp_path):
    rows = []
    for cb in (1, 2, 4):
        for mode in ("enable", "disable"):
            for jitter in (1.0, 1.1, 0.9):
                rows.append({"cores": 4, "cb_nodes": cb, "romio_cb_write": mode,
                             "seconds": (2.0 / cb + (0.5 if mode == "enable" else 0)) * jitter})
    rows += [{"cores": 4, "cb_nodes": None, "romio_cb_write": None, "seconds": 3.0}]
    path = tmp_path / "landscape.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


@pytest.fixture
def config(write_config, landscape):
    path = write_config({"backend": {"name": "replay", "replay_data": str(landscape),
                                     "replay_time_column": "seconds"}})
    return path


def test_records_carry_the_source_hash_and_label(config, landscape):
    backend = make_backend(load_config(config))
    record = backend.measure(RunRequest("vpic", 4, {"cb_nodes": 2, "romio_cb_write": "disable"},
                                        {"particles_per_rank": 4096, "timesteps": 1}))
    assert record["backend"] == "replay" and record["provenance"] == "replayed"
    assert record["result"]["source_sha256"] == file_sha256(landscape)
    assert record["result"]["times_s"]["total"] in (1.0, 1.1, 0.9)


def test_draws_are_seeded_and_median_is_available(config):
    loaded = load_config(config)
    backend = make_backend(loaded)
    request = RunRequest("vpic", 4, {"cb_nodes": 1, "romio_cb_write": "enable"},
                         loaded.kernel.args)
    draws = [backend.measure(request, rep)["result"]["times_s"]["total"] for rep in range(6)]
    assert draws == [backend.measure(request, rep)["result"]["times_s"]["total"]
                     for rep in range(6)]
    assert set(draws) <= {2.5, 2.75, 2.25}
    picking_median = dataclasses.replace(
        loaded, backend=dataclasses.replace(loaded.backend, replay_pick="median"))
    median = make_backend(picking_median)
    assert median.measure(request, 0)["result"]["times_s"]["total"] == 2.5


def test_unrecorded_configuration_is_an_error(config):
    backend = make_backend(load_config(config))
    with pytest.raises(DataError, match=r"replay: cb_nodes=4 romio_cb_write=disable at 8 cores "
                                        r"was not recorded in landscape.csv"):
        backend.measure(RunRequest("vpic", 8, {"cb_nodes": 4, "romio_cb_write": "disable"}, {}))


def test_tune_searches_only_recorded_configurations(config):
    out = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "4", "--strategy",
                                   "exhaustive", "--format", "json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.output[out.output.index("{"):out.output.rindex("}") + 1])
    assert result["provenance"] == "replayed"
    assert result["search"]["configurations"] == 6
    assert result["settings"] == {"cb_nodes": 4, "romio_cb_write": "disable"}
    assert result["default"]["time_s"] == 3.0


def test_missing_time_column_names_it(write_config, landscape):
    path = write_config({"backend": {"name": "replay", "replay_data": str(landscape)}})
    with pytest.raises(DataError, match=r"backend\.replay_time_column: column .write_time. is not"):
        make_backend(with_backend(load_config(path), None, None, None))


def test_repetitions_take_each_recorded_run_before_any_again():
    from iotune.backends.replay import replay_index

    for key in ("00ff", "1234abcd", "ffffffffffffffff"):
        first = [replay_index(3, 7, key, rep) for rep in range(3)]
        assert sorted(first) == [0, 1, 2]
        assert [replay_index(3, 7, key, rep) for rep in range(3, 6)] == first
    assert replay_index(1, 0, "ab", 5) == 0


def replay_config(write_config, data, **backend):
    """A config replaying ``data`` (times in its ``seconds`` column)."""
    return write_config({"backend": {"name": "replay", "replay_time_column": "seconds",
                                     "replay_data": str(data), **backend}})


def test_an_unknown_column_is_refused_with_the_closest_setting(write_config, landscape, tmp_path):
    frame = pd.read_csv(landscape).rename(columns={"cb_nodes": "collective_metadata"})
    frame.to_csv(tmp_path / "misspelt.csv", index=False)
    path = replay_config(write_config, tmp_path / "misspelt.csv")
    with pytest.raises(DataError, match=r"misspelt.csv: column 'collective_metadata' is not a "
                                        r"setting.*did you mean 'coll_metadata'\?"):
        make_backend(load_config(path))
    result = CliRunner().invoke(cli, ["tune", "-c", str(path), "--cores", "4"])
    assert result.exit_code == 3 and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1  # one line, naming the column

    declared = replay_config(write_config, tmp_path / "misspelt.csv",
                             replay_ignore_columns=["collective_metadata"])
    backend = make_backend(load_config(declared))
    assert backend.candidates(4) == [{"romio_cb_write": m} for m in ("enable", "disable")]


def test_a_value_that_breaks_its_setting_s_rule_names_column_and_line(write_config, landscape,
                                                                     tmp_path):
    frame = pd.read_csv(landscape)
    frame.loc[4, "romio_cb_write"] = "enabled"
    frame.to_csv(tmp_path / "typo.csv", index=False)
    path = replay_config(write_config, tmp_path / "typo.csv")
    with pytest.raises(ConfigError, match=r"typo.csv: column 'romio_cb_write', line 6: "
                                        r"'enabled' is not one of"):
        make_backend(load_config(path))


def test_an_export_of_the_store_replays_and_its_failed_runs_are_left_out(tmp_path,
                                                                          monkeypatch):
    """``results --export`` writes record columns (id, rep, status, bandwidth, the kernel's
    arguments...): the replay backend takes that file as it is, leaves out failed runs and
    says so, and a tune over it searches the recorded configurations."""
    from tests.cli_result import invoke

    monkeypatch.chdir(tmp_path)
    sim = ("run", "--backend", "sim", "--system", "hopper", "--cores", "48",
           "--store", "st.jsonl")
    for settings in ([], ["--set", "cb_nodes=1"], ["--set", "cb_nodes=2"]):
        assert invoke(*sim, "--reps", "2", *settings).exit_code == 0
    assert invoke("results", "--store", "st.jsonl", "--export", "runs.csv").exit_code == 0
    frame = pd.read_csv(tmp_path / "runs.csv")
    assert {"id", "rep", "status", "bandwidth_mib_s", "particles_per_rank"} <= set(frame.columns)
    failed = frame.iloc[[0]].assign(status="failed", write_time=float("nan"))
    pd.concat([frame, failed]).to_csv(tmp_path / "runs.csv", index=False)
    result = CliRunner().invoke(cli, ["tune", "--backend", "replay", "--replay-data",
                                      "runs.csv", "--cores", "48", "--strategy", "exhaustive",
                                      "--no-color"])
    assert result.exit_code == 0, result.output
    assert "1 failed run(s) (status not ok) left out" in result.output
    assert "cb_nodes" in result.output
