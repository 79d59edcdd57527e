"""The library behind probe, states, classify and placement, without click."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from iotune.errors import ConfigError, DataError, StoreError
from iotune.sim import load_system
from iotune.store import Store
from iotune.variability import ProbeSettings
from iotune.variability.analysis import (
    ProbeStates,
    label_states,
    latest_probe_states,
    parse_classifiers,
    placement_document,
)
from iotune.variability.classification import ClassifyOptions, classify_states
from iotune.variability.probe import probe_directory
from iotune.variability.samples import probe_samples, run_samples, samples_of, store_records
from iotune.variability.simulate import (
    record_simulated_probe,
    simulate_probe_trace,
    simulated_round_count,
)

HOPPER = load_system("hopper")
DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def trace() -> list[dict]:
    """200 simulated rounds of 3 targets, with true states and queue features."""
    return simulate_probe_trace(HOPPER, 200, np.random.default_rng(11), targets=3)


def test_probe_samples_are_one_backend_and_one_size(trace: list[dict]) -> None:
    samples = probe_samples(trace)
    assert (samples.source, samples.column, samples.unit) == ("probe", "latency", "s")
    assert samples.backend == "sim" and samples.size_bytes == 2**20
    assert samples.description == "probe latencies (backend sim, 1MiB writes)"
    assert len(samples.values) == 600
    assert samples.values[0] == trace[0]["targets"][0]["latency_s"]
    other_size = [{**trace[0], "size_bytes": 4096}]
    with pytest.raises(DataError, match=r"several sizes \(1048576, 4096 bytes\)"):
        probe_samples(trace + other_size)
    with pytest.raises(DataError, match="--backend: no probe rounds of backend 'probe'"):
        samples_of(trace, "probe", backend="probe")
    with pytest.raises(DataError, match=r"^no measurements in the store$"):
        samples_of(trace, "runs")


def test_run_samples_are_relative_to_the_others_of_their_configuration() -> None:
    """Too few for a mixture, so each centre is the lower half of the other two: the
    faster of them."""
    records = [{"campaign": "train", "status": "ok", "backend": "sim", "config_key": key,
                "started_at": 1.0 + i, "result": {"times_s": {"total": t}}}
               for i, (key, t) in enumerate([("a", 1.0), ("a", 2.0), ("a", 4.0),
                                             ("b", 10.0), ("b", 10.0), ("b", 30.0),
                                             ("c", 5.0)])]
    samples = run_samples(records)
    assert (samples.source, samples.unit) == ("runs", "rel")
    assert samples.values == pytest.approx([0.5, 2.0, 4.0, 1.0, 1.0, 3.0])  # c: too few


def test_store_records_needs_the_file(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match=r"store .*none.jsonl: no such file"):
        store_records(Store(tmp_path / "none.jsonl"))
    store = Store(tmp_path / "s.jsonl")
    store.append({"campaign": "probe"})
    assert [r["campaign"] for r in store_records(store)] == ["probe"]


def test_state_labels_find_the_simulated_states(trace: list[dict]) -> None:
    samples = probe_samples(trace)
    states = label_states(samples)
    truth = samples.frame["true_state"].tolist()
    agreement = np.mean([a == b for a, b in zip(states.labels, truth, strict=True)])
    assert agreement > 0.85
    data = states.document()
    assert data["bimodal"] and data["samples"] == 600 and "seed" not in data
    assert [c["state"] for c in data["components"]] == ["idle", "busy"]
    assert data["components"][0]["median_s"] < data["components"][1]["median_s"]
    assert sum(data["labels"].values()) == 600 and "samples_labelled" not in data
    rows = states.document(with_samples=True)["samples_labelled"]
    assert len(rows) == 600 and set(rows[0]) == {"time", "probe_id", "target", "latency",
                                                 "posterior_busy", "state"}
    busy = [r["posterior_busy"] for r in rows if r["state"] == "busy"]
    assert min(busy) > 0.5


def test_sampled_labels_are_seeded(trace: list[dict]) -> None:
    samples = probe_samples(trace)
    first, again, other = (label_states(samples, "sample", seed) for seed in (1, 1, 2))
    assert first.labels == again.labels != other.labels
    assert first.document()["seed"] == 1
    with pytest.raises(ConfigError, match="--label: 'vote' is not one of map, sample"):
        label_states(samples, "vote")


def test_classification_beats_guessing(trace: list[dict]) -> None:
    result = classify_states(probe_samples(trace), ClassifyOptions(
        classifiers=["rf"], folds=3, horizon=1, window_s=600, validation="kfold",
        per_target=False))
    data = result.document()
    assert data["samples"] == 597  # 3 targets x 200 rounds, minus the last of each
    assert data["targets"] == ["all"] and not data["per_target"]
    assert data["features"][:3] == ["latency", "window_mean", "window_std"]
    assert "running_jobs" in data["features"]
    (score,) = data["classifiers"]
    assert score["accuracy"] > score["majority_accuracy"]
    assert score["time_accuracy"] is None
    assert result.predicts == "state 1 round(s) ahead"
    now = classify_states(probe_samples(trace), ClassifyOptions(
        classifiers=["rf"], folds=3, horizon=0, use_queue=False, validation="kfold"))
    assert now.predicts == "the sample's own state"
    assert "running_jobs" not in now.document()["features"]


def test_classifying_runs_needs_probe_latencies() -> None:
    records = [{"campaign": "train", "status": "ok", "backend": "sim", "config_key": "a",
                "started_at": float(i), "result": {"times_s": {"total": 1.0 + i / 10}}}
               for i in range(5)]
    with pytest.raises(DataError, match="no measurement carries a probe latency"):
        classify_states(samples_of(records, "runs"), ClassifyOptions(horizon=3))


def test_classifier_names() -> None:
    assert parse_classifiers(" svm, gb ,") == ["svm", "gb"]
    for text, bad in (("svm,knn", "'knn'"), ("", "''")):
        with pytest.raises(ConfigError, match=f"--classifier: {bad} is not one of "
                                              "svm, rf, gb, cart, nb, mlp"):
            parse_classifiers(text)


def test_latest_round_states_and_placement(trace: list[dict]) -> None:
    states = latest_probe_states(trace)
    last = trace[-1]
    truth = {t["target"]: t["state"] for t in last["targets"]}
    assert sorted(states.idle_targets + states.busy_targets) == sorted(truth)
    assert states.round_time == last["time"]
    assert states.t_busy / states.t_idle == pytest.approx(1.45, rel=0.1)
    data = placement_document(None, None, states, total=3 * 2**30)
    assert (data["n_idle"], data["n_busy"]) == (len(states.idle_targets),
                                                len(states.busy_targets))
    assert data["times_from"].startswith("mixture means of 600 probe latencies (backend sim)")
    shares = (data["n_idle"] * data["bytes_per_idle_target"]
              + data["n_busy"] * data["bytes_per_busy_target"])
    assert 3 * 2**30 - 3 <= shares <= 3 * 2**30


def test_placement_by_hand_needs_no_store() -> None:
    data = placement_document((120, 36), (1.9, 2.7))
    assert data["alpha"] == pytest.approx(0.8257, abs=1e-4)
    assert data["speedup"] == pytest.approx(1.324, abs=1e-3)
    assert "times_from" not in data and "idle_targets" not in data
    states = ProbeStates(["OST0000"], ["OST0001", "OST0002"], 5.0, 1.0, 2.0, "given")
    mixed = placement_document((3, 1), None, states)
    assert (mixed["n_idle"], mixed["t_busy"], mixed["times_from"]) == (3, 2.0, "given")
    with pytest.raises(ValueError, match="counts and times, or probe states"):
        placement_document((3, 1), None)


def test_simulated_probe_session_is_recorded(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.jsonl")
    settings = ProbeSettings(interval_s=30, duration_s=300, queue="none")
    records = record_simulated_probe(HOPPER, store, settings, targets=2, seed=4, end=1000.0)
    assert len(records) == 10
    assert [(r["probe_id"], r["round"]) for r in store.records()] == [
        (records[0]["probe_id"], i) for i in range(10)]
    assert [r["time"] for r in records] == [700.0 + 30 * i for i in range(10)]
    assert all("queue" not in r and len(r["targets"]) == 2 for r in records)
    assert simulated_round_count(ProbeSettings(interval_s=30, duration_s=10)) == 1
    assert simulated_round_count(ProbeSettings(rounds=7)) == 7
    with pytest.raises(ConfigError, match="--duration: 'none' needs --rounds with --simulate"):
        simulated_round_count(ProbeSettings(duration_s=None))


def test_probe_directory_on_lustre_probes_each_ost(tmp_path: Path, monkeypatch,
                                                   fake_program) -> None:
    import iotune.execution.fsinfo

    monkeypatch.setattr(iotune.execution.fsinfo, "filesystem_of", lambda path: ("lustre", "/"))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    store = Store(tmp_path / "s.jsonl")
    settings = ProbeSettings(interval_s=0.01, rounds=1, size=4096, queue="none")
    lfs = fake_program("lfs", f'if [ "$1" = df ]; then cat {DATA / "lfs_df_example.txt"}; '
                              'else touch "$6"; fi')
    summary = probe_directory(scratch, store, settings, lfs=lfs)
    assert summary.targets == ["OST0000", "OST0001", "OST0003", "OST0004"]  # from lfs df
    chosen = probe_directory(scratch, store, settings, osts="2-3", lfs=lfs)
    assert chosen.as_dict() == {"probe_id": chosen.probe_id, "stopped_by": "rounds",
                                "rounds_recorded": 1, "rounds_dropped": 0, "targets": 2,
                                "queue_snapshots": 0, "fs_type": "lustre"}
    assert [t["ost"] for t in store.records()[-1]["targets"]] == [2, 3]
    assert list(scratch.iterdir()) == []


def test_probe_directory_elsewhere_probes_one_file(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.jsonl")
    settings = ProbeSettings(interval_s=0.01, rounds=2, size=4096, queue="none")
    summary = probe_directory(tmp_path, store, settings, system="laptop")
    assert summary.targets == ["scratch"] and summary.recorded == 2
    assert {r["system"] for r in store.records()} == {"laptop"}
    with pytest.raises(ConfigError, match=r"^--osts: .* not Lustre; OSTs cannot be chosen"):
        probe_directory(tmp_path, store, settings, osts="0")
    with pytest.raises(ConfigError, match=r"^system.scratch: .*missing is not a directory"):
        probe_directory(tmp_path / "missing", store, settings)
