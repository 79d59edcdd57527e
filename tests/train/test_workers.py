"""Four ``iotune train`` workers share one store on a file system whose fcntl locks do
nothing (``IOTUNE_STORE_FCNTL=off``): every planned run is measured exactly once between
them, one worker killed mid-run leaves its run to the others, and ``iotune status`` reads
the campaign complete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from slow_program import write_slow_config

from iotune.config import load_config
from iotune.store import Store
from iotune.store.claims import claims_path
from iotune.train import plan_campaign

WORKERS = 4


def start_worker(config: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "IOTUNE_STORE_FCNTL": "off"}
    return subprocess.Popen([sys.executable, "-m", "iotune", "train", "-c", str(config),
                             "--no-color"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=config.parent, env=env)


def status(config: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "iotune", "status", "-c", str(config),
                           "--format", "json"], capture_output=True, text=True,
                          cwd=config.parent, timeout=120, check=True)
    return json.loads(done.stdout)


def programs_started(tmp_path: Path) -> int:
    return sum(p.name.isdigit() for p in (tmp_path / "pids").iterdir())


def check_each_run_once(config: Path) -> list[dict]:
    planned = {t.ident for p in plan_campaign(load_config(config)) for t in p.tasks}
    records = Store(config.parent / "store.jsonl").records()
    counts = Counter((r["config_key"], r["rep"]) for r in records)
    assert set(counts) == planned and set(counts.values()) == {1}, counts
    assert records and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    return records


def test_four_workers_without_fcntl_locks_measure_each_run_once(tmp_path):
    config = write_slow_config(tmp_path, seconds=0.3, repetitions=8)  # 16 runs
    workers = [start_worker(config) for _ in range(WORKERS)]
    outputs = [w.communicate(timeout=300) for w in workers]
    assert [w.returncode for w in workers] == [0] * WORKERS, outputs
    check_each_run_once(config)
    claims = [json.loads(line) for line in
              claims_path(tmp_path / "store.jsonl").read_text().splitlines()]
    claimers = {e["worker"] for e in claims if e["event"] == "claim"}
    assert len(claimers) >= 2, "the runs were not shared"
    assert sum("train done" in err for _, err in outputs) == WORKERS
    report = status(config)
    assert report["complete"] and report["done"] == report["runs"] == 16
    assert report["left"] == report["claimed"] == report["failed"] == 0
    assert {w["state"] for w in report["workers"]} == {"done"}
    assert len(report["workers"]) == WORKERS


def test_a_worker_killed_mid_run_leaves_its_run_to_the_others(tmp_path):
    config = write_slow_config(tmp_path, seconds=1.0, repetitions=5)  # 10 runs
    victim = start_worker(config)
    deadline = time.monotonic() + 120
    while programs_started(tmp_path) < 1:  # the victim is measuring its first run
        assert victim.poll() is None and time.monotonic() < deadline, victim.communicate()
        time.sleep(0.05)
    os.kill(victim.pid, signal.SIGKILL)  # no chance to free its claim
    victim.wait()
    during = status(config)
    assert not during["complete"] and during["left"] == 10 and during["claimed"] == 0
    assert [w["state"] for w in during["workers"]] == ["gone"]  # its process is gone
    others = [start_worker(config) for _ in range(WORKERS - 1)]
    outputs = [w.communicate(timeout=300) for w in others]
    assert [w.returncode for w in others] == [0] * (WORKERS - 1), outputs
    check_each_run_once(config)
    report = status(config)
    assert report["complete"] and report["done"] == 10
    states = Counter(w["state"] for w in report["workers"])
    assert states == {"done": WORKERS - 1, "gone": 1}, report["workers"]
