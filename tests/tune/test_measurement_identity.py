"""One identity for "the same measurement": a tune reuses, and a campaign counts as done,
only runs of the same configuration key (kernel, arguments, access, command and metric,
scale, settings) and the same source (backend, system, file system, MPI library and layer,
simulator preset and noise, recorded data). Each field is changed once here and no run is
reused (sim and replay numbers: SIMULATED and REPLAYED)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from iotune.backends import RunRequest, make_backend
from iotune.cli.main import cli
from iotune.config import load_config
from iotune.store import Store
from iotune.store.index import StoreIndex
from iotune.store.source import describe_source, source_of
from iotune.tune.context import StoreSink
from iotune.tune.target import with_target


def tune_json(config: Path, *extra: str, budget: int = 10) -> dict:
    result = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "4",
                                      "--budget", str(budget), "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def reused(out: dict) -> int:
    return out["search"]["reused_measurements"]


@pytest.fixture
def sim_config(write_config):
    return write_config({"backend": {"name": "sim", "system": "hopper", "noise": 1.0},
                         "system": {"cores_per_node": 2},
                         "space": {"cb_nodes": [1, 2], "stripe_count": [1, 2, 4]}})


def test_the_same_sim_tune_reuses_and_a_changed_noise_preset_or_argument_does_not(
        sim_config, write_config):
    # Budget 4 is enough: every tune runs the default and the same seeded design first, so
    # a changed field that still matched would show as reused runs.
    first = tune_json(sim_config, budget=4)
    assert reused(first) == 0
    assert reused(tune_json(sim_config, budget=4)) > 0  # the control: same everything
    assert reused(tune_json(sim_config, "--noise", "2", budget=4)) == 0
    assert reused(tune_json(sim_config, "--system", "perlmutter", budget=4)) == 0
    changed = write_config({"backend": {"name": "sim", "system": "hopper", "noise": 1.0},
                            "system": {"cores_per_node": 2},
                            "kernel": {"name": "vpic", "args": {"particles_per_rank": 8192,
                                                                "timesteps": 1}},
                            "space": {"cb_nodes": [1, 2], "stripe_count": [1, 2, 4]}},
                           name="other-args.yaml")
    assert reused(tune_json(changed, budget=4)) == 0
    assert "sim of hopper, noise 1" in first["search"]["source"]


def _landscape(path: Path, slow: float) -> Path:
    rows = [{"cores": 4, "write_time": 10.0}, {"cores": 4, "write_time": 10.2},
            {"cores": 4, "write_time": 9.9}]
    for nodes in (1, 2, 4):
        for buffer in (2**20, 4 * 2**20):
            for jitter in (1.0, 1.02, 0.98):
                rows.append({"cores": 4, "cb_nodes": nodes, "cb_buffer_size": buffer,
                             "write_time": (slow if nodes == 1 else 2.5) * jitter})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_second_data_set_reuses_nothing_and_its_null_result_is_the_default(
        write_config, tmp_path):
    fast = _landscape(tmp_path / "write.csv", slow=4.0)
    null = tmp_path / "null.csv"
    frame = pd.read_csv(fast)
    frame["write_time"] = 10.0 * (1 + 0.02 * ((frame.index % 3) - 1))
    frame.to_csv(null, index=False)
    config = write_config({"backend": {"name": "replay"}, "space": {}})
    first = tune_json(config, "--replay-data", str(fast))
    assert first["recommendation"] == "tuned" and first["settings"]
    second = tune_json(config, "--replay-data", str(null))
    assert reused(second) == 0
    assert second["recommendation"] != "tuned" and second["settings"] == {}

    # results tells the two apart: a source column, and --source keeps one of them
    table = CliRunner().invoke(cli, ["results", "-c", str(config)])
    assert table.exit_code == 0 and "source" in table.output.splitlines()[0]
    digest = second["search"]["source"].rsplit(" ", 1)[1]
    only = CliRunner().invoke(cli, ["results", "-c", str(config), "--source", digest,
                                    "--format", "json"])
    kept = json.loads(only.stdout)
    assert kept and {r["source"] for r in kept} == {second["search"]["source"]}
    assert len(kept) == second["search"]["runs"]

    # the report makes one dataset of each data set: file names and speedups apart
    out = tmp_path / "report"
    made = CliRunner().invoke(cli, ["report", "-c", str(config), "-o", str(out),
                                    "--format", "svg"])
    assert made.exit_code == 0, made.output
    manifest = json.loads((out / "manifest.json").read_text())
    sources = [d["source"] for d in manifest["datasets"]]
    assert sorted(sources) == sorted([first["search"]["source"], second["search"]["source"]])
    speedups = {path.name: pd.read_csv(path) for path in out.glob("speedup-*.csv")}
    assert sorted(speedups) == ["speedup-vpic-replay-1.csv", "speedup-vpic-replay-2.csv"]
    # a blank speedup: the best found is the default itself, no gain
    best = sorted(float(table["speedup"].fillna(1.0).max()) for table in speedups.values())
    assert best[0] < 1.2 < 2.0 < best[1]  # the null data set's own runs show no gain


def test_training_data_of_another_source_is_not_fitted_on(tmp_path):
    store = Store(tmp_path / "mixed.jsonl")
    base = {"campaign": "tune", "kernel": "vpic", "backend": "sim", "cores": 4,
            "config_key": "k1", "status": "ok", "settings": {"cb_nodes": 1},
            "result": {"times_s": {"total": 1.0}}}
    store.append({**base, "source": "sim of hopper, noise 1"})
    store.append({**base, "source": "sim of hopper, noise 2"})
    sink = StoreSink(StoreIndex(store), kernel="vpic", backend="sim",
                     source="sim of hopper, noise 2")
    assert [m.source for m in sink.earlier("k1")] == ["sim of hopper, noise 2"]
    assert list(sink.training_frame()["source"]) == ["sim of hopper, noise 2"]


def test_target_access_command_and_metric_change_the_configuration_key(write_config):
    config = load_config(write_config({}))
    write = with_target(config, "write", backend="mpi")
    read = with_target(config, "read", backend="mpi")
    key = [RunRequest("vpic", 4, {}, c.kernel.args).key for c in (write, read)]
    assert key[0] != key[1]  # access write vs read: a run timing the other phase
    params = {"command": "app {scratch}", "metric": "wall", "output_dir": "",
              "preload": "auto"}
    keys = {RunRequest("command", 4, {}, p).key for p in (
        params, {**params, "command": "app2 {scratch}"}, {**params, "metric": "io_time"})}
    assert len(keys) == 3


def test_the_mpi_source_names_system_file_system_library_and_layer(write_config, tmp_path):
    fake = tmp_path / "python"
    fake.write_text(f"#!/bin/sh\nexec {sys.executable} -c "
                    "'print(\"Open MPI v9.9.9, package: test\")'\n")
    fake.chmod(0o755)
    base = {"system": {"name": "clusterA", "python": str(fake), "mpi_io": "romio"}}
    source = make_backend(load_config(write_config(base))).source()
    assert source.startswith("mpi on clusterA, ")
    assert source.endswith("Open MPI v9.9.9, package: test, MPI-IO romio")
    other = make_backend(load_config(write_config(
        {"system": {"name": "clusterB", "python": str(fake)}}, name="b.yaml"))).source()
    assert other != source and "MPI-IO default" in other
    # a record of before sources were stored derives the same line from its fields
    old = {"backend": "mpi", "system": "clusterA", "fs_type": source.split(", ")[1],
           "result": {"mpi_library": "Open MPI  v9.9.9, package: test", "mpi_io": "^ompio"}}
    assert source_of(old) == source
    assert describe_source("mpi", "clusterA", fs_type="lustre") != describe_source(
        "mpi", "clusterA", fs_type="ext4")


def test_a_campaign_of_another_source_does_not_count_as_done(hopper_config):
    def train(*extra: str) -> str:
        result = CliRunner().invoke(cli, ["train", "-c", str(hopper_config), "--backend",
                                          "sim", "--no-color", *extra])
        assert result.exit_code == 0, result.output
        return result.output

    assert "272 run(s)" in train()
    assert "0 run(s), 272 already in the store" in train()  # the control
    assert "272 run(s), 0 already in the store" in train("--noise", "0.5")
