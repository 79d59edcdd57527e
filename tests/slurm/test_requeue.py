"""A campaign longer than its job's time limit: the job script requeues itself and finishes.

A real single-node Slurm runs the job script ``iotune train --emit-sbatch`` writes, with a
time limit far shorter than the campaign. Near the limit Slurm signals the script
(``--signal``), iotune stops at once with the requeue status and the script requeues the
job; the next start resumes. The store must end with exactly the planned runs, each once,
none failed or interrupted.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from iotune.config import load_config
from iotune.store import Store
from iotune.train import plan_campaign

# About 90 s, most of it waiting on Slurm: its time limit signal comes 30-90 s into a
# 2-minute job, and a requeued job is held until the first start has wholly ended.
# `-m "not slow"` leaves it out of a quick local run; CI (`make test`) runs it.
pytestmark = [pytest.mark.slurm, pytest.mark.slow]

APP = Path(__file__).resolve().parents[1] / "train" / "slow_app.py"
#: x 2 configurations of 2 s each: 120 s of runs, more than the first start gets. Slurm
#: signals at most 90 s in; a campaign shorter than that can end before the signal, and the
#: test then checks nothing (with 20 repetitions, 80 s, it did on a quiet machine).
REPETITIONS = 30
TIME_LIMIT = "2"  # minutes, Slurm's smallest practical limit
SIGNAL = "B:USR1@30"  # Slurm may send it up to 60 s early: between 30 s and 90 s in
IDLE_S = 15  # seconds the node must read idle before the requeued job is hurried


def job_field(env: dict[str, str], job: str, name: str) -> str:
    out = subprocess.run(["scontrol", "show", "job", job], env=env, capture_output=True,
                         text=True)
    return next((w.split("=", 1)[1] for w in out.stdout.split() if w.startswith(f"{name}=")),
                "")


def node_idle(env: dict[str, str]) -> bool:
    out = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True, text=True)
    return out.stdout.strip() == "idle"


def test_a_requeued_job_ends_with_exactly_the_planned_runs(slurm, tmp_path):
    scratch, pids = tmp_path / "scratch", tmp_path / "pids"
    scratch.mkdir()
    pids.mkdir()
    (pids / "seconds").write_text("2")
    config_path = tmp_path / "iotune.yaml"
    config_path.write_text(yaml.safe_dump({
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m"},
        "store": "store.jsonl",
        "kernel": {"command": f"{sys.executable} {APP} {{scratch}}/out.bin {pids}",
                   "metric": {"regex": r"write time: ([0-9.]+)"}, "preload": "no"},
        "space": {"romio_cb_write": ["enable", "disable"]},
        "train": {"repetitions": REPETITIONS, "scales": [{"cores": 2, "design": "full"}]},
    }))
    env = {**slurm, "PATH": f"{sys.prefix}/bin:{slurm['PATH']}"}
    script = tmp_path / "train.sbatch"
    subprocess.run([sys.executable, "-m", "iotune", "train", "-c", str(config_path),
                    "--emit-sbatch", str(script)], env=env, check=True, cwd=tmp_path)
    assert "#SBATCH --requeue" in script.read_text()

    submitted = subprocess.run(["sbatch", "--parsable", f"--time={TIME_LIMIT}",
                                f"--signal={SIGNAL}", str(script)], env=env,
                               capture_output=True, text=True, check=True)
    job = submitted.stdout.strip().split(";")[0]
    state, restarts, sped_up, hurried, idle_since = "", 0, False, False, None
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        state = job_field(env, job, "JobState")
        restarts = int(job_field(env, job, "Restarts") or 0)
        if restarts and not sped_up:
            (pids / "seconds").write_text("0.05")  # the point is made: finish quickly
            sped_up = True
        idle = restarts and state == "PENDING" and node_idle(env)
        idle_since = (idle_since or time.monotonic()) if idle else None
        if not hurried and idle_since is not None and time.monotonic() - idle_since >= IDLE_S:
            # Slurm holds a requeued job for about two minutes; once its first start has
            # wholly ended, letting it start at once only saves time. Starting it earlier
            # revokes the job's credential, and the node reads idle a little before the old
            # start's clean-up is done: hence a while of idle first, not one look.
            subprocess.run(["scontrol", "update", f"JobId={job}", "StartTime=now"], env=env,
                           capture_output=True)
            hurried = True
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL",
                     "OUT_OF_MEMORY"):
            break
        time.sleep(1)
    log = "".join(p.read_text() for p in tmp_path.glob("iotune-train-*.out"))
    controller = Path(env["SLURM_CONF"]).parent / "log" / "slurmctld.log"
    events = [line for line in controller.read_text().splitlines()
              if f"JobId={job}" in line or f"job {job}" in line.lower()]
    assert state == "COMPLETED", (f"job {job} ended {state or 'not at all'}; log tail:\n"
                                  + "\n".join(log.splitlines()[-12:])
                                  + "\nslurmctld:\n" + "\n".join(events[-20:]))
    assert restarts >= 1, f"the job was never requeued:\n{log}"
    assert "iotune: train stopped by SIGTERM" in log and "requeueing job" in log, log

    planned = {t.ident for p in plan_campaign(load_config(config_path)) for t in p.tasks}
    records = Store(tmp_path / "store.jsonl").records()
    assert len(records) == len(planned), "a run was recorded twice or lost"
    assert {(r["config_key"], r["rep"]) for r in records} == planned
    assert records and all(r["status"] == "ok" for r in records), [r.get("error") for r in records]
    assert all(r["command"][:3] == ["srun", "-n", "2"] for r in records)
