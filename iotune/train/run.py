"""Running a training campaign, resumably, by one worker or many at once.

A task is done when the store holds a record with its configuration key, repetition number
and campaign ``train`` that is ``ok`` or ``failed`` (a failure is an answer, not something
to retry blindly; ``retry_failed`` reruns those recorded before this worker started). An
``interrupted`` record (the run's processes were killed from outside) does not count: the
task is measured again; nor does a failure of the environment (the program cannot start, a
library cannot load: :mod:`iotune.execution.failures`), which says nothing of the
configuration. When a worker's first run fails so, it stops there with that error
(:class:`~iotune.errors.LaunchError`): every other run would fail the same way.
Records are written only after a run ends, so a job killed at any point loses at most the
run in flight, and a rerun of the same command skips everything already recorded.

Any number of workers (``iotune train`` processes: the tasks of a Slurm job array, or jobs
started at different times on different nodes) may run one campaign into one store: each
claims a task before measuring it (:mod:`iotune.store.claims`), so every task is measured
once between them, and a task whose worker died is taken over. A worker tries each task
once: a task it recorded as ``interrupted`` is left to other workers or to the next start.

A stop signal (:mod:`iotune.execution.interrupt`) ends the campaign between two runs, or at once
during a run, whose processes are killed and which is not recorded; the counts so far are
on the :class:`CampaignInterrupted` raised.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import Any

from iotune.backends import Backend
from iotune.errors import LaunchError, StoreError
from iotune.execution import interrupt
from iotune.execution.failures import environment_failure_of
from iotune.store import Store
from iotune.store.claims import HEARTBEATS_PER_LEASE, ClaimBook, Worker
from iotune.store.index import StoreIndex
from iotune.train.plan import ScalePlan, Task

ProgressFn = Callable[[int, int, Task, dict[str, Any] | None, float | None], None]


class CampaignInterrupted(interrupt.Interrupted):
    """A campaign stopped by a signal; ``counts`` are those of :func:`run_campaign` so far
    and ``remaining`` the tasks still to run."""

    def __init__(self, signum: int, counts: dict[str, int], remaining: int) -> None:
        super().__init__(signum)
        self.counts, self.remaining = counts, remaining


def done_tasks(store: Store, retry_failed: bool = False,
               source: str | None = None) -> set[tuple[str, int]]:
    """(config key, rep) of the training tasks already recorded in ``store``: ok ones, and
    failed ones unless ``retry_failed``; never interrupted ones. With ``source``, only runs
    measured with it (:mod:`iotune.store.source`): a campaign on another system, MPI
    library, simulator noise or recorded data does not count."""
    counted = ("ok",) if retry_failed else ("ok", "failed")
    return {(m.config_key, m.rep) for m in StoreIndex(store).select(campaign="train")
            if m.status in counted and (source is None or m.source == source)
            and (m.status != "failed" or environment_failure_of(m.record) is None)}


def run_campaign(plans: list[ScalePlan], backend: Backend, store: Store, *,
                 retry_failed: bool = False, progress: ProgressFn | None = None,
                 campaign: str = "train", worker: Worker | None = None) -> dict[str, int]:
    """Measure the tasks not yet in ``store`` that no other worker measures; returns counts
    of ran, skipped (recorded before this worker started), by_others (recorded by other
    workers meanwhile), failed and interrupted runs. LaunchError when this worker's first
    run failed because of the environment (see the module docstring).

    ``progress(i, n, task, record, eta_s)`` is called before each run (record None) and
    after it (with the record written): ``i`` is the run's place among the ``n`` tasks left
    when this worker started (runs recorded by others count too). ``worker`` names this
    process in the claims (default: a new worker outside Slurm). Raises
    :class:`CampaignInterrupted` on a stop signal (see the module docstring).
    """
    tasks = {t.ident: t for p in plans for t in p.tasks}
    with store.exclusive():  # the journal's end, at a line boundary
        offset = store.path.stat().st_size if store.exists() else 0
    source = backend.source()
    done = done_tasks(store, retry_failed, source)
    todo = [ident for ident in tasks if ident not in done]
    counts = {"ran": 0, "skipped": len(tasks) - len(todo), "by_others": 0, "failed": 0,
              "interrupted": 0}
    worker = worker or Worker.this_process(job=None)
    book = ClaimBook(store, campaign, done, offset, source=source)
    book.start(worker)
    started, outcome = time.monotonic(), "failed"
    try:
        with _heartbeats(book, worker):
            unattempted = dict.fromkeys(todo)  # each task once per worker and session
            while True:
                interrupt.check()
                claimed = book.claim_next(worker, unattempted)
                if claimed is None:
                    break
                del unattempted[claimed]
                position = sum(ident in book.state.recorded for ident in todo) + 1
                eta = _eta(time.monotonic() - started, counts["ran"], len(todo) - position + 1,
                           book.live_workers(worker))
                task = tasks[claimed]
                if progress:
                    progress(position, len(todo), task, None, eta)
                record = _run_claimed(task, backend, store, book, worker, campaign)
                if record is not None:
                    counts["ran"] += 1
                    counts["failed"] += record["status"] == "failed"
                    counts["interrupted"] += record["status"] == "interrupted"
                    if progress:
                        progress(position, len(todo), task, record, None)
                    if counts["ran"] == 1:
                        _stop_on_environment_failure(record)
        outcome = "done"
    except interrupt.Interrupted as stop:
        outcome = "interrupted"
        left = sum(ident not in book.state.recorded for ident in todo)
        raise CampaignInterrupted(stop.signum, counts, left) from None
    finally:
        _quietly(lambda: book.stop(worker, outcome))
    counts["by_others"] = sum(ident in book.state.recorded for ident in todo) - counts["ran"]
    return counts


def _run_claimed(task: Task, backend: Backend, store: Store, book: ClaimBook,
                 worker: Worker, campaign: str) -> dict[str, Any] | None:
    """Measure one claimed task and record it; the record written, or None when another
    worker recorded the task first (it took the claim over while this one measured)."""
    measured = backend.measure(task.request, task.rep)
    written: list[dict[str, Any]] = []
    book.record(worker, task.ident,
                lambda: written.append(store.append({"campaign": campaign, **measured})))
    return written[0] if written else None


def _stop_on_environment_failure(record: dict[str, Any]) -> None:
    """LaunchError when ``record`` (a worker's first run) failed because of the environment."""
    failure = environment_failure_of(record)
    if failure is not None:
        raise LaunchError(f"train: stopped after this worker's first run, which failed "
                          f"before measuring anything: {failure.text()}; fix it and run "
                          "train again (the run is measured again)")


def _eta(elapsed: float, ran: int, left: int, workers: int) -> float | None:
    """Seconds until the tasks left are measured, from this worker's pace, shared among the
    live workers; None before a first run."""
    if ran == 0:
        return None
    return elapsed / ran * left / max(1, workers)


@contextmanager
def _heartbeats(book: ClaimBook, worker: Worker) -> Iterator[None]:
    """Tell the claims that ``worker`` is alive, from a thread, while the block runs (runs
    may be longer than the lease)."""
    stopped = threading.Event()
    period = worker.lease_s / HEARTBEATS_PER_LEASE

    def beat() -> None:
        while not stopped.wait(period):
            _quietly(lambda: book.heartbeat(worker))

    thread = threading.Thread(target=beat, name="iotune-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stopped.set()
        thread.join()


def _quietly(action: Callable[[], Any]) -> None:
    """Run ``action``, ignoring a store error: a missed heartbeat or stop only lets another
    worker take a claim over sooner or later, and must not end the campaign."""
    with suppress(StoreError):
        action()
