"""squeue output: recorded from a real Slurm and a site-like example, parsed into features."""

from __future__ import annotations

from pathlib import Path

from iotune.execution.slurm import parse_squeue
from iotune.variability.queue import FEATURES, queue_features, snapshot_queue
from iotune.variability.simulate import _simulated_queue

DATA = Path(__file__).parent / "data"


def test_recorded_slurm_output() -> None:
    jobs = parse_squeue((DATA / "squeue_slurm22_two_jobs.txt").read_text())
    assert [(j.job_id, j.nodes, j.used_s, j.limit_s) for j in jobs] == [
        ("1", 1, 4.0, 600.0), ("2", 1, 4.0, 86400.0)]
    features = queue_features(jobs)
    assert features["running_jobs"] == 2 and features["running_nodes"] == 2
    assert features["jobs_xs"] == 2 and features["jobs_new"] == 2
    assert features["partitions"] == {"debug": 2}


def test_site_example_features() -> None:
    features = queue_features(parse_squeue((DATA / "squeue_site_example.txt").read_text()))
    assert {k: features[k] for k in FEATURES} == {
        "running_jobs": 8, "running_nodes": 2654, "jobs_xs": 2, "jobs_s": 2, "jobs_m": 2,
        "jobs_l": 1, "jobs_xl": 1, "jobs_new": 3, "jobs_middle": 1, "jobs_old": 2,
        "mem_requested_gib": 74245.906,
    }
    assert features["partitions"] == {"debug": 1, "premium": 1, "regular": 4, "service": 1,
                                      "shared": 1}


def test_snapshot_runs_squeue(fake_program) -> None:
    fake = fake_program("squeue", f"cat {DATA / 'squeue_site_example.txt'}")
    assert snapshot_queue(fake)["running_jobs"] == 8


def test_simulated_queue_has_the_same_features() -> None:
    import numpy as np

    assert set(_simulated_queue(True, np.random.default_rng(0))) == set(FEATURES)
