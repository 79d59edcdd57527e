"""Job-queue features from Slurm's ``squeue``: how many jobs run, how large and how old.

Wan et al. (Table II) feed the state classifier with the running jobs of the machine: their
number, their sizes in size classes, and their ages (*new* jobs have used less than a third
of their time limit, *middle-aged* ones less than two thirds, the rest are *old*). Here one
snapshot is the running jobs :func:`iotune.execution.slurm.running_jobs` reads from ``squeue`` (job
id, nodes, time used, time limit, partition, memory per node) and its features are

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

from collections import Counter
from collections.abc import Iterable
from typing import Any

from iotune.execution.slurm import RunningJob, running_jobs

#: (feature, smallest node count) of the size classes, smallest first.
SIZE_CLASSES = (("jobs_xs", 1), ("jobs_s", 2), ("jobs_m", 16), ("jobs_l", 128),
                ("jobs_xl", 1024))
FEATURES = ("running_jobs", "running_nodes", *(name for name, _ in SIZE_CLASSES),
            "jobs_new", "jobs_middle", "jobs_old", "mem_requested_gib")


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


def snapshot_queue(squeue: str = "squeue", timeout_s: float = 10.0) -> dict[str, Any]:
    """Run ``squeue`` once and return :func:`queue_features` of the running jobs.

    Raises DataError when squeue is missing, fails, times out or prints something else.
    """
    return queue_features(running_jobs(squeue, timeout_s))
