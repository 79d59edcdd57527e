"""Running a training campaign, resumably.

A task is done when the store holds a record with its configuration key, repetition number
and campaign ``train`` (ok or failed: a failure is an answer, not something to retry
blindly; ``retry_failed`` reruns them). Records are written only after a run ends, so a job
killed at any point loses at most the run in flight, and a rerun of the same command skips
everything already recorded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from iotune.backends import Backend
from iotune.measurements import StoreIndex
from iotune.settings import describe_value
from iotune.store import Store
from iotune.train.plan import ScalePlan, Task


def describe_settings(settings: dict[str, Any]) -> str:
    return " ".join(f"{k}={describe_value(k, v)}" for k, v in settings.items()) or "defaults"


ProgressFn = Callable[[int, int, Task, dict[str, Any] | None, float | None], None]


def done_tasks(store: Store, retry_failed: bool = False) -> set[tuple[str, int]]:
    """(config key, rep) of the training tasks already recorded in ``store``."""
    return {(m.config_key, m.rep) for m in StoreIndex(store).select(campaign="train")
            if m.status == "ok" or not retry_failed}


def run_campaign(plans: list[ScalePlan], backend: Backend, store: Store, *,
                 retry_failed: bool = False, progress: ProgressFn | None = None,
                 campaign: str = "train") -> dict[str, int]:
    """Run every task not yet in ``store``; returns counts of ran, skipped, failed.

    ``progress(i, n, task, record, eta_s)`` is called before each run (record None) and
    after it (with the record written).
    """
    done = done_tasks(store, retry_failed)
    todo = [t for p in plans for t in p.tasks if t.ident not in done]
    skipped = sum(len(p.tasks) for p in plans) - len(todo)
    failed = 0
    started = time.monotonic()
    for i, task in enumerate(todo, start=1):
        elapsed = time.monotonic() - started
        eta = elapsed / (i - 1) * (len(todo) - i + 1) if i > 1 else None
        if progress:
            progress(i, len(todo), task, None, eta)
        record = store.append({"campaign": campaign, **backend.measure(task.request, task.rep)})
        failed += record["status"] != "ok"
        if progress:
            progress(i, len(todo), task, record, None)
    return {"ran": len(todo), "skipped": skipped, "failed": failed}
