"""The commands on simulated stores: states, classify, placement, and their errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from iotune.backends.base import RunRequest
from iotune.backends.sim import SimBackend
from iotune.cli.main import IotuneGroup
from iotune.cli.variability_commands import COMMANDS
from iotune.config import build_config
from iotune.sim import load_system
from iotune.store import Store
from iotune.variability import probe_base_latency

GROUP = IotuneGroup(name="iotune", commands={str(c.name): c for c in COMMANDS})


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(GROUP, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture(scope="module")
def sim_store(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("store") / "s.jsonl"
    code, out, err = run("probe", "--store", str(path), "--simulate", "hopper", "--rounds",
                         "150", "--targets", "3", "--seed", "5", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["rounds_recorded"] == 150 and "SIMULATED" in err
    return path


def test_states_reports_both_components(sim_store: Path) -> None:
    code, out, _ = run("states", "--store", str(sim_store), "--format", "json")
    assert code == 0
    data = json.loads(out)
    idle, busy = data["components"]
    assert (idle["state"], busy["state"]) == ("idle", "busy") and data["bimodal"]
    base = probe_base_latency(load_system("hopper"))  # 1 MiB at one OST of the preset
    assert idle["median_s"] == pytest.approx(base, rel=0.05)
    assert busy["median_s"] == pytest.approx(1.386 * base, rel=0.1)
    assert idle["weight"] + busy["weight"] == pytest.approx(1)
    assert sum(data["labels"].values()) == data["samples"] == 450
    code, table, _ = run("states", "--store", str(sim_store))
    assert code == 0 and "idle" in table and "two states    yes" in table


def test_states_sampled_labels_are_seeded(sim_store: Path) -> None:
    args = ["states", "--store", str(sim_store), "--label", "sample", "--samples",
            "--format", "csv"]
    first, second, other = (run(*args, "--seed", s)[1] for s in ("1", "1", "2"))
    assert first == second != other
    header, *rows = first.splitlines()
    assert header.split(",")[-2:] == ["posterior_busy", "state"] and len(rows) == 450


def test_classify_scores_each_target_both_ways_with_progress(sim_store: Path) -> None:
    code, out, err = run("classify", "--store", str(sim_store), "--classifier", "svm,rf",
                         "--folds", "3", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["per_target"] and data["targets"] == ["OST0000", "OST0001", "OST0002"]
    assert data["samples"] == 447 and data["horizon"] == 1 and data["validation"] == "both"
    assert [c["classifier"] for c in data["classifiers"]] == ["svm", "rf"]
    assert len(data["scores"]) == 6 and {r["samples"] for r in data["scores"]} == {149}
    for row in data["scores"]:
        assert 0.5 < row["accuracy"] <= 1 and 0.5 < row["roc_auc"] <= 1
        assert 0 <= row["time_accuracy"] <= 1 and row["time_test_samples"] == 30
    summary = data["classifiers"][0]
    svm = [r["accuracy"] for r in data["scores"] if r["classifier"] == "svm"]
    assert summary["accuracy"] == pytest.approx(sum(svm) / 3)
    assert (summary["accuracy_min"], summary["accuracy_max"]) == (min(svm), max(svm))
    assert data["features"][:3] == ["latency", "window_mean", "window_std"]
    steps = [line for line in err.splitlines() if line.startswith("classify [")]
    assert len(steps) == 6 and steps[0].startswith("classify [1/6] OST0000 svm: k-fold 0.")
    assert "time-ordered 0." in steps[0]


def test_classify_pooled_by_time_only(sim_store: Path) -> None:
    code, out, err = run("classify", "--store", str(sim_store), "--classifier", "rf",
                         "--pooled", "--validation", "time", "--train-fraction", "0.6")
    assert code == 0, err
    assert "train on the earliest 60%, test on the rest" in out and "stratified" not in out
    assert "targets     pooled" in out and "OST0001" not in out
    assert err.count("classify [") == 1


def test_placement_from_the_store_and_by_hand(sim_store: Path) -> None:
    code, out, _ = run("placement", "--store", str(sim_store), "--total", "288GiB",
                       "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["n_idle"] + data["n_busy"] == 3
    assert len(data["idle_targets"]) == data["n_idle"]
    assert data["t_busy"] / data["t_idle"] == pytest.approx(1.45, rel=0.1)
    assert data["replay"]["targets"] == 3 and data["replay"]["test_rounds"] == 30
    code, out, _ = run("placement", "--idle", "120", "--busy", "36", "--t-idle", "1.9",
                       "--t-busy", "2.7", "--store", str(sim_store.parent / "none.jsonl"))
    assert code == 0 and "0.8257" in out and "1.324x over even placement" in out
    assert "replayed gain       not replayed: store " in out and "no such file" in out


def test_placement_prints_the_replayed_gain_beside_the_analytic_one(sim_store: Path) -> None:
    code, out, _ = run("placement", "--idle", "120", "--busy", "36", "--t-idle", "1.85",
                       "--t-busy", "2.7", "--store", str(sim_store), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert data["speedup"] == pytest.approx(1.353, abs=5e-4)
    gains = {f["forecast"]: f["mean_gain"] for f in data["replay"]["forecasts"]}
    assert set(gains) == {"persistence", "svm", "hindsight"}
    assert gains["persistence"] < 1.1 < data["speedup"]  # the store contradicts eq. 3
    assert data["replay"]["pays"] is (max(gains["persistence"], gains["svm"]) >= 1.01)
    code, table, _ = run("placement", "--idle", "120", "--busy", "36", "--t-idle", "1.85",
                         "--t-busy", "2.7", "--store", str(sim_store))
    assert "1.353x over even placement (analytic" in table
    assert f"persistence {gains['persistence']:.3f}x" in table
    assert "placement           " + data["replay"]["verdict"] in table
    code, table, _ = run("placement", "--idle", "1", "--busy", "1", "--t-idle", "1",
                         "--t-busy", "2", "--store", str(sim_store), "--no-replay")
    assert code == 0 and "replayed" not in table


@pytest.mark.parametrize(("args", "code", "message"), [
    (["placement", "--idle", "3"], 2, "--idle/--busy: give both target counts"),
    (["placement", "--idle", "0", "--busy", "0", "--t-idle", "1", "--t-busy", "2"], 2,
     "--idle/--busy: 0 targets"),
    (["classify", "--classifier", "knn"], 2,
     "--classifier: 'knn' is not one of svm, rf, gb, cart, nb, mlp"),
    (["placement", "--classifier", "svm,rf"], 2, "--classifier: 'svm,rf' is not one "
     "classifier name"),
    (["classify", "--train-fraction", "1.5"], 2,
     "'--train-fraction': 1.5 is not in the range 0<x<1"),
])
def test_option_errors_are_one_line(args: list[str], code: int, message: str,
                                    sim_store: Path) -> None:
    exit_code, _, err = run(*args, "--store", str(sim_store))
    assert exit_code == code and message in err and err.count("\n") == 1


def test_data_errors(tmp_path: Path, sim_store: Path) -> None:
    code, _, err = run("states", "--store", str(tmp_path / "none.jsonl"))
    assert code == 4 and "no such file" in err
    small = tmp_path / "small.jsonl"
    run("probe", "--store", str(small), "--simulate", "hopper", "--rounds", "12",
        "--targets", "2")
    code, _, err = run("classify", "--store", str(small))
    assert code == 3 and err == ("iotune: error: target OST0000: state model: 12 samples are "
                                 "too few; fitting idle and busy states needs at least 20\n")
    code, _, err = run("classify", "--store", str(small), "--pooled")
    assert code == 3 and "22 labelled samples are too few" in err
    mixed = tmp_path / "mixed.jsonl"
    mixed.write_text(small.read_text())
    Store(mixed).append({"campaign": "probe", "kind": "latency", "backend": "probe",
                         "size_bytes": 2**20, "targets": [{"latency_s": 0.004}]})
    code, _, err = run("states", "--store", str(mixed))
    assert code == 3 and "several backends in the store (probe, sim); choose one" in err
    code, _, err = run("states", "--store", str(mixed), "--backend", "probe")
    assert code == 3 and "1 samples are too few" in err


def test_states_of_sim_backend_runs(tmp_path: Path) -> None:
    config = build_config({"system": {"scratch": str(tmp_path), "cores_per_node": 24},
                           "backend": {"name": "sim", "noise": 1.0}}, tmp_path)
    backend = SimBackend(config)
    store = Store(tmp_path / "runs.jsonl")
    params = {"particles_per_rank": 1 << 20, "timesteps": 1}
    truth = []
    for count in (16, 64):
        request = RunRequest("vpic", 512, {"stripe_count": count}, params)
        for rep in range(150):
            record = store.append({"campaign": "train", **backend.measure(request, rep)})
            truth.append(record["state"])
    code, out, err = run("states", "--store", str(store.path), "--source", "runs",
                         "--samples", "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    idle, busy = data["components"]
    assert data["unit"] == "rel" and data["samples"] == 300
    assert busy["mean_rel"] / idle["mean_rel"] == pytest.approx(1.45, rel=0.1)
    labels = [row["state"] for row in data["samples_labelled"]]
    agreement = sum(a == b for a, b in zip(labels, truth, strict=True)) / len(truth)
    assert agreement > 0.85
