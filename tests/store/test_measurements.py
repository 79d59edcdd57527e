"""Typed measurements and the one-pass store index: what tune reads, and how often."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.store import Store
from iotune.store import cache as store_cache
from iotune.store import index as store_index
from iotune.store.index import StoreIndex
from iotune.store.records import Measurement, PhaseTimes


def _record(key: str, total: float | None, status: str = "ok", campaign: str = "tune",
            backend: str = "replay") -> dict:
    return {"config_key": key, "kernel": "vpic", "cores": 4, "settings": {"stripe_count": 2},
            "params": {}, "rep": 0, "backend": backend, "campaign": campaign, "status": status,
            "error": None if status == "ok" else "exit code 1",
            "result": {"times_s": {"total": total, "open": None, "write": None,
                                   "close": None},
                       "bandwidth_mib_s": None if total is None else 64 / total,
                       "bytes_written": 2**26}}


def test_a_measurement_reads_what_a_backend_left_unknown():
    m = Measurement.from_record(_record("k", 2.0))
    assert m.ok and m.time_s == 2.0 and m.times == PhaseTimes(total=2.0)
    assert m.times.text() == "?/?/?"
    row = m.row()
    assert row["write_time"] == 2.0 and row["open_time"] is None and row["stripe_count"] == 2
    failed = Measurement.from_record(_record("k", None, status="failed"))
    assert not failed.ok and failed.error == "exit code 1"
    with pytest.raises(ValueError, match="no time"):
        _ = failed.time_s


def test_the_index_groups_by_configuration_and_keeps_probes_apart(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    store.append(_record("a", 1.0))
    store.append(_record("a", 1.2))
    store.append(_record("b", 3.0, campaign="train"))
    store.append(_record("c", 2.0, backend="sim"))
    store.append({"campaign": "probe", "kind": "latency", "backend": "probe",
                  "targets": [{"latency_s": 0.01}]})
    index = StoreIndex(store)
    assert len(index.measurements) == 4 and len(index.probes) == 1
    assert {k: len(v) for k, v in index.by_key(backend="replay", campaign="tune").items()} \
        == {"a": 2}
    frame = index.training_frame("vpic", "replay")
    assert sorted(frame["write_time"]) == [1.0, 1.2, 3.0]
    index.append(_record("d", 0.5))  # appended through the index: stored and indexed
    assert len(Store(store.path).records()) == 6
    assert "d" in index.by_key(backend="replay", campaign="tune")


def test_one_tune_reads_the_store_once_through_its_cache(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a bare directory: the built-in config, ./iotune-store.jsonl
    data = tmp_path / "landscape.csv"
    rows = [{"cores": 4, "stripe_count": c, "stripe_size": s * 2**20, "write_time": 1 + c / s}
            for c in (1, 2, 4, 8) for s in (1, 4, 16)]
    rows.append({"cores": 4, "write_time": 5.0})
    pd.DataFrame(rows).to_csv(data, index=False)
    store = tmp_path / "iotune-store.jsonl"
    Store(store).append(_record("old", 9.0))  # something to read
    snapshots: list[Path] = []
    original = store_cache.open_snapshot

    def counted(path, **options):
        snapshots.append(Path(path))
        return original(path, **options)

    def parsed(self: Store):
        raise AssertionError("a tune parses no line through Store.iter_records")

    monkeypatch.setattr(store_index, "open_snapshot", counted)
    monkeypatch.setattr(Store, "iter_records", parsed)
    result = CliRunner().invoke(cli, [
        "tune", "--backend", "replay", "--replay-data", str(data), "--cores", "4",
        "--budget", "6", "--strategy", "random"])
    assert result.exit_code == 0, result.output
    assert snapshots == [store]


def test_run_on_replay_prints_its_record(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "landscape.csv"
    pd.DataFrame([{"cores": 4, "write_time": 1.5}, {"cores": 4, "write_time": 1.7}]).to_csv(
        data, index=False)
    result = CliRunner().invoke(cli, ["run", "--backend", "replay", "--replay-data", str(data),
                                      "--cores", "4", "--store", str(tmp_path / "s.jsonl")])
    assert result.exit_code == 0, result.output
    # labelled as replayed; no phase times, settings read back or verdicts it did not have
    assert "backend          replay (replayed)" in result.output
    assert "?" not in result.output and "hints_in_effect" not in result.output


def test_results_table_shows_sizes_as_written_and_unset_settings_as_a_dash(tmp_path,
                                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "landscape.csv"
    pd.DataFrame([{"cores": 4, "write_time": 1.5},
                  {"cores": 4, "cb_buffer_size": 4194304, "write_time": 1.2}]).to_csv(
        data, index=False)
    store = str(tmp_path / "s.jsonl")
    for extra in ([], ["--set", "cb_buffer_size=4MiB"]):
        ran = CliRunner().invoke(cli, ["run", "--backend", "replay", "--replay-data", str(data),
                                       "--cores", "4", "--store", store, *extra])
        assert ran.exit_code == 0, ran.output
    table = CliRunner().invoke(cli, ["results", "--store", store])
    assert table.exit_code == 0, table.output
    header, _, default, tuned = table.stdout.splitlines()
    column = header.split().index("cb_buffer_size")
    assert default.split()[column] == "-" and tuned.split()[column] == "4MiB"
    assert "e+06" not in table.stdout and not re.search(r"\bnan\b", table.stdout)
