"""iotune.execution.slurm: the job environment, srun and sbatch lines, squeue output,
Slurm times."""

from __future__ import annotations

from pathlib import Path

import pytest

from iotune.errors import DataError
from iotune.execution.slurm import (
    Allocation,
    current_allocation,
    job_id,
    parse_slurm_time,
    parse_squeue,
    render_job_script,
    running_jobs,
    slurm_time,
    squeue_available,
    srun_argv,
)

CMD = ("python", "kernels/ior.py", "--scratch", "/scratch/me")


@pytest.mark.parametrize(("environ", "expected"), [
    ({}, None),
    ({"SLURM_NTASKS": "8"}, None),
    ({"SLURM_JOB_ID": "42", "SLURM_JOB_NUM_NODES": "2", "SLURM_NTASKS": "48"},
     Allocation("42", 2, 48)),
    ({"SLURM_JOB_ID": "42", "SLURM_NNODES": "3", "SLURM_NPROCS": "5"}, Allocation("42", 3, 5)),
    ({"SLURM_JOB_ID": "7", "SLURM_JOB_NUM_NODES": "2", "SLURM_CPUS_ON_NODE": "16"},
     Allocation("7", 2, 32)),
    ({"SLURM_JOB_ID": "7"}, Allocation("7", 1, 1)),
])
def test_current_allocation(environ: dict[str, str], expected: Allocation | None) -> None:
    assert current_allocation(environ) == expected


def test_current_allocation_reads_this_process_environment(monkeypatch) -> None:
    monkeypatch.setenv("SLURM_JOB_ID", "99")
    monkeypatch.setenv("SLURM_NTASKS", "4")
    monkeypatch.delenv("SLURM_JOB_NUM_NODES", raising=False)
    monkeypatch.delenv("SLURM_NNODES", raising=False)
    assert current_allocation() == Allocation("99", 1, 4)
    assert job_id() == "99"
    monkeypatch.delenv("SLURM_JOB_ID")
    assert current_allocation() is None and job_id() is None


def test_srun_command_lines() -> None:
    assert srun_argv(48, CMD, nodes=2) == ["srun", "-n", "48", "-N", "2", "--mpi=pmi2", *CMD]
    assert srun_argv(4, CMD) == ["srun", "-n", "4", "--mpi=pmi2", *CMD]


def test_slurm_time_rounds_up_to_minutes() -> None:
    assert slurm_time(61) == "00:02:00"
    assert slurm_time(3600) == "01:00:00"
    assert slurm_time(26 * 3600) == "1-02:00:00"


@pytest.mark.parametrize(("text", "seconds"), [
    ("0:04", 4.0), ("12:01", 721.0), ("3:10:12", 11412.0), ("2-03:00:00", 183600.0),
    ("30", 1800.0), ("UNLIMITED", None), ("NOT_SET", None), ("INVALID", None)])
def test_parse_slurm_time(text: str, seconds: float | None) -> None:
    assert parse_slurm_time(text) == seconds


@pytest.mark.parametrize("seconds", [1, 59, 60, 3599, 86400, 90061])
def test_formatted_times_parse_back_to_at_least_the_request(seconds: int) -> None:
    parsed = parse_slurm_time(slurm_time(seconds))
    assert parsed is not None and seconds <= parsed < seconds + 60


def test_job_script_directives_in_order_without_empty_ones() -> None:
    text = render_job_script({"job-name": "x", "nodes": 2, "partition": None,
                              "time": "00:10:00"}, ["set -e", "srun hostname"])
    assert text == ("#!/bin/bash\n#SBATCH --job-name=x\n#SBATCH --nodes=2\n"
                    "#SBATCH --time=00:10:00\nset -e\nsrun hostname\n")


def test_parse_squeue_lines() -> None:
    jobs = parse_squeue("4455667|1|0:45|30:00|debug|4000M\n\n"
                        "4455670|8|3:10:12|UNLIMITED|regular|2G\n")
    assert [(j.job_id, j.nodes, j.used_s, j.limit_s, j.partition) for j in jobs] == [
        ("4455667", 1, 45.0, 1800.0, "debug"), ("4455670", 8, 11412.0, None, "regular")]
    assert jobs[0].mem_per_node_gib == pytest.approx(4000 / 1024)
    assert jobs[1].mem_per_node_gib == 2.0


def test_malformed_squeue_line_names_the_line() -> None:
    with pytest.raises(DataError, match=r"^squeue output line 2: 'JOBID PARTITION' is not"):
        parse_squeue("1|1|0:04|10:00|debug|0\nJOBID PARTITION\n")


def test_running_jobs_runs_squeue_with_its_format(tmp_path: Path, fake_program) -> None:
    fake = fake_program("squeue", 'echo "$@" > "$(dirname "$0")/args"; '
                                  'echo "5|2|1:00|2:00|debug|0"')
    (job,) = running_jobs(fake)
    assert (job.job_id, job.nodes, job.used_s, job.limit_s) == ("5", 2, 60.0, 120.0)
    assert (tmp_path / "args").read_text().split() == [
        "--noheader", "--states=RUNNING", "--format=%i|%D|%M|%l|%P|%m"]
    assert squeue_available(fake) and not squeue_available(str(tmp_path / "missing"))


def test_running_jobs_failures_are_data_errors(tmp_path: Path, fake_program) -> None:
    with pytest.raises(DataError, match="exited with status 1: squeue: error: Unable to"):
        running_jobs(fake_program("failing", "echo 'squeue: error: Unable to contact' >&2; exit 1"))
    with pytest.raises(DataError, match=r"did not answer within 0\.2 s"):
        running_jobs(fake_program("slow", "exec sleep 5"), timeout_s=0.2)
    with pytest.raises(DataError, match="not found on the PATH"):
        running_jobs(str(tmp_path / "missing"))
