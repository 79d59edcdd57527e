"""``iotune tune --emit-sbatch``: the job script's directives and command line, the script
run by bash as Slurm would start it (a real simulated tune, then a fake iotune to drive the
requeue), and what it refuses."""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from iotune.execution.interrupt import REQUEUE_EXIT
from tests.cli_result import error_line, invoke, isolate

SIM = ("--backend", "sim", "--system", "hopper")
TUNE = ("tune", *SIM, "--cores", "64", "--budget", "8", "-o", "tuned.yaml")


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty working directory with no config to find and no Slurm job around."""
    monkeypatch.chdir(tmp_path)
    isolate(monkeypatch, tmp_path / "xdg")
    return tmp_path


def _emit(*extra: str) -> str:
    result = invoke(*TUNE, "--emit-sbatch", "tune.sbatch", *extra)
    assert result.exit_code == 0, result.output
    assert "submit it with: sbatch tune.sbatch" in result.output
    return Path("tune.sbatch").read_text()


def test_the_job_script_asks_for_the_tunes_ranks_and_runs_the_same_tune(here):
    text = _emit("--partition", "debug", "--account", "proj_1", "--time", "1:30:00",
                 "--option", "seed=3")
    lines = text.splitlines()
    assert lines[:11] == [
        "#!/bin/bash",
        "#SBATCH --job-name=iotune-tune-vpic",
        "#SBATCH --nodes=3",  # 64 ranks on hopper's nodes of 24 cores
        "#SBATCH --ntasks=64",
        "#SBATCH --time=1:30:00",
        f"#SBATCH --output={here}/iotune-tune-%j.out",
        "#SBATCH --partition=debug",
        "#SBATCH --account=proj_1",
        "#SBATCH --requeue",
        "#SBATCH --signal=B:USR1@120",
        "#SBATCH --open-mode=append",
    ]
    assert f"cd {shlex.quote(str(here))}" in lines
    command = [shlex.quote(sys.executable), "-m", "iotune", "tune", "--cores", "64", "--budget",
               "8", "--option", "seed=3", *SIM, "--output", "tuned.yaml", "&"]
    assert " ".join(command) in lines
    assert not any("first=" in line for line in lines)  # no --fresh given
    assert [p.name for p in here.iterdir()] == ["tune.sbatch"]  # nothing measured
    assert Path("tune.sbatch").stat().st_mode & 0o777 == 0o755


def test_the_time_limit_is_estimated_from_the_budget_without_time(here):
    lines = _emit().splitlines()
    # (8 configurations + the default) x 1 repetition x 60 s (no run recorded) x 1.5 =
    # 810 s, rounded up to whole minutes
    assert "#SBATCH --time=00:14:00" in lines
    assert not any(line.startswith(("#SBATCH --partition", "#SBATCH --account"))
                   for line in lines)


def test_a_strategy_without_a_budget_needs_time(here):
    result = invoke("tune", *SIM, "--cores", "64", "--strategy", "exhaustive",
                    "--emit-sbatch", "tune.sbatch")
    assert result.exit_code != 0
    assert "give --time or --budget" in error_line(result)
    assert not Path("tune.sbatch").exists()
    result = invoke("tune", *SIM, "--cores", "64", "--strategy", "exhaustive",
                    "--emit-sbatch", "tune.sbatch", "--time", "2-0")
    assert result.exit_code == 0, result.output
    assert "#SBATCH --time=2-0" in Path("tune.sbatch").read_text().splitlines()


def _fake_bin(directory: Path) -> Path:
    """``scontrol`` that logs its arguments to ``$LOG``."""
    bin_dir = directory / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "scontrol").write_text("#!/bin/sh\necho \"scontrol $*\" >> \"$LOG\"\n")
    (bin_dir / "scontrol").chmod(0o755)
    return bin_dir


def test_the_script_runs_the_tune_under_bash_as_slurm_starts_it(here):
    """The script as written, in bash with a Slurm job's environment: the simulated tune
    runs to its end, writes the tuned file and the store, and the job ends with status 0."""
    _emit()
    bin_dir = _fake_bin(here)
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(here), "LOG": str(here / "log"),
           "SLURM_JOB_ID": "42", "SLURM_NTASKS": "64", "SLURM_JOB_NUM_NODES": "3",
           "XDG_CONFIG_HOME": str(here / "xdg"),
           **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"}}
    done = subprocess.run(["bash", str(here / "tune.sbatch")], cwd="/", env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    tuned = yaml.safe_load((here / "tuned.yaml").read_text())
    assert tuned["cores"] == 64 and tuned["backend"] == "sim"
    assert tuned["provenance"] == "simulated"
    assert (here / "iotune-store.jsonl").stat().st_size > 0
    assert not (here / "log").exists()  # no requeue


@pytest.mark.parametrize(("sent", "restarts", "requeued"), [
    (signal.SIGUSR1, None, True), (signal.SIGTERM, None, False), (None, "1", False)])
def test_the_script_requeues_at_the_time_limit_and_gives_fresh_to_the_first_start_only(
        here, sent, restarts, requeued):
    """The script's logic around a fake iotune that logs its arguments and exits 75 on
    SIGTERM: USR1 (the time limit) requeues the job, scancel's TERM does not; ``--fresh``
    reaches the first start only (``SLURM_RESTART_COUNT`` unset), never a requeued one."""
    text = _emit("--fresh")
    bin_dir = _fake_bin(here)
    ready, args = here / "ready", here / "args"
    fake = here / "fake-iotune"
    fake.write_text(f"#!/bin/sh\nprintf '%s\\n' \"$@\" > {args}\n"
                    f"trap 'exit {REQUEUE_EXIT}' TERM\ntouch {ready}\n"
                    + ("sleep 30 & wait\n" if sent else "exit 0\n"))
    fake.chmod(0o755)
    Path("tune.sbatch").write_text(text.replace(shlex.quote(sys.executable), str(fake), 1))
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(here / "log"), "SLURM_JOB_ID": "42",
           **({"SLURM_RESTART_COUNT": restarts} if restarts else {})}
    job = subprocess.Popen(["bash", "tune.sbatch"], env=env, text=True)
    deadline = time.monotonic() + 30
    while sent and not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    if sent:
        job.send_signal(sent)
    assert job.wait(timeout=30) == (REQUEUE_EXIT if sent else 0)
    log = (here / "log").read_text() if (here / "log").exists() else ""
    assert log == ("scontrol requeue 42\n" if requeued else "")
    given = args.read_text().splitlines()
    assert given[:5] == ["-m", "iotune", "tune", "--cores", "64"]
    assert ("--fresh" in given) == (restarts is None)
