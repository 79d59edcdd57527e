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
    assert lines[1:7] == [
        f"#SBATCH --job-name=iotune-train-{config.kernel.name}",
        "#SBATCH --nodes=2",
        "#SBATCH --ntasks=4",
        "#SBATCH --time=00:12:00",  # 8 configurations x 2 reps x 30 s x 1.5
        f"#SBATCH --output={path.resolve().parent / 'iotune-train-%j.out'}",
        "#SBATCH --partition=debug",
    ]
    assert lines[7].startswith("# iotune ")  # no account directive without --account
    assert lines[-1].endswith(f"-m iotune train -c {path.resolve()}")


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
