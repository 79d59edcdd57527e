"""A job killed during a candidate's first trial: its start record holds the trial while the
job may still run, ``job status`` names it with the command that releases it, and past the
job's own time limit it is lost and the trial is given again."""

from __future__ import annotations

import json
import os
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from iotune.production.jobs import config_name, finish_job, read_campaign, start_job
from iotune.production.time_limit import (
    DEFAULT_TIME_LIMIT_H,
    LOST_GRACE_S,
    TimeLimit,
    job_time_limit,
    parse_time_limit,
)
from iotune.store import Store
from tests.cli_result import error_line, invoke

CANDIDATE = {"cb_buffer_size": 4194304}


def _job(store: Path, job_id: str, *extra: str, candidate: Path | None = None) -> str:
    args = ["job", "start", "--store", str(store), "--tag", "app", "--job-id", job_id,
            "--time-limit", "1:00:00", *extra]
    out = invoke(*args, *(["--candidate", str(candidate)] if candidate else []))
    assert out.exit_code == 0, out.output
    return out.stdout


def _backdate(store: Path, job_id: str, by: timedelta) -> None:
    """Move job ``job_id``'s start back by ``by``: the journal as it stands that much later."""
    lines = []
    for line in store.read_text().splitlines():
        record = json.loads(line)
        if record.get("job_id") == job_id and record.get("event") == "start":
            for key in ("recorded_at", "started_at"):
                when = datetime.fromisoformat(record[key]) - by
                record[key] = when.isoformat(timespec="seconds")
        lines.append(json.dumps(record, sort_keys=True))
    store.write_text("\n".join(lines) + "\n")


@pytest.fixture()
def campaign(tmp_path: Path) -> tuple[Path, Path]:
    """Three default jobs, then the candidate's first trial in job j3, never finished."""
    store, tuned = tmp_path / "prod.jsonl", tmp_path / "tuned.yaml"
    tuned.write_text("settings:\n  cb_buffer_size: 4MiB\n")
    for i in range(3):
        _job(store, f"j{i}", candidate=tuned)
        assert invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id",
                      f"j{i}", "--seconds", str(10.0 + i * 0.1)).exit_code == 0
    assert "first trial of a top-ranked candidate" in _job(store, "j3", candidate=tuned)
    return store, tuned


def test_a_first_trial_past_its_time_limit_is_lost_and_given_again(
        campaign: tuple[Path, Path]) -> None:
    store, tuned = campaign
    name = config_name(CANDIDATE)
    # Within its limit the trial holds: the next job runs the default, and says why.
    waiting = _job(store, "j4", candidate=tuned)
    assert f"default (default: waiting for the result of the running first trial of {name})" \
        in waiting
    shown = invoke("job", "status", "--store", str(store), "--tag", "app")
    assert shown.exit_code == 0, shown.output
    assert "campaign app: 5 jobs: 3 ok, 0 failed, 2 running, 0 lost" in shown.stdout
    row = next(line for line in shown.stdout.splitlines() if line.startswith(name))
    assert row.split()[1:5] == ["0", "1", "0", "0"] and row.endswith("first trial running")
    trial = next(line for line in shown.stdout.splitlines()
                 if line.startswith(f"first trial of {name} running in job j3 for "))
    assert "(time limit 1 h 00 min by --time-limit; counted lost 1 h 10 min after its " \
           "start)" in trial
    assert trial.endswith(f"if that job is gone: iotune job finish --store {store} --tag app "
                          "--job-id j3 --failed")
    doc = json.loads(invoke("job", "status", "--store", str(store), "--tag", "app",
                            "--format", "json").stdout)
    [running] = doc["running_first_trials"]
    assert (running["config"], running["job_id"], running["time_limit_s"]) == (name, "j3",
                                                                               3600.0)
    assert 0 <= running["running_for_s"] < 600
    # Past its limit and the grace, the job is lost: the trial goes to the next job.
    _backdate(store, "j3", timedelta(hours=1, seconds=LOST_GRACE_S + 60))
    later = invoke("job", "status", "--store", str(store), "--tag", "app").stdout
    assert "campaign app: 5 jobs: 3 ok, 0 failed, 1 running, 1 lost" in later
    assert "running in job" not in later and f"needed: a first trial of {name}" in later
    row = next(line for line in later.splitlines() if line.startswith(name))
    assert row.split()[1:5] == ["0", "0", "0", "1"] and row.endswith("admissible")
    again = _job(store, "j5", candidate=tuned)
    assert f"{name} (challenger: first trial of a top-ranked candidate)" in again
    # The lost job stays a job without a time; finished late, it is recorded as it ends.
    states = {j.job_id: j.state for j in read_campaign(Store(store), "app").jobs}
    assert (states["j3"], states["j5"]) == ("lost", "running")
    finish_job(Store(store), "app", "j3", None)
    assert read_campaign(Store(store), "app").jobs[3].state == "failed"


