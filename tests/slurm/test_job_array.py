"""A campaign run as a job array of 4 tasks on a real Slurm: the tasks share the runs, one
task cancelled mid-run leaves its run to the others, and the store ends with every planned
run exactly once, none failed or interrupted, and ``iotune status`` reading it complete."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
import yaml

from iotune.config import load_config
from iotune.store import Store
from iotune.train import plan_campaign

pytestmark = [pytest.mark.slurm]

APP = Path(__file__).resolve().parents[1] / "train" / "slow_app.py"
TASKS = 4
REPETITIONS = 6  # x 2 configurations of 1.5 s each: 12 runs, two tasks at a time


def squeue_states(env: dict[str, str], job: str) -> dict[str, str]:
    """State of each array task still known to squeue, by ``JOB_TASK`` id."""
    out = subprocess.run(["squeue", "-h", "-r", "-j", job, "-o", "%i %T"], env=env,
                         capture_output=True, text=True)
    return dict(line.split() for line in out.stdout.splitlines() if line.strip())


def status(config: Path, env: dict[str, str]) -> dict:
    done = subprocess.run([sys.executable, "-m", "iotune", "status", "-c", str(config),
                           "--format", "json"], env=env, capture_output=True, text=True,
                          cwd=config.parent, timeout=120, check=True)
    return json.loads(done.stdout)


def test_a_job_array_measures_each_run_once_though_one_task_is_cancelled(slurm, tmp_path):
    scratch, pids = tmp_path / "scratch", tmp_path / "pids"
    scratch.mkdir()
    pids.mkdir()
    (pids / "seconds").write_text("1.5")
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m"},
        "store": "store.jsonl",
        "kernel": {"command": f"{sys.executable} {APP} {{scratch}}/out.bin {pids}",
                   "metric": {"regex": r"write time: ([0-9.]+)"}, "preload": "no"},
        "space": {"romio_cb_write": ["enable", "disable"]},
        "train": {"repetitions": REPETITIONS, "scales": [{"cores": 1, "design": "full"}]},
    }))
    env = {**slurm, "PATH": f"{sys.prefix}/bin:{slurm['PATH']}"}
    script = tmp_path / "train.sbatch"
    subprocess.run([sys.executable, "-m", "iotune", "train", "-c", str(config),
                    "--emit-sbatch", str(script), "--array", str(TASKS)], env=env,
                   check=True, cwd=tmp_path)
    assert f"#SBATCH --array=0-{TASKS - 1}" in script.read_text()
    submitted = subprocess.run(["sbatch", "--parsable", "--oversubscribe", str(script)],
                               env=env, capture_output=True, text=True, check=True)
    job = submitted.stdout.strip().split(";")[0]

    cancelled, deadline = None, time.monotonic() + 300
    while time.monotonic() < deadline:
        if cancelled is None:  # a task measuring a run: cancel it mid-run
            measuring = [w for w in status(config, env)["workers"] if w["measuring"]
                         and w["state"] == "running" and w["job"]]
            if measuring:
                cancelled = measuring[0]["job"]
                subprocess.run(["scancel", cancelled], env=env, check=True)
        if cancelled is not None and not squeue_states(env, job):
            break
        time.sleep(0.5)
    logs = {p.name: p.read_text() for p in tmp_path.glob("iotune-train-*.out")}
    assert cancelled is not None, f"no task was seen measuring; logs: {logs}"
    assert not squeue_states(env, job), f"the array did not end in time; logs: {logs}"
    log = logs.get(f"iotune-train-{cancelled}.out", "")
    assert "train stopped by SIGTERM" in log and "requeueing" not in log, logs

    planned = {t.ident for p in plan_campaign(load_config(config)) for t in p.tasks}
    records = Store(tmp_path / "store.jsonl").records()
    counts = Counter((r["config_key"], r["rep"]) for r in records)
    assert set(counts) == planned and set(counts.values()) == {1}, (counts, logs)
    assert records and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert all(r["command"][:3] == ["srun", "-n", "1"] for r in records)
    report = status(config, env)
    assert report["complete"] and report["done"] == report["runs"] == len(planned)
    assert report["failed"] == 0
    jobs = {w["job"] for w in report["workers"]}
    assert jobs <= {f"{job}_{task}" for task in range(TASKS)} and len(jobs) >= 2, jobs
    assert [w["state"] for w in report["workers"] if w["job"] == cancelled] == ["interrupted"]
