"""The append-only store: durable lines, torn lines, concurrent appenders, DataFrame view."""

import json
import multiprocessing

from iotune.store import Store
from iotune.store.index import read_dataframe


def _record(i, status="ok"):
    return {"config_key": f"k{i}", "kernel": "vpic", "cores": 2, "settings": {"cb_nodes": i},
            "params": {"timesteps": 1}, "rep": 0, "backend": "mpi", "provenance": "measured",
            "status": status,
            "result": {"times_s": {"total": 1.0 + i, "open": 0.1, "write": 0.8, "close": 0.1},
                       "bandwidth_mib_s": 100.0 / (1 + i), "bytes_written": 2**30}}


def test_append_and_read(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    written = store.append(_record(1))
    assert written["schema_version"] == 1 and len(written["id"]) == 32
    assert store.records() == [written]


def test_directory_store_uses_measurements_file(tmp_path):
    store = Store(tmp_path)
    store.append(_record(1))
    assert (tmp_path / "measurements.jsonl").exists()


def test_torn_last_line_is_ignored_and_sealed(tmp_path):
    path = tmp_path / "s.jsonl"
    store = Store(path)
    store.append(_record(1))
    with path.open("ab") as handle:
        handle.write(b'{"schema_version": 1, "id": "torn", "sta')  # a crash mid-write
    assert [r["config_key"] for r in store.records()] == ["k1"]
    store.append(_record(2))
    assert [r["config_key"] for r in store.records()] == ["k1", "k2"]


def _appender(path, start):
    store = Store(path)
    for i in range(start, start + 50):
        store.append(_record(i))


def test_concurrent_appenders_lose_nothing(tmp_path):
    path = tmp_path / "s.jsonl"
    procs = [multiprocessing.Process(target=_appender, args=(path, s)) for s in (0, 1000, 2000)]
    for p in procs:
        p.start()
    for p in procs:
        p.join()
    lines = path.read_text().splitlines()
    assert len(lines) == 150
    keys = {json.loads(line)["config_key"] for line in lines}
    assert len(keys) == 150


def test_dataframe_flattens_settings_and_times(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    store.append(_record(1))
    store.append(_record(2, status="failed"))
    frame = read_dataframe(store.path)
    assert list(frame["cb_nodes"]) == [1]
    assert frame.loc[0, "write_time"] == 2.0
    assert frame.loc[0, "file_size_gib"] == 1.0
    assert len(read_dataframe(store.path, include_failed=True)) == 2