def test_the_release_command_status_prints_gives_the_trial_again_at_once(
        campaign: tuple[Path, Path]) -> None:
    store, tuned = campaign
    shown = invoke("job", "status", "--store", str(store), "--tag", "app").stdout
    release = next(line for line in shown.splitlines() if "if that job is gone: " in line)
    command = release.split("if that job is gone: ")[1].split()
    assert command[:3] == ["iotune", "job", "finish"]
    done = invoke(*command[1:])
    assert done.exit_code == 0, done.output
    assert "job j3 of app: failed" in done.stderr
    assert "challenger: first trial" in _job(store, "j4", candidate=tuned)
    counted = invoke("job", "status", "--store", str(store), "--tag", "app").stdout
    assert "campaign app: 5 jobs: 3 ok, 1 failed, 1 running, 0 lost" in counted


def test_the_time_limit_comes_from_the_option_slurm_or_the_default(tmp_path: Path) -> None:
    def squeue(output: str, code: int = 0):
        def run(argv, **_):
            assert argv == ["squeue", "-h", "-j", "77", "-o", "%l"]
            return subprocess.CompletedProcess(argv, code, output, "")
        return run

    slurm = {"SLURM_JOB_ID": "77"}
    assert job_time_limit("90", slurm, squeue("2:00:00")) == TimeLimit(5400.0, "--time-limit")
    assert job_time_limit(None, slurm, squeue("2:00:00\n")) == TimeLimit(7200.0,
                                                                         "Slurm (squeue)")
    assert job_time_limit(None, slurm, squeue("1-12:00:00")).seconds == 36 * 3600
    default = TimeLimit(DEFAULT_TIME_LIMIT_H * 3600, "default")
    for out, code in (("UNLIMITED", 0), ("", 1), ("INVALID", 0), ("", 0)):
        assert job_time_limit(None, slurm, squeue(out, code)) == default
    assert job_time_limit(None, {}, squeue("2:00:00")) == default  # outside Slurm: no query
    env = {**slurm, "SLURM_JOB_START_TIME": "1000", "SLURM_JOB_END_TIME": "4600"}
    assert job_time_limit(None, env, squeue("9:00:00")) == TimeLimit(
        3600.0, "Slurm (job environment)")
    assert [parse_time_limit(t) for t in ("30", "30:15", "2:00:00", "1-12", "1-12:30",
                                          "1-00:00:05")] == [
        1800.0, 1815.0, 7200.0, 129600.0, 131400.0, 86405.0]


def test_job_start_asks_squeue_for_the_slurm_jobs_limit(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "squeue"
    fake.write_text("#!/bin/sh\n[ \"$*\" = '-h -j 4242 -o %l' ] && echo 30:00\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    monkeypatch.setenv("SLURM_JOB_ID", "4242")
    for name in ("SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_JOB_START_TIME",
                 "SLURM_JOB_END_TIME"):
        monkeypatch.delenv(name, raising=False)
    store = tmp_path / "prod.jsonl"
    out = invoke("job", "start", "--store", str(store), "--tag", "app")
    assert out.exit_code == 0, out.output
    assert "# time limit 30 min by Slurm (squeue)" in out.stdout
    [record] = Store(store).records()
    assert (record["job_id"], record["time_limit_s"], record["time_limit_source"]) == (
        "4242", 1800.0, "Slurm (squeue)")


@pytest.mark.parametrize("value", ["0", "UNLIMITED", "2h", "-1", "1:2:3:4"])
def test_a_bad_time_limit_is_one_line_and_records_nothing(tmp_path: Path, value: str) -> None:
    store = tmp_path / "prod.jsonl"
    start_job(Store(store), "app", "j0", [])
    before = store.read_bytes()
    out = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id", "j1",
                 "--time-limit", value)
    assert out.exit_code != 0
    assert error_line(out).startswith(f"--time-limit: {value!r} is not a "
                                      "time limit above 0")
    assert store.read_bytes() == before


def test_a_start_recorded_before_limits_were_is_lost_after_the_default(tmp_path: Path) -> None:
    store = tmp_path / "prod.jsonl"
    start_job(Store(store), "app", "j0", [])
    records = Store(store).records()
    assert records[0]["time_limit_s"] == DEFAULT_TIME_LIMIT_H * 3600
    started = datetime.fromisoformat(records[0]["recorded_at"])
    just = timedelta(hours=DEFAULT_TIME_LIMIT_H, seconds=LOST_GRACE_S)
    for record in records:  # as an older journal has it: no limit recorded
        record.pop("time_limit_s"), record.pop("time_limit_source")
    store.write_text("".join(json.dumps(r, sort_keys=True) + "\n" for r in records))
    before = read_campaign(Store(store), "app", now=started + just - timedelta(seconds=5))
    after = read_campaign(Store(store), "app", now=started + just + timedelta(seconds=5))
    assert (before.jobs[0].state, after.jobs[0].state) == ("running", "lost")
    assert before.runs[0].pending and not after.runs[0].pending
    assert after.jobs[0].time_limit_source == "default"
