"""Running a training campaign, resumably.

A task is done when the store holds a record with its configuration key, repetition number
and campaign ``train`` that is ``ok`` or ``failed`` (a failure is an answer, not something
to retry blindly; ``retry_failed`` reruns them). An ``interrupted`` record (the run's
processes were killed from outside) does not count: the task is measured again. Records
are written only after a run ends, so a job killed at any point loses at most the run in
flight, and a rerun of the same command skips everything already recorded.

A stop signal (:mod:`iotune.interrupt`) ends the campaign between two runs, or at once
during a run, whose processes are killed and which is not recorded; the counts so far are
on the :class:`CampaignInterrupted` raised.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from iotune import interrupt
from iotune.backends import Backend
from iotune.settings import describe_value
from iotune.store import Store
from iotune.store.index import StoreIndex
from iotune.train.plan import ScalePlan, Task


def describe_settings(settings: dict[str, Any]) -> str:
    return " ".join(f"{k}={describe_value(k, v)}" for k, v in settings.items()) or "defaults"


ProgressFn = Callable[[int, int, Task, dict[str, Any] | None, float | None], None]


class CampaignInterrupted(interrupt.Interrupted):
    """A campaign stopped by a signal; ``counts`` are those of :func:`run_campaign` so far
    and ``remaining`` the tasks still to run."""

    def __init__(self, signum: int, counts: dict[str, int], remaining: int) -> None:
        super().__init__(signum)
        self.counts, self.remaining = counts, remaining


def done_tasks(store: Store, retry_failed: bool = False) -> set[tuple[str, int]]:
    """(config key, rep) of the training tasks already recorded in ``store``: ok ones, and
    failed ones unless ``retry_failed``; never interrupted ones."""
    counted = ("ok",) if retry_failed else ("ok", "failed")
    return {(m.config_key, m.rep) for m in StoreIndex(store).select(campaign="train")
            if m.status in counted}


def run_campaign(plans: list[ScalePlan], backend: Backend, store: Store, *,
                 retry_failed: bool = False, progress: ProgressFn | None = None,
                 campaign: str = "train") -> dict[str, int]:
    """Run every task not yet in ``store``; returns counts of ran, skipped, failed and
    interrupted runs.

    ``progress(i, n, task, record, eta_s)`` is called before each run (record None) and
    after it (with the record written). Raises :class:`CampaignInterrupted` on a stop
    signal (see the module docstring).
    """
    done = done_tasks(store, retry_failed)
    todo = [t for p in plans for t in p.tasks if t.ident not in done]
    counts = {"ran": 0, "skipped": sum(len(p.tasks) for p in plans) - len(todo), "failed": 0,
              "interrupted": 0}
    started = time.monotonic()
    for i, task in enumerate(todo, start=1):
        elapsed = time.monotonic() - started
        eta = elapsed / (i - 1) * (len(todo) - i + 1) if i > 1 else None
        try:
            interrupt.check()
            if progress:
                progress(i, len(todo), task, None, eta)
            measured = backend.measure(task.request, task.rep)
        except interrupt.Interrupted as stop:
            raise CampaignInterrupted(stop.signum, counts, len(todo) - i + 1) from None
        record = store.append({"campaign": campaign, **measured})
        counts["ran"] += 1
        counts["failed"] += record["status"] == "failed"
        counts["interrupted"] += record["status"] == "interrupted"
        if progress:
            progress(i, len(todo), task, record, None)
    return counts
