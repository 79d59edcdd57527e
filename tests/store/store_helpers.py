"""Varied store records and the reference readings the cache must reproduce."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pandas as pd

from iotune.store import Store
from iotune.store import cache as store_cache
from iotune.store.records import Measurement, records_to_dataframe


def small_cache(monkeypatch) -> None:
    """Cache every byte, in small segments: the code paths of a big store."""
    monkeypatch.setattr(store_cache, "MIN_SEGMENT_BYTES", 0)
    monkeypatch.setattr(store_cache, "CHUNK_BYTES", 4096)


def varied_record(i: int, rng: random.Random) -> dict[str, Any]:
    """A measurement or a probe round; settings, params and result fields vary in which
    keys they have and in their types (ints with nulls, booleans, strings, absent keys)."""
    if rng.random() < 0.08:
        return {"campaign": "probe", "kind": "latency", "backend": "probe", "size_bytes": 4096,
                "targets": [{"ost": i % 4, "latency_s": 0.001 * (1 + i % 7)}]}
    kernel = rng.choice(["vpic", "vpic", "ior"])
    settings: dict[str, Any] = {}
    if rng.random() < 0.8:
        settings["stripe_count"] = rng.choice([1, 4, 16])
    if rng.random() < 0.5:
        settings["stripe_size"] = rng.choice([2**20, 2**22])
    if kernel == "ior" and rng.random() < 0.5:
        settings["romio_cb_write"] = rng.choice(["enable", "disable"])
    params: dict[str, Any] = ({"timesteps": 1, "fsync": rng.random() < 0.5} if kernel == "vpic"
                              else {"api": rng.choice(["posix", "mpiio"]), "segments": 2})
    failed = rng.random() < 0.15
    total = None if failed else round(rng.uniform(0.5, 9.0), 4)
    record: dict[str, Any] = {
        "config_key": f"{kernel}-{sorted(settings.items())}-{sorted(params.items())}",
        "kernel": kernel, "cores": rng.choice([4, 8]), "settings": settings, "params": params,
        "rep": rng.choice([0, 1, None]), "backend": rng.choice(["sim", "mpi", "replay"]),
        "campaign": rng.choice(["train", "tune", "tune", "run"]),
        "status": "failed" if failed else "ok", "error": "exit code 1" if failed else None,
        "result": None if failed else {
            "times_s": {"total": total, "open": None if rng.random() < 0.3 else 0.1,
                        "write": 0.5, "close": 0.0},
            "bandwidth_mib_s": 64 / total if total else None,
            "bytes_written": rng.choice([2**26, 2**26, 0])},
    }
    if not failed and rng.random() < 0.6:  # hints read back; which ones varies by run
        hints = {"cb_nodes": rng.choice(["1", "2"]), "romio_cb_write": "automatic"}
        if rng.random() < 0.3:
            hints["striping_factor"] = "4"
        record["result"]["hints_in_effect"] = hints
        if settings and rng.random() < 0.7:  # a measured run says what took effect
            record["result"]["settings_effect"] = {
                name: {"status": rng.choice(["in_effect", "absent", "unverified"]),
                       "requested": str(value), "in_effect": None}
                for name, value in settings.items()}
    if rng.random() < 0.5:
        record.update(strategy=rng.choice(["random", "model"]), tune_id=f"t{i // 10}")
    if rng.random() < 0.3:
        record["elapsed_s"] = 1.5
    if rng.random() < 0.2:
        record["nodes"] = 1
    return record


def fill(path: Path, n: int, seed: int = 1) -> Store:
    store = Store(path)
    rng = random.Random(seed)
    for i in range(n):
        store.append(varied_record(i, rng))
    return store


def measurement_records(store: Store) -> list[dict[str, Any]]:
    return [r for r in store.iter_records()
            if r.get("campaign") != "probe" and "kernel" in r]


def reference_frame(store: Store, include_failed: bool = False) -> pd.DataFrame:
    """What the store's measurements make as a frame when every line is parsed."""
    return records_to_dataframe(measurement_records(store), include_failed=include_failed)


def reference_measurements(store: Store) -> list[Measurement]:
    return [Measurement.from_record(r) for r in measurement_records(store)]


def segment_files(journal: Path) -> list[str]:
    directory = store_cache.cache_path(journal)
    return sorted(p.name for p in directory.glob("v*.seg")) if directory.exists() else []
