"""Two writers, one store: concurrent appenders and two real tunes at once tear nothing,
duplicate nothing, lose nothing, and leave a cache that reads like the journal."""

from __future__ import annotations

import json
import multiprocessing
import random
import subprocess
import sys
import uuid
from pathlib import Path

import pandas as pd
from store_helpers import reference_frame, segment_files, small_cache, varied_record

from iotune.settings.values import config_key
from iotune.store import Store
from iotune.store import cache as store_cache
from iotune.store.index import read_dataframe


def _append(path: Path, writer: str, count: int) -> None:
    store = Store(path)
    rng = random.Random(writer)
    for i in range(count):
        store.append({**varied_record(i, rng), "writer": writer, "n": i})


def _read_while_written(path: Path, stop) -> None:
    reads = 0
    while not stop.is_set() or not reads:
        if path.exists():  # builds and extends the cache while the journal grows
            read_dataframe(path, include_failed=True)
            reads += 1


def assert_whole_lines(path: Path) -> list[dict]:
    """Every line of the journal is one whole JSON record, each with its own id."""
    data = path.read_bytes()
    assert data.endswith(b"\n")
    records = [json.loads(line) for line in data.splitlines()]
    ids = [r["id"] for r in records]
    assert len(set(ids)) == len(ids)
    return records


def test_two_appenders_and_a_reader_at_once(tmp_path, monkeypatch):
    small_cache(monkeypatch)  # inherited by the forked processes
    path = tmp_path / "s.jsonl"
    context = multiprocessing.get_context("fork")
    stop = context.Event()
    reader = context.Process(target=_read_while_written, args=(path, stop))
    writers = [context.Process(target=_append, args=(path, name, 150)) for name in "ab"]
    reader.start()
    for p in writers:
        p.start()
    for p in writers:
        p.join()
    stop.set()
    reader.join()
    assert [p.exitcode for p in [*writers, reader]] == [0, 0, 0]
    records = assert_whole_lines(path)
    for name in "ab":
        assert [r["n"] for r in records if r.get("writer") == name] == list(range(150))
    assert len(records) == 300
    # the cache written while the journal grew, extended once more now, reads like it
    pd.testing.assert_frame_equal(read_dataframe(path, include_failed=True),
                                  reference_frame(Store(path), include_failed=True))
    assert segment_files(path)


def _seed(path: Path, count: int) -> None:
    """Earlier measurements (over a MiB, so the cache is written at its usual sizes)."""
    rng = random.Random(7)
    params = {"particles_per_rank": 1048576, "timesteps": 1, "fsync": True, "verify": False}
    lines = []
    for i in range(count):
        cores = rng.choice([4, 8])
        settings = {"cb_nodes": rng.choice([1, 2])}
        lines.append(json.dumps({
            "schema_version": 1, "id": uuid.UUID(int=rng.getrandbits(128)).hex,
            "recorded_at": "2025-01-01T00:00:00+00:00", "campaign": "train", "kernel": "vpic",
            "cores": cores, "settings": settings, "params": params, "rep": i,
            "config_key": config_key("vpic", cores, settings, params), "backend": "sim",
            "provenance": "simulated", "system": "hopper", "status": "ok", "error": None,
            "padding": "x" * 800,
            "result": {"times_s": {"total": 1.0 + i % 5, "open": 0.01, "write": 0.9,
                                   "close": 0.0}, "bandwidth_mib_s": 100.0,
                       "bytes_written": 2**27}}, sort_keys=True))
    path.write_text("\n".join(lines) + "\n")


def test_two_tunes_on_one_store_at_once(tmp_path, subprocess_env):
    path = tmp_path / "iotune-store.jsonl"  # the store of a bare directory
    _seed(path, 1400)
    assert path.stat().st_size > store_cache.MIN_SEGMENT_BYTES
    seeded = path.read_bytes()
    commands = {cores: [sys.executable, "-m", "iotune", "tune", "--backend", "sim",
                        "--system", "hopper", "--cores", str(cores), "--strategy", strategy,
                        "--budget", "8", "--fresh", "--format", "json",
                        "-o", f"tuned-{cores}.yaml"]
                for cores, strategy in ((64, "random"), (128, "exhaustive"))}
    procs = {cores: subprocess.Popen(argv, cwd=tmp_path, env=subprocess_env,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True)
             for cores, argv in commands.items()}
    outputs = {cores: proc.communicate(timeout=300) for cores, proc in procs.items()}
    for cores, (_, err) in outputs.items():
        assert procs[cores].returncode == 0, err
    records = assert_whole_lines(path)
    assert path.read_bytes().startswith(seeded)  # earlier records untouched
    tuned = [r for r in records if r.get("campaign") == "tune"]
    for cores, (out, _) in outputs.items():
        ran = json.loads(out)["search"]["runs"]
        mine = [r for r in tuned if r["target_cores"] == cores]
        assert ran > 0 and len(mine) == ran
        assert len({r["tune_id"] for r in mine}) == 1  # one search each
    assert len(records) == 1400 + len(tuned)
    # both tunes read (and wrote) the cache at once: it reads like the journal
    assert segment_files(path)
    pd.testing.assert_frame_equal(read_dataframe(path, include_failed=True),
                                  reference_frame(Store(path), include_failed=True))
    pd.testing.assert_frame_equal(read_dataframe(path, include_failed=True, use_cache=False),
                                  reference_frame(Store(path), include_failed=True))
