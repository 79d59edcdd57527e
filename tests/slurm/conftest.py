"""A real single-node Slurm, started for the test and stopped after it.

Everything lives under the test's own directory (SLURM_CONF, state, spool, logs, pid
files, free ports), so the test neither depends on nor disturbs a Slurm that some other
process left running.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from iotune.store.lock import process_exists

DAEMONS = ("slurmctld", "slurmd", "munged", "sbatch", "sinfo", "squeue", "scontrol", "srun")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ensure_munge() -> int | None:
    """Start munged unless it runs; return its pid when this test started it."""
    if subprocess.run(["pgrep", "-x", "munged"], capture_output=True).returncode == 0:
        return None
    Path("/run/munge").mkdir(parents=True, exist_ok=True)
    shutil.chown("/run/munge", "munge", "munge")
    subprocess.run(["runuser", "-u", "munge", "--", "munged", "--force"], check=True,
                   capture_output=True)
    for _ in range(50):
        out = subprocess.run(["pgrep", "-x", "munged"], capture_output=True, text=True)
        if out.returncode == 0:
            return int(out.stdout.split()[0])
        time.sleep(0.1)
    pytest.fail("munged did not start")


@pytest.fixture
def slurm(tmp_path: Path):
    """Start slurmctld and slurmd on this host; yields the environment that reaches them."""
    if os.geteuid() != 0:  # a cluster user: the site's Slurm is not ours to start
        pytest.skip("the Slurm tests start their own slurmctld and slurmd, which needs root")
    missing = [d for d in DAEMONS if shutil.which(d) is None]
    if missing:
        pytest.fail(f"Slurm is not installed ({', '.join(missing)} missing): run "
                    "scripts/setup.sh --test as root, which installs slurm-wlm and munge")
    host = socket.gethostname().split(".")[0]
    root = tmp_path / "slurm"
    for sub in ("state", "spool", "log"):
        (root / sub).mkdir(parents=True)
    conf = root / "slurm.conf"
    conf.write_text(f"""\
ClusterName=iotunetest
SlurmctldHost={host}
SlurmctldPort={_free_port()}
SlurmdPort={_free_port()}
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SlurmUser=root
SlurmdUser=root
StateSaveLocation={root / "state"}
SlurmdSpoolDir={root / "spool"}
SlurmctldPidFile={root / "slurmctld.pid"}
SlurmdPidFile={root / "slurmd.pid"}
SlurmctldLogFile={root / "log" / "slurmctld.log"}
SlurmdLogFile={root / "log" / "slurmd.log"}
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=pmi2
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
NodeName={host} CPUs={os.cpu_count()} State=UNKNOWN
PartitionName=debug Nodes={host} Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES
""")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    munge_pid = _ensure_munge()
    started: list[Path] = []
    try:
        for daemon, pidfile in (("slurmctld", "slurmctld.pid"), ("slurmd", "slurmd.pid")):
            subprocess.run([daemon], env=env, check=True, capture_output=True, timeout=60)
            started.append(root / pidfile)
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            out = subprocess.run(["sinfo", "-h", "-o", "%T"], env=env, capture_output=True,
                                 text=True)
            if out.returncode == 0 and out.stdout.strip() in ("idle", "mixed"):
                break
            time.sleep(0.5)
        else:
            logs = "".join(p.read_text()[-1500:] for p in (root / "log").glob("*.log"))
            pytest.fail(f"Slurm did not become idle within 90 s; logs:\n{logs}")
        yield env
    finally:
        # Both daemons at once (each takes seconds to shut down), then munged.
        _stop_pids([pid for pid in map(_pid_of, started) if pid is not None])
        if munge_pid is not None:
            _stop_pids([munge_pid])


def _pid_of(pidfile: Path) -> int | None:
    for _ in range(50):  # a daemon writes its pid file shortly after forking
        if pidfile.exists() and pidfile.read_text().strip():
            break
        time.sleep(0.1)
    if pidfile.exists() and pidfile.read_text().strip():
        return int(pidfile.read_text().strip())
    return None


def _stop_pids(pids: list[int]) -> None:
    """SIGTERM to each, and SIGKILL to those still running 10 s later."""
    running = []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGTERM)
            running.append(pid)
        except ProcessLookupError:
            pass
    for _ in range(100):
        running = [pid for pid in running if process_exists(pid)]
        if not running:
            return
        time.sleep(0.1)
    for pid in running:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
