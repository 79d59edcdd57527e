"""Where a training campaign stands: runs done, claimed, failed and left per scale, the
workers seen, core-hours spent and an estimate of the time left (``iotune status``).

Everything is read from the store (the measurements of campaign ``train`` whose
configuration and repetition belong to the plan) and its claims journal
(:mod:`iotune.store.claims`); nothing is asked of Slurm, so the status reads the same on a
login node as inside a job.

The figures:

Only runs of the campaign's source count (:mod:`iotune.store.source`: the same system,
file system and MPI library, simulator or recorded data); runs of the plan measured with
another source are counted apart as ``other_source_runs``, since training does them again.

- ``done``: tasks with an ``ok`` record; ``failed``: tasks whose records are all failures
  (a failure is an answer, see :mod:`iotune.train.run`); an ``interrupted`` record, or a
  failure of the environment (:mod:`iotune.execution.failures`), leaves its task to do;
- ``claimed``: tasks not recorded that a live worker has claimed (being measured now);
- ``left``: the others; the campaign is *complete* when none is left or claimed;
- ``core_hours``: wall time x cores of every run recorded for the plan (failed and
  interrupted ones included: they were paid for); runs of the ``sim`` and ``replay``
  backends record no wall time and cost none;
- ``eta_s``: per scale, the median wall time of its recorded runs times its tasks left or
  claimed, summed and shared among the live workers (at least one); None when a scale with
  tasks left has no timed run yet.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any

from iotune.backends import provenance_of
from iotune.execution.failures import environment_failure_of
from iotune.store import Store
from iotune.store.claims import ClaimBook, Worker, WorkerState, worker_alive
from iotune.store.index import StoreIndex
from iotune.store.lock import host_name
from iotune.train.plan import ScalePlan

#: Version of the JSON ``iotune status --format json`` prints (docs/campaigns.md).
STATUS_FORMAT = 1


@dataclass
class ScaleStatus:
    cores: int
    runs: int
    done: int = 0
    failed: int = 0
    claimed: int = 0
    left: int = 0
    core_hours: float = 0.0
    seconds_per_run: float | None = None


@dataclass
class WorkerStatus:
    id: str
    host: str
    pid: int
    job: str | None
    started: str
    last_heard: str
    seconds_since_heard: float
    state: str  # running, or how it ended: done, interrupted, failed, gone
    measuring: dict[str, Any] | None = None


@dataclass
class CampaignStatus:
    store: str
    campaign: str
    as_of: str
    complete: bool
    runs: int
    done: int
    failed: int
    claimed: int
    left: int
    core_hours: float
    eta_s: float | None
    live_workers: int
    #: How the plan's recorded runs got their numbers: measured, simulated, replayed.
    provenance: list[str] = field(default_factory=list)
    #: The source whose runs count (None: every source's).
    source: str | None = None
    #: Runs of the plan's configurations recorded with another source: not counted.
    other_source_runs: int = 0
    scales: list[ScaleStatus] = field(default_factory=list)
    workers: list[WorkerStatus] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"format": STATUS_FORMAT, **asdict(self)}


def campaign_status(plans: Sequence[ScalePlan], store: Store, campaign: str = "train",
                    now: float | None = None, source: str | None = None) -> CampaignStatus:
    """The status of the campaign ``plans`` describe, as ``store`` and its claims show it;
    with ``source``, only runs measured with it count (see the module docstring)."""
    now = time.time() if now is None else now
    book = ClaimBook(store, campaign, source=source)
    book.refresh()
    bystander = Worker("", host_name(), 0)  # on a workers' host, sees dead processes
    measurements = StoreIndex(store).select(campaign=campaign) if store.exists() else []
    statuses: dict[tuple[str, int], set[str]] = {}
    walls: dict[tuple[str, int], list[float]] = {}
    planned = {t.ident for p in plans for t in p.tasks}
    provenance = set()
    other_source_runs = 0
    for m in measurements:
        if (m.config_key, m.rep) not in planned:
            continue
        if source is not None and m.source != source:
            other_source_runs += 1
            continue
        provenance.add(provenance_of(m.backend))
        status = m.status
        if status == "failed" and environment_failure_of(m.record) is not None:
            status = "environment"  # no answer: train measures it again
        statuses.setdefault((m.config_key, m.rep), set()).add(status)
        wall = m.record.get("elapsed_s")
        if isinstance(wall, int | float):
            walls.setdefault((m.config_key, m.rep), []).append(float(wall))
    live = [s for s in book.state.workers.values() if worker_alive(s, bystander, now)]
    held = {s.claim for s in live if s.claim is not None}
    scales, eta, eta_known = [], 0.0, True
    for plan in plans:
        scale = ScaleStatus(plan.scale.cores, len(plan.tasks))
        times = []
        for task in plan.tasks:
            seen = statuses.get(task.ident, set())
            if "ok" in seen:
                scale.done += 1
            elif "failed" in seen:
                scale.failed += 1
            elif task.ident in held:
                scale.claimed += 1
            else:
                scale.left += 1
            spent = walls.get(task.ident, [])
            times += spent
            scale.core_hours += sum(spent) * plan.scale.cores / 3600
        scale.seconds_per_run = statistics.median(times) if times else None
        pending = scale.left + scale.claimed
        if pending and scale.seconds_per_run is None:
            eta_known = False
        elif pending:
            eta += pending * (scale.seconds_per_run or 0.0)
        scales.append(scale)
    totals = {k: sum(getattr(s, k) for s in scales)
              for k in ("runs", "done", "failed", "claimed", "left")}
    return CampaignStatus(
        store=str(store.path), campaign=campaign, as_of=_iso(now),
        complete=totals["left"] == 0 and totals["claimed"] == 0,
        core_hours=round(sum(s.core_hours for s in scales), 4),
        eta_s=(eta / max(1, len(live))) if eta_known else None,
        live_workers=len(live), provenance=sorted(provenance), source=source,
        other_source_runs=other_source_runs, scales=scales,
        workers=[_worker_status(s, bystander, now, statuses)
                 for s in book.state.workers.values()],
        **totals,
    )


def _worker_status(state: WorkerState, bystander: Worker, now: float,
                   statuses: dict[tuple[str, int], set[str]]) -> WorkerStatus:
    w = state.worker
    alive = worker_alive(state, bystander, now)
    measuring = None
    if alive and state.claim is not None \
            and not statuses.get(state.claim, set()) & {"ok", "failed"}:
        measuring = {"config_key": state.claim[0], "rep": state.claim[1],
                     "since": _iso(state.claimed_at or state.last_heard)}
    return WorkerStatus(
        id=w.id, host=w.host, pid=w.pid, job=w.job, started=_iso(state.started),
        last_heard=_iso(state.last_heard),
        seconds_since_heard=round(max(0.0, now - state.last_heard), 1),
        state="running" if alive else (state.stopped or "gone"), measuring=measuring)


def _iso(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat(timespec="seconds")
