"""Claims: which worker measures which run of a campaign, so N workers measure each run once.

Several ``iotune train`` processes (the tasks of a Slurm job array, or jobs submitted at
different times on different nodes) share one store. Before measuring a run a worker
*claims* it; a run that is recorded in the store, or claimed by a worker that is still
alive, is left to others. The claims live in their own journal beside the store's, named
after it with ``.claims`` added (``store.jsonl.claims``), one JSON line per event:

- ``start``: a worker appeared (its id, host, pid, Slurm job, lease);
- ``claim``: the worker measures run ``task`` (configuration key and repetition) next; a
  worker holds at most one claim, its latest;
- ``heartbeat``: the worker is alive (sent every lease / :data:`HEARTBEATS_PER_LEASE`);
- ``stop``: the worker ended (done, interrupted, or failed), freeing its claim.

Every decision is taken under the store's lock (:mod:`iotune.store.lock`), after reading
the journal's and the claims' lines written since the last look, so two workers never
claim one run. A claim stops counting (another worker takes the run over) when:

- its worker sent ``stop``, or claimed another run since;
- its worker ran on this host and its process is gone;
- its worker ran in the same Slurm job (array task) as the one looking: Slurm runs a job
  once at a time, so that worker is an earlier start of a requeued job;
- nothing was heard from its worker for longer than its lease (a node lost, a job
  cancelled on another node). Like the lock, this relies on the nodes' clocks agreeing.

The measurement's own record in the store is what marks a run done: a worker records its
run only if no other worker recorded it first (:meth:`ClaimBook.record`).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from iotune.store.damage import Damage, notice
from iotune.store.journal import SCHEMA_VERSION, Store, append_durably, now_iso, read_from
from iotune.store.location import check_store_file
from iotune.store.lock import beside, host_name, process_exists
from iotune.store.source import source_of

#: Seconds without a sign of life after which a worker's claim is taken over (default).
LEASE_S = 600.0
HEARTBEATS_PER_LEASE = 4

TaskId = tuple[str, int]


def claims_path(journal: Path) -> Path:
    """The claims journal of a store journal."""
    return beside(journal, ".claims")


@dataclass(frozen=True)
class Worker:
    """One ``iotune train`` process of a campaign."""

    id: str
    host: str
    pid: int
    job: str | None = None
    lease_s: float = LEASE_S

    @classmethod
    def this_process(cls, job: str | None, lease_s: float = LEASE_S) -> Worker:
        """This process as a worker; ``job`` is its Slurm job (``ARRAYJOB_TASK`` for an
        array task) or None outside Slurm."""
        return cls(uuid.uuid4().hex[:12], host_name(), os.getpid(), job, lease_s)


@dataclass
class WorkerState:
    """What the claims say of one worker: when it started and was last heard from, the run
    it claimed last, and whether it stopped (and why)."""

    worker: Worker
    started: float
    last_heard: float
    claim: TaskId | None = None
    claimed_at: float | None = None
    stopped: str | None = None


@dataclass
class CampaignState:
    """Runs recorded in the store (by status) and claims, as of the last look."""

    recorded: dict[TaskId, str] = field(default_factory=dict)
    workers: dict[str, WorkerState] = field(default_factory=dict)


class ClaimBook:
    """The claims of one campaign in one store, read incrementally.

    ``recorded`` holds the runs the store had when the book was made (``done``, computed by
    the caller from the store's cache); the journal's lines after ``journal_offset`` are
    read on every look, and with ``source`` only runs of that source
    (:mod:`iotune.store.source`) count.
    """

    def __init__(self, store: Store, campaign: str, done: Iterable[TaskId] = (),
                 journal_offset: int = 0, *, source: str | None = None) -> None:
        self.store, self.campaign, self.source = store, campaign, source
        self.path = claims_path(store.path)
        check_store_file(self.path, self.path)  # a named pipe here would block every reader
        self.state = CampaignState(recorded={task: "ok" for task in done})
        self._journal_offset, self._claims_offset = journal_offset, 0
        self._claims_lines = 0
        #: Numbers of the lines of the claims journal that are not events (garbage).
        self.damaged: list[int] = []

    def refresh(self) -> CampaignState:
        """Read what was written since the last look; the state as it now is."""
        records, self._journal_offset = self.store.records_after(self._journal_offset)
        for record in records:
            if (record.get("campaign") == self.campaign and "config_key" in record
                    and record.get("status") in ("ok", "failed")
                    and (self.source is None or source_of(record) == self.source)):
                task = (str(record["config_key"]), int(record.get("rep") or 0))
                self.state.recorded.setdefault(task, str(record["status"]))
        read = read_from(self.path, self._claims_offset, self._claims_lines)
        self._claims_offset, self._claims_lines = read.end, self._claims_lines + read.lines
        for number, event in zip(read.numbers, read.records, strict=True):
            try:
                self._apply(event)
            except (TypeError, ValueError, IndexError):  # an event with fields of the wrong type
                read.damaged.append(number)
        if read.damaged:
            self.damaged.extend(sorted(read.damaged))
            notice(self.path, "claims", Damage(tuple(self.damaged)))
        return self.state

    def _apply(self, event: Mapping[str, Any]) -> None:
        if event.get("campaign") != self.campaign:
            return
        kind, at = event.get("event"), float(event.get("at") or 0.0)
        if kind == "start":
            worker = Worker(str(event.get("id")), str(event.get("host")),
                            int(event.get("pid") or 0), event.get("job"),
                            float(event.get("lease_s") or LEASE_S))
            self.state.workers[worker.id] = WorkerState(worker, at, at)
            return
        state = self.state.workers.get(str(event.get("worker")))
        if state is None:
            return
        state.last_heard = max(state.last_heard, at)
        if kind == "claim":
            task = event.get("task") or ["", 0]
            state.claim, state.claimed_at = (str(task[0]), int(task[1])), at
        elif kind == "stop":
            state.stopped, state.claim = str(event.get("reason") or "stopped"), None

    def holder(self, task: TaskId, looking: Worker, now: float | None = None) -> Worker | None:
        """The live worker other than ``looking`` whose claim on ``task`` counts, if any."""
        now = time.time() if now is None else now
        for state in self.state.workers.values():
            if state.claim == task and state.worker.id != looking.id \
                    and claim_counts(state, looking, now):
                return state.worker
        return None

    def live_workers(self, looking: Worker, now: float | None = None) -> int:
        """Workers that have not stopped and were heard from within their lease (``looking``
        among them)."""
        now = time.time() if now is None else now
        return sum(1 for s in self.state.workers.values()
                   if s.worker.id == looking.id or worker_alive(s, looking, now))

    def start(self, worker: Worker) -> None:
        """Announce ``worker`` (before its first claim)."""
        self._write({"event": "start", **asdict(worker)})

    def claim_next(self, worker: Worker, tasks: Iterable[TaskId]) -> TaskId | None:
        """Claim the first of ``tasks`` neither recorded nor held by a live worker; None
        when none is left to claim."""
        with self.store.exclusive():
            self.refresh()
            held = {s.claim for s in self.state.workers.values()
                    if s.claim is not None and s.worker.id != worker.id
                    and claim_counts(s, worker, time.time())}
            for task in tasks:
                if task not in self.state.recorded and task not in held:
                    self._write({"event": "claim", "worker": worker.id, "task": list(task)})
                    return task
        return None

    def record(self, worker: Worker, task: TaskId, append: Callable[[], Any]) -> bool:
        """Call ``append`` (which writes ``task``'s record to the store) unless another
        worker recorded ``task`` first; True when it was called."""
        with self.store.exclusive():
            self.refresh()
            if self.state.recorded.get(task) in ("ok", "failed"):
                return False
            append()
            return True

    def heartbeat(self, worker: Worker) -> None:
        self._write({"event": "heartbeat", "worker": worker.id})

    def stop(self, worker: Worker, reason: str) -> None:
        """``worker`` ended (``done``, ``interrupted``, ``failed``): its claim is free."""
        self._write({"event": "stop", "worker": worker.id, "reason": reason})

    def _write(self, event: dict[str, Any]) -> None:
        line = {"schema_version": SCHEMA_VERSION, "campaign": self.campaign,
                "at": time.time(), "recorded_at": now_iso(), **event}
        with self.store.exclusive():
            append_durably(self.path, (json.dumps(line, sort_keys=True) + "\n").encode())


def worker_alive(state: WorkerState, looking: Worker, now: float) -> bool:
    """Whether ``state``'s worker may still be running, as seen by ``looking`` (the rules
    of the module docstring; an id of None for ``looking`` when a bystander looks)."""
    other = state.worker
    if state.stopped is not None:
        return False
    if other.host == looking.host and not process_exists(other.pid):
        return False
    if other.job is not None and other.job == looking.job and other.id != looking.id:
        return False
    return now - state.last_heard <= other.lease_s


def claim_counts(state: WorkerState, looking: Worker, now: float) -> bool:
    """Whether ``state``'s claim still keeps ``looking`` off its run (module docstring)."""
    return state.claim is not None and worker_alive(state, looking, now)
