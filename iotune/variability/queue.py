"""Job-queue features from Slurm's ``squeue``: how many jobs run, how large and how old.

Wan et al. (Table II) feed the state classifier with the running jobs of the machine: their
number, their sizes in size classes, and their ages (*new* jobs have used less than a third
of their time limit, *middle-aged* ones less than two thirds, the rest are *old*). Here one
snapshot is::

    squeue --noheader --states=RUNNING --format='%i|%D|%M|%l|%P|%m'

(job id, nodes, time used, time limit, partition, memory per node) and its features are

============================  ============================================================
``running_jobs``              running jobs
``running_nodes``             nodes they occupy
``jobs_xs`` ... ``jobs_xl``   jobs of 1, 2-15, 16-127, 128-1023 and >= 1024 nodes
``jobs_new/middle/old``       jobs that used < 1/3, < 2/3, >= 2/3 of their time limit
                              (jobs without a limit count in none of the three)
``mem_requested_gib``         memory requested by all running jobs (per node x nodes)
============================  ============================================================

The size classes are generic (Titan's were tied to its 18,688 nodes); per-partition counts
are kept in the snapshot but are not features, since partition names differ between sites.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from iotune.errors import DataError

SQUEUE_FORMAT = "%i|%D|%M|%l|%P|%m"
SQUEUE_ARGS = ("--noheader", "--states=RUNNING", f"--format={SQUEUE_FORMAT}")
#: (feature, smallest node count) of the size classes, smallest first.
SIZE_CLASSES = (("jobs_xs", 1), ("jobs_s", 2), ("jobs_m", 16), ("jobs_l", 128),
                ("jobs_xl", 1024))
FEATURES = ("running_jobs", "running_nodes", *(name for name, _ in SIZE_CLASSES),
            "jobs_new", "jobs_middle", "jobs_old", "mem_requested_gib")
_TIME_RE = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$")
_MEM_RE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)(?:[cn])?$", re.IGNORECASE)
_MEM_GIB = {"": 1 / 1024, "K": 1 / 2**20, "M": 1 / 1024, "G": 1.0, "T": 1024.0}


@dataclass(frozen=True)
class RunningJob:
    """One running job of a snapshot; ``limit_s`` is None for an unlimited job."""

    job_id: str
    nodes: int
    used_s: float
    limit_s: float | None
    partition: str
    mem_per_node_gib: float


def parse_slurm_time(text: str) -> float | None:
    """Seconds in a Slurm duration (``[days-][hours:]minutes:seconds``, or ``minutes``);
    None for ``UNLIMITED``, ``NOT_SET``, ``INVALID`` and the like."""
    value = text.strip()
    if value.isdigit():  # a bare number of minutes (time limits may be printed so)
        return 60.0 * int(value)
    match = _TIME_RE.match(value)
    if not match:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def _memory_gib(text: str) -> float:
    match = _MEM_RE.match(text.strip())
    if not match:
        return 0.0
    return float(match.group(1)) * _MEM_GIB[match.group(2).upper()]


def parse_squeue(text: str) -> list[RunningJob]:
    """The jobs of ``squeue`` output in :data:`SQUEUE_FORMAT` (blank lines ignored).

    Raises DataError naming the line when one does not have the six fields or a node count.
    """
    jobs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.strip().split("|")
        if len(fields) != 6 or not fields[1].strip().isdigit():
            raise DataError(f"squeue output line {number}: {line.strip()!r} is not "
                            f"'{SQUEUE_FORMAT}' (id|nodes|used|limit|partition|memory)")
        used = parse_slurm_time(fields[2])
        jobs.append(RunningJob(fields[0].strip(), int(fields[1]), used or 0.0,
                               parse_slurm_time(fields[3]), fields[4].strip(),
                               _memory_gib(fields[5])))
    return jobs


def queue_features(jobs: Iterable[RunningJob]) -> dict[str, Any]:
    """The :data:`FEATURES` of a snapshot, plus ``partitions`` (running jobs per partition)."""
    features: dict[str, Any] = dict.fromkeys(FEATURES, 0)
    features["mem_requested_gib"] = 0.0
    partitions: Counter[str] = Counter()
    for job in jobs:
        features["running_jobs"] += 1
        features["running_nodes"] += job.nodes
        size_class = SIZE_CLASSES[0][0]
        for name, low in SIZE_CLASSES:
            if job.nodes >= low:
                size_class = name
        features[size_class] += 1
        if job.limit_s:
            used = job.used_s / job.limit_s
            age = "jobs_new" if used < 1 / 3 else "jobs_middle" if used < 2 / 3 else "jobs_old"
            features[age] += 1
        features["mem_requested_gib"] += job.mem_per_node_gib * job.nodes
        partitions[job.partition] += 1
    features["mem_requested_gib"] = round(features["mem_requested_gib"], 3)
    features["partitions"] = dict(sorted(partitions.items()))
    return features


def squeue_available(squeue: str = "squeue") -> bool:
    """Whether an ``squeue`` program is on the PATH (a scheduler may still be unreachable)."""
    return shutil.which(squeue) is not None


def snapshot_queue(squeue: str = "squeue", timeout_s: float = 10.0) -> dict[str, Any]:
    """Run ``squeue`` once and return :func:`queue_features` of the running jobs.

    Raises DataError when squeue is missing, fails, times out or prints something else.
    """
    try:
        out = subprocess.run([squeue, *SQUEUE_ARGS], capture_output=True, text=True,
                             timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise DataError(f"queue: {squeue} not found on the PATH") from None
    except subprocess.TimeoutExpired:
        raise DataError(f"queue: {squeue} did not answer within {timeout_s:g} s") from None
    if out.returncode != 0:
        reason = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise DataError(f"queue: {squeue} exited with status {out.returncode}: {reason}")
    return queue_features(parse_squeue(out.stdout))
