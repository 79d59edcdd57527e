"""Claims: a run claimed by a live worker is left alone; one whose worker stopped, died on
this host, was an earlier start of the same Slurm job, or fell silent past its lease is
taken over; a run recorded first by another worker is not recorded again."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from iotune.store import Store
from iotune.store.claims import ClaimBook, Worker, claims_path
from iotune.store.lock import host_name

TASKS = [("a", 0), ("a", 1), ("b", 0)]


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return int(done.stdout)


def _book(store: Store) -> ClaimBook:
    return ClaimBook(store, "train")


def _record(store: Store, task: tuple[str, int], status: str = "ok") -> None:
    store.append({"campaign": "train", "kernel": "vpic", "config_key": task[0],
                  "rep": task[1], "status": status})


def test_two_workers_claim_different_runs_and_skip_recorded_ones(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    _record(store, ("a", 0))
    one, two = Worker("one", "nodeA", 1), Worker("two", "nodeB", 2)
    books = _book(store), _book(store)
    books[0].start(one)
    books[1].start(two)
    assert books[0].claim_next(one, TASKS) == ("a", 1)
    assert books[1].claim_next(two, TASKS) == ("b", 0)
    assert books[0].claim_next(one, [("b", 0)]) is None  # held by a live worker
    events = [json.loads(line) for line in claims_path(store.path).read_text().splitlines()]
    assert [e["event"] for e in events][:4] == ["start", "start", "claim", "claim"]


def test_a_stopped_or_dead_worker_s_claim_is_taken_over(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    here = host_name()
    dead, stopped = Worker("dead", here, _dead_pid()), Worker("stopped", "nodeB", 7)
    looking = Worker("me", here, 99)
    book = _book(store)
    for w in (dead, stopped):
        book.start(w)
    assert book.claim_next(dead, TASKS) == ("a", 0)
    assert book.claim_next(stopped, TASKS) == ("a", 1)
    book.stop(stopped, "interrupted")
    mine = _book(store)
    assert mine.claim_next(looking, TASKS) == ("a", 0)  # dead process on this host
    assert mine.claim_next(looking, [("a", 1)]) == ("a", 1)  # stopped worker


def test_a_live_claim_holds_until_its_lease_runs_out(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    other = Worker("other", "nodeB", 5, lease_s=600)
    looking = Worker("me", "nodeA", 6)
    book = _book(store)
    book.start(other)
    assert book.claim_next(other, TASKS[:1]) == ("a", 0)
    mine = _book(store)
    assert mine.claim_next(looking, TASKS[:1]) is None
    mine.refresh()
    assert mine.holder(("a", 0), looking) == other
    assert mine.holder(("a", 0), looking, now=time.time() + 601) is None
    book.heartbeat(other)  # a sign of life renews the lease
    mine.refresh()
    assert mine.holder(("a", 0), looking, now=time.time() + 500) == other


def test_an_earlier_start_of_the_same_slurm_job_is_gone(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    before = Worker("before", "nodeB", 5, job="41_3")
    after = Worker("after", "nodeC", 8, job="41_3")
    neighbour = Worker("neighbour", "nodeD", 9, job="41_2")
    book = _book(store)
    book.start(before)
    assert book.claim_next(before, TASKS[:1]) == ("a", 0)
    assert _book(store).claim_next(neighbour, TASKS[:1]) is None
    assert _book(store).claim_next(after, TASKS[:1]) == ("a", 0)


def test_a_run_recorded_by_another_worker_is_not_recorded_again(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    slow, fast = Worker("slow", "nodeA", 1, lease_s=5), Worker("fast", "nodeB", 2)
    slow_book, fast_book = _book(store), _book(store)
    slow_book.start(slow)
    fast_book.start(fast)
    assert slow_book.claim_next(slow, TASKS[:1]) == ("a", 0)
    fast_book.refresh()
    assert fast_book.holder(("a", 0), fast, now=time.time() + 10) is None  # lease ran out
    assert fast_book.record(fast, ("a", 0), lambda: _record(store, ("a", 0)))
    called = []
    assert not slow_book.record(slow, ("a", 0), lambda: called.append(1))
    assert not called
    assert len(store.records()) == 1


def test_an_interrupted_record_leaves_the_run_to_do(tmp_path):
    store = Store(tmp_path / "s.jsonl")
    _record(store, ("a", 0), status="interrupted")
    worker = Worker("w", "nodeA", 1)
    assert _book(store).claim_next(worker, TASKS[:1]) == ("a", 0)
