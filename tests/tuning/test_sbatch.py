import sys

from iotune.config import load_config
from iotune.train import plan_campaign
from iotune.train.jobscript import job_script


def test_job_script_lines(write_config, tmp_path):
    path = write_config({"system": {"cores_per_node": 2},
                         "train": {"repetitions": 2,
                                   "scales": [{"cores": 2}, {"cores": 4}]}})
    config = load_config(path)
    plans = plan_campaign(config)
    text = job_script(config, plans, per_run=30.0, partition="debug")
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert lines[1:10] == [
        f"#SBATCH --job-name=iotune-train-{config.kernel.name}",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks=4",
        "#SBATCH --time=00:12:00",  # 8 configurations x 2 reps x 30 s x 1.5
        f"#SBATCH --output={path.resolve().parent / 'iotune-train-%j.out'}",
        "#SBATCH --partition=debug",
        "#SBATCH --requeue",  # no account directive without --account
        "#SBATCH --signal=B:TERM@120",
        "#SBATCH --open-mode=append",
    ]
    assert lines[10].startswith("# iotune ")
    assert f"{sys.executable} -m iotune train -c {path.resolve()} &" in lines
    assert lines[-1] == 'exit "$status"'


def test_job_script_requeues_itself_when_iotune_stops_for_the_time_limit(write_config, tmp_path):
    """The script's logic, run by bash with a fake iotune: exit 75 requeues, others do not."""
    import subprocess

    from iotune.interrupt import REQUEUE_EXIT

    path = write_config({"train": {"repetitions": 1, "scales": [{"cores": 2}]}})
    config = load_config(path)
    text = job_script(config, plan_campaign(config), per_run=1.0)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "scontrol").write_text("#!/bin/sh\necho \"scontrol $*\" >> \"$LOG\"\n")
    (bin_dir / "scontrol").chmod(0o755)
    for status, requeued in ((REQUEUE_EXIT, True), (0, False), (1, False)):
        log = tmp_path / f"log{status}"
        fake = text.replace(f"{sys.executable} -m iotune train -c {path.resolve()}",
                            f"sh -c 'exit {status}'")
        script = tmp_path / f"job{status}.sh"
        script.write_text(fake)
        done = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                              env={"PATH": f"{bin_dir}:/usr/bin:/bin", "LOG": str(log),
                                   "SLURM_JOB_ID": "42"})
        assert done.returncode == status
        assert (log.read_text() if log.exists() else "") == (
            "scontrol requeue 42\n" if requeued else "")


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
