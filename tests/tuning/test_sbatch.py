from iotune.campaign import plan_campaign
from iotune.config import load_config
from iotune.sbatch import job_script, slurm_time


def test_slurm_time_rounds_up():
    assert slurm_time(61) == "00:02:00"
    assert slurm_time(3600) == "01:00:00"
    assert slurm_time(26 * 3600) == "1-02:00:00"


def test_job_script_lines(write_config, tmp_path):
    path = write_config({"system": {"cores_per_node": 2},
                         "train": {"repetitions": 2,
                                   "scales": [{"cores": 2}, {"cores": 4}]}})
    config = load_config(path)
    plans = plan_campaign(config)
    text = job_script(config, plans, per_run=30.0, partition="debug")
    lines = text.splitlines()
    assert lines[0] == "#!/bin/bash"
    assert "#SBATCH --nodes=2" in lines
    assert "#SBATCH --ntasks=4" in lines
    assert "#SBATCH --partition=debug" in lines
    assert "#SBATCH --time=00:12:00" in lines  # 8 configurations x 2 reps x 30 s x 1.5
    assert lines[-1].endswith(f"-m iotune train -c {path.resolve()}")
