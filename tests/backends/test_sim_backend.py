"""The sim backend: labelled records, reproducible noise, and a tune at a scale we cannot run."""

import json

import yaml
from click.testing import CliRunner

from iotune.backends import RunRequest, make_backend
from iotune.cli.main import cli
from iotune.config import load_config
from iotune.store import Store


def test_records_are_labelled_simulated(hopper_config):
    config = load_config(hopper_config)
    backend = make_backend(config, "sim")
    record = backend.measure(RunRequest("vpic", 512, {"stripe_count": 64}, config.kernel.args))
    assert record["backend"] == "sim" and record["provenance"] == "simulated"
    assert record["system"] == "hopper"
    assert record["result"]["simulated"] is True
    assert record["result"]["bytes_written"] == 512 * 8 * 2**20 * 32


def test_noise_is_seeded_per_configuration_and_repetition(hopper_config, tmp_path):
    text = hopper_config.read_text().replace("  system: hopper", "  system: hopper\n  noise: 1.0")
    hopper_config.write_text(text)
    config = load_config(hopper_config)
    backend = make_backend(config, "sim")
    request = RunRequest("vpic", 512, {"stripe_count": 64}, config.kernel.args)
    first = [backend.measure(request, rep)["result"]["times_s"]["total"] for rep in range(3)]
    again = [backend.measure(request, rep)["result"]["times_s"]["total"] for rep in range(3)]
    assert first == again
    assert len(set(first)) == 3  # repetitions differ


def test_sim_train_and_tune_at_2048_cores(hopper_config, tmp_path):
    # Noise off: the comparison with the exhaustive optimum is then between true times.
    text = hopper_config.read_text()
    hopper_config.write_text(text.replace("backend:\n  name: mpi\n",
                                          "backend:\n  name: mpi\n  noise: 0\n"))
    runner = CliRunner()
    trained = runner.invoke(cli, ["train", "-c", str(hopper_config), "--backend", "sim"])
    assert trained.exit_code == 0, trained.output
    out = runner.invoke(cli, ["tune", "-c", str(hopper_config), "--backend", "sim", "--cores",
                              "2048", "--format", "json", "-o", str(tmp_path / "t.yaml")])
    assert out.exit_code == 0, out.output
    result = json.loads(out.output[out.output.index("{"):out.output.rindex("}") + 1])
    assert result["provenance"] == "simulated"
    assert result["search"]["configurations"] <= 30
    # the exhaustive optimum of the same simulated space
    exhaustive = runner.invoke(cli, ["tune", "-c", str(hopper_config), "--backend", "sim",
                                     "--cores", "2048", "--strategy", "exhaustive",
                                     "--format", "json"])
    best = json.loads(exhaustive.output[exhaustive.output.index("{"):
                                        exhaustive.output.rindex("}") + 1])
    # 30 runs of 720 configurations: benchmarks/strategies.py puts the default search's
    # median at 0.938 of the best bandwidth at this scale (the model strategy's too).
    assert result["best"]["time_s"] <= best["best"]["time_s"] * 1.10
    assert result["speedup"] > 10
    tuned = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert tuned["provenance"] == "simulated" and tuned["backend"] == "sim"
    records = Store(tmp_path / "hopper-store.jsonl").records()
    assert records and all(r["provenance"] == "simulated" for r in records)
