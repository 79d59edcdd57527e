import sys

from iotune.config import load_config
from iotune.train import plan_campaign
from iotune.train.jobscript import job_script


def two_scale_campaign(write_config):
    """A campaign of 2 repetitions at 2 and 4 cores on nodes of 2 cores, and its plans."""
    config = load_config(write_config({"system": {"cores_per_node": 2},
                                       "train": {"repetitions": 2,
                                                 "scales": [{"cores": 2}, {"cores": 4}]}}))
    return config, plan_campaign(config)


def test_job_script_lines(write_config, tmp_path):
    config, plans = two_scale_campaign(write_config)
    text = job_script(config, plans, per_run=30.0, partition="debug")
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert lines[1:10] == [
        f"#SBATCH --job-name=iotune-train-{config.kernel.name}",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks=4",
        "#SBATCH --time=00:12:00",  # 8 configurations x 2 reps x 30 s x 1.5
        f"#SBATCH --output={config.path.resolve().parent / 'iotune-train-%j.out'}",
        "#SBATCH --partition=debug",
        "#SBATCH --requeue",  # no account directive without --account
        "#SBATCH --signal=B:USR1@120",
        "#SBATCH --open-mode=append",
    ]
    assert lines[10].startswith("# iotune ")
    assert f"{sys.executable} -m iotune train -c {config.path.resolve()} &" in lines
    assert lines[-1] == 'exit "$status"'


def test_job_script_requeues_itself_on_the_time_limit_signal_only(write_config, tmp_path):
    """The script's logic, run by bash around a fake iotune that exits 75 on SIGTERM: the
    time-limit signal (USR1) requeues the job; scancel's SIGTERM and normal ends do not."""
    import signal
    import subprocess
    import time

    from iotune.execution.interrupt import REQUEUE_EXIT

    path = write_config({"train": {"repetitions": 1, "scales": [{"cores": 2}]}})
    config = load_config(path)
    text = job_script(config, plan_campaign(config), per_run=1.0)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text("#!/bin/sh\necho \"scontrol $*\" >> \"$LOG\"\n")
    (bin_dir / "scontrol").chmod(0o755)
    cases = ((signal.SIGUSR1, REQUEUE_EXIT, True), (signal.SIGTERM, REQUEUE_EXIT, False),
             (None, 0, False))
    for sent, status, requeued in cases:
        name = sent.name if sent else "none"
        log, ready = tmp_path / f"log-{name}", tmp_path / f"ready-{name}"
        fake = (f"sh -c 'trap \"exit {REQUEUE_EXIT}\" TERM; touch {ready}; "
                f"{'sleep 30 & wait' if sent else 'exit 0'}'")
        script = tmp_path / f"job-{name}.sh"
        script.write_text(text.replace(
            f"{sys.executable} -m iotune train -c {config.path.resolve()}", fake))
        job = subprocess.Popen(["bash", str(script)], text=True,
                               env={"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(log),
                                    "SLURM_JOB_ID": "42"})
        deadline = time.monotonic() + 30
        while sent and not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        if sent:
            job.send_signal(sent)
        assert job.wait(timeout=30) == status, name
        assert (log.read_text() if log.exists() else "") == (
            "scontrol requeue 42\n" if requeued else ""), name


def test_an_array_script_shares_the_campaign_among_its_tasks(write_config, tmp_path):
    config, plans = two_scale_campaign(write_config)
    text = job_script(config, plans, per_run=300.0, array=4)
    lines = text.splitlines()
    assert "#SBATCH --array=0-3" in lines
    assert "#SBATCH --time=00:30:00" in lines  # 16 runs x 300 s x 1.5 / 4 tasks
    assert f"#SBATCH --output={config.path.resolve().parent / 'iotune-train-%A_%a.out'}" in lines
    assert "#SBATCH --requeue" in lines
    assert any("iotune status -c" in line for line in lines)


def test_seconds_per_run_is_the_median_of_the_kernels_recorded_wall_times(tmp_path):
    from iotune.store import Store
    from iotune.train.jobscript import DEFAULT_SECONDS_PER_RUN, seconds_per_run

    store = Store(tmp_path / "s.jsonl")
    assert seconds_per_run(store, "vpic") == DEFAULT_SECONDS_PER_RUN  # no store yet
    for i, elapsed in enumerate((2.0, 4.0, None)):
        store.append({"kernel": "vpic", "backend": "mpi", "campaign": "train", "cores": 2,
                      "status": "ok", "config_key": str(i), "elapsed_s": elapsed,
                      "result": {"times_s": {"total": 1.0}}})
    assert seconds_per_run(store, "vpic") == 3.0
    assert seconds_per_run(store, "ior") == DEFAULT_SECONDS_PER_RUN
