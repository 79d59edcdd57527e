"""A campaign as a person reads it, the same in ``job status`` and the report: each
configuration's settings and candidate file beside its hash name, the jobs counted by
state, the first trials still running with the command that releases each.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.production.jobs import DEFAULT, STATES, Campaign, Job
from iotune.production.rule import Assessment
from iotune.production.time_limit import DEFAULT_TIME_LIMIT_H, duration_text
from iotune.settings.values import describe_settings
from iotune.tuned import split_configuration

#: The journal ``iotune job`` uses when ``--store`` is not given: a release command for it
#: needs no ``--store``.
DEFAULT_JOURNAL = Path("iotune-production.jsonl")


def describe_configuration(settings: Mapping[str, Any]) -> str:
    """``name=value`` of each setting, then ``files PATTERN: name=value`` per file
    pattern; ``no setting (the default)`` for none."""
    plain, files = split_configuration(settings)
    parts = [describe_settings(plain)] if plain else []
    parts += [f"files {pattern}: {describe_settings(values)}"
              for pattern, values in files.items()]
    return "; ".join(parts) or "no setting (the default)"


def candidate_source(campaign: Campaign, name: str) -> str:
    """Where configuration ``name`` came from: ``FILE (recommended|best found|runner-up)``
    as its start recorded it, ``-`` for the default or when the journal does not say
    (started before sources were recorded)."""
    return "-" if name == DEFAULT else campaign.sources.get(name, "-")


def counts_text(campaign: Campaign) -> str:
    """The jobs by state: ``32 jobs: 28 ok, 1 failed, 1 lost, 2 running``."""
    return (f"{len(campaign.jobs)} jobs: "
            + ", ".join(f"{campaign.count(s)} {s}" for s in STATES))


def state_counts(campaign: Campaign, name: str) -> dict[str, int]:
    """The jobs of configuration ``name`` by state (:data:`STATES`)."""
    return {s: sum(1 for j in campaign.jobs if j.config == name and j.state == s)
            for s in STATES}


def release_command(tag: str, job_id: str, store: Path) -> str:
    """The command that records job ``job_id`` of ``tag`` as failed, which releases a
    first trial it holds (``--store`` only when not the default journal)."""
    where = "" if store == DEFAULT_JOURNAL else f" --store {shlex.quote(str(store))}"
    return (f"iotune job finish{where} --tag {shlex.quote(tag)} "
            f"--job-id {shlex.quote(job_id)} --failed")


def running_trials(campaign: Campaign, state: Assessment) -> list[Job]:
    """The running jobs that hold a first trial (:attr:`Assessment.running_trials`), in
    start order."""
    return [j for j in campaign.jobs
            if j.state == "running" and j.config in state.running_trials]


def running_trial_line(job: Job, tag: str, store: Path) -> str:
    """What ``job status`` says of a running first trial: its configuration and job, how
    long it has run, its time limit and when it counts as lost, and the command that
    releases it now."""
    limit = job.time_limit_s or DEFAULT_TIME_LIMIT_H * 3600
    return (f"first trial of {job.config} running in job {job.job_id} for "
            f"{duration_text(job.age_s)} (time limit {duration_text(limit)} by "
            f"{job.time_limit_source}; counted lost {duration_text(job.lost_after_s)} after "
            f"its start); if that job is gone: {release_command(tag, job.job_id, store)}")
