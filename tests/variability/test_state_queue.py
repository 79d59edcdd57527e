"""squeue output: recorded from a real Slurm and a site-like example, parsed into features."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from iotune.errors import DataError
from iotune.variability.queue import (
    FEATURES,
    parse_slurm_time,
    parse_squeue,
    queue_features,
    snapshot_queue,
)
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


@pytest.mark.parametrize(("text", "seconds"), [
    ("0:04", 4.0), ("12:01", 721.0), ("3:10:12", 11412.0), ("2-03:00:00", 183600.0),
    ("30", 1800.0), ("UNLIMITED", None), ("NOT_SET", None), ("INVALID", None)])
def test_slurm_times(text: str, seconds: float | None) -> None:
    assert parse_slurm_time(text) == seconds


def test_malformed_line_names_the_line() -> None:
    with pytest.raises(DataError, match=r"^squeue output line 2: 'JOBID PARTITION' is not"):
        parse_squeue("1|1|0:04|10:00|debug|0\nJOBID PARTITION\n")


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "squeue"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def test_snapshot_runs_squeue(tmp_path: Path) -> None:
    fake = _script(tmp_path, f"cat {DATA / 'squeue_site_example.txt'}")
    assert snapshot_queue(fake)["running_jobs"] == 8


def test_snapshot_failure_is_a_data_error(tmp_path: Path) -> None:
    fake = _script(tmp_path, "echo 'squeue: error: Unable to contact slurm controller' >&2\n"
                             "exit 1")
    with pytest.raises(DataError, match=r"exited with status 1: squeue: error: Unable to"):
        snapshot_queue(fake)
    with pytest.raises(DataError, match="not found on the PATH"):
        snapshot_queue(str(tmp_path / "missing"))


def test_simulated_queue_has_the_same_features() -> None:
    import numpy as np

    assert set(_simulated_queue(True, np.random.default_rng(0))) == set(FEATURES)
