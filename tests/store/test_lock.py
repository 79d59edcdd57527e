"""The store's lock file: exclusive across processes without fcntl, broken when its owner is
gone, waited for (then refused with the holder named) when its owner lives."""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from iotune.errors import StoreError
from iotune.store import Store
from iotune.store.lock import JournalLock, host_name, lock_path


def _append_many(path: str, writer: int, count: int) -> None:
    os.environ["IOTUNE_STORE_FCNTL"] = "off"  # the lock file is the only guard
    store = Store(path)
    for i in range(count):
        store.append({"writer": writer, "n": i, "pad": "x" * (100 * (i % 7))})


def _count_under_lock(path: str, counter: str, count: int) -> None:
    """Read-modify-write a counter file under the lock: lost updates show a broken lock."""
    lock = JournalLock(Path(path))
    for _ in range(count):
        with lock.held():
            value = int(Path(counter).read_text())
            Path(counter).write_text(str(value + 1))


def run_all(procs: list[multiprocessing.Process]) -> None:
    """Start every process, wait for each, and check each ended well."""
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0


def test_four_processes_without_fcntl_append_whole_lines_and_lose_none(tmp_path):
    path = tmp_path / "s.jsonl"
    procs = [multiprocessing.Process(target=_append_many, args=(str(path), w, 150))
             for w in range(4)]
    run_all(procs)
    records = [json.loads(line) for line in path.read_bytes().splitlines()]
    assert sorted((r["writer"], r["n"]) for r in records) == [
        (w, i) for w in range(4) for i in range(150)]
    assert not lock_path(path).exists()


def test_the_lock_makes_a_read_modify_write_atomic_across_processes(tmp_path):
    counter = tmp_path / "counter"
    counter.write_text("0")
    procs = [multiprocessing.Process(target=_count_under_lock,
                                     args=(str(tmp_path / "s.jsonl"), str(counter), 200))
             for _ in range(4)]
    run_all(procs)
    assert counter.read_text() == "800"


def _write_owner(path: Path, host: str, pid: int, age_s: float = 0.0) -> None:
    lock_path(path).write_text(json.dumps({"host": host, "pid": pid, "token": "old",
                                           "since": time.time() - age_s}))
    if age_s:
        then = time.time() - age_s
        os.utime(lock_path(path), (then, then))


def test_a_lock_left_by_a_dead_process_on_this_host_is_broken_at_once(tmp_path):
    path = tmp_path / "s.jsonl"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    _write_owner(path, host_name(), int(dead.stdout))
    started = time.monotonic()
    Store(path).append({"n": 1})
    assert time.monotonic() - started < 5  # not the 60 s a foreign lock gets
    assert len(Store(path).records()) == 1
    assert not lock_path(path).exists()


def test_an_old_lock_of_another_host_is_broken_and_a_young_one_waited_for(tmp_path):
    path = tmp_path / "s.jsonl"
    _write_owner(path, "othernode", 1234, age_s=120)
    Store(path).append({"n": 1})  # older than STALE_AFTER_S: abandoned
    assert len(Store(path).records()) == 1

    _write_owner(path, "othernode", 1234)
    lock = JournalLock(path, wait_s=0.3)
    with pytest.raises(StoreError, match=r"held by pid 1234 on othernode .* remove the lock"), \
            lock.held():
        pass
    assert json.loads(lock_path(path).read_text())["token"] == "old"  # left in place


def test_a_live_holder_on_this_host_is_waited_for(tmp_path):
    path = tmp_path / "s.jsonl"
    _write_owner(path, host_name(), os.getpid())  # alive: this very process
    with pytest.raises(StoreError, match="held by pid"), JournalLock(path, wait_s=0.2).held():
        pass


def test_the_lock_is_reentrant_and_removed_after_the_outer_block(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    with store.exclusive():
        store.append({"n": 1})  # would wait for itself if not re-entrant
        assert lock_path(store.path).exists()
    assert not lock_path(store.path).exists()
    assert len(store.records()) == 1
