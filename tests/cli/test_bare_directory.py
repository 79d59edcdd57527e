"""The headline commands in a directory without any config: built-in defaults, and the
paper's simulated search when --backend sim names a system."""

import dataclasses
import json
import os
import tempfile
from pathlib import Path

import yaml
from click.testing import CliRunner

from iotune.cli.common import with_backend
from iotune.cli.main import cli
from iotune.config import load_config
from iotune.defaults import builtin_config, defaults_for_backend
from iotune.sim import paper_space
from iotune.store import Store
from iotune.strategies.base import make_strategy, resolve_options

REPO = Path(__file__).resolve().parents[2]



def invoke(*args):
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def test_run_sim_in_a_bare_directory(bare):
    result = invoke("run", "--backend", "sim", "--cores", "4", "--format", "json")
    assert result.exit_code == 0, result.output
    assert "using built-in local defaults" in result.stderr
    assert "simulated hopper without a config" in result.stderr
    record = json.loads(result.stdout)
    assert record["provenance"] == "simulated" and record["backend"] == "sim"
    assert record["params"]["particles_per_rank"] == 8 * 2**20  # 256 MiB per rank
    assert [r["id"] for r in Store(bare / "iotune-store.jsonl").records()] == [record["id"]]


def test_tune_sim_hopper_in_a_bare_directory(bare):
    result = invoke("tune", "--backend", "sim", "--system", "hopper", "--kernel", "vpic",
                    "--cores", "8192", "--strategy", "random", "--budget", "10",
                    "-o", "tuned.yaml", "--no-color")
    assert result.exit_code == 0, result.output
    tuned = yaml.safe_load((bare / "tuned.yaml").read_text())
    assert tuned["provenance"] == "simulated" and tuned["backend"] == "sim"
    assert tuned["system"] == "hopper" and tuned["cores"] == 8192 and tuned["nodes"] == 342
    assert tuned["kernel_args"]["particles_per_rank"] == 8 * 2**20
    assert set(tuned["settings"]) <= {"stripe_count", "stripe_size", "cb_nodes"}
    assert (bare / "iotune-store.jsonl").is_file()


def test_train_sim_dry_run_in_a_bare_directory_plans_the_paper_scales(bare):
    result = invoke("train", "--backend", "sim", "--dry-run")
    assert result.exit_code == 0, result.output
    scales = [line.split()[0] for line in result.stdout.splitlines()[2:5]]
    assert scales == ["128", "256", "512"]
    assert "systematic" in result.stdout


def test_builtin_config_is_the_init_template_for_this_machine(bare):
    config = builtin_config()
    assert config.path is None
    assert config.system.scratch == Path(tempfile.gettempdir())
    assert config.system.cores_per_node == (os.cpu_count() or 1)
    assert config.store == bare / "iotune-store.jsonl"
    assert [s.cores for s in config.train.scales] == [2, 4]
    space = config.space.as_dict()
    assert space["cb_config_list"] == (f"*:{config.system.aggregators_per_node}",)
    assert space["cb_nodes"] == (1, 2) and space["romio_cb_write"] == ("enable", "disable")
    assert config.space.configurations(4, config.system.limits)
    assert defaults_for_backend(config, explicit_config=False) is config  # backend mpi


def test_sim_defaults_match_configs_hopper_vpic(bare, monkeypatch):
    monkeypatch.setenv("SCRATCH", str(bare))
    reference = load_config(REPO / "configs" / "hopper-vpic.yaml")
    config = with_backend(builtin_config(), "sim", "hopper", None, cores=8192)
    assert config.system.limits == reference.system.limits
    assert config.system.name == "hopper"
    assert config.kernel == reference.kernel
    assert [s.cores for s in config.train.scales] == [s.cores for s in reference.train.scales]
    # The same tune section, up to writing the model strategy's defaults out.
    assert dataclasses.replace(config.tune, options={}) == dataclasses.replace(
        reference.tune, options={})
    assert make_strategy("model", **resolve_options(config.tune, "model")).values == \
        make_strategy("model", **resolve_options(reference.tune, "model")).values
    assert config.store == bare / "iotune-store.jsonl"
    assert config.backend.name == "sim" and config.backend.sim_system == "hopper"
    # At the target scale the space is exactly the paper's grid.
    grid = {tuple(row) for row in paper_space(8192).itertuples(index=False)}
    space = {(c["stripe_count"], c["stripe_size"], c["cb_nodes"])
             for c in config.space.configurations(8192, config.system.limits)}
    assert space == grid and len(space) == 900


def test_sim_defaults_without_a_target_scale_cover_the_training_scales(bare):
    config = with_backend(builtin_config(), "sim", None, None)
    for scale in config.train.scales:
        grid = paper_space(scale.cores)
        allowed = config.space.configurations(scale.cores, config.system.limits)
        assert set(grid["cb_nodes"]) <= {c["cb_nodes"] for c in allowed}
        assert max(c["cb_nodes"] for c in allowed) == grid["cb_nodes"].max()


def test_sim_defaults_follow_the_named_system(bare):
    config = with_backend(builtin_config(), "sim", "perlmutter", None, cores=4096)
    assert (config.system.cores_per_node, config.system.ost_count) == (128, 298)
    assert config.system.aggregators_per_node == 1
    assert len(config.space.configurations(4096, config.system.limits)) == len(
        paper_space(4096, cores_per_node=128, ost_count=298))


def test_a_user_config_is_respected_not_replaced(bare, write_config):
    write_config(name="work/iotune.yaml")  # testbox, 4096 particles, cb_nodes x romio_cb_write
    run = invoke("run", "--backend", "sim", "--cores", "4", "--format", "json")
    assert run.exit_code == 0, run.output
    assert "built-in" not in run.stderr and "without a config" not in run.stderr
    assert json.loads(run.stdout)["params"]["particles_per_rank"] == 4096

    tune = invoke("tune", "--backend", "sim", "--system", "hopper", "--cores", "8",
                  "--strategy", "random", "--budget", "4", "-o", "tuned.yaml", "--no-color")
    assert tune.exit_code == 0, tune.output
    tuned = yaml.safe_load((bare / "tuned.yaml").read_text())
    assert tuned["provenance"] == "simulated" and tuned["system"] == "testbox"
    assert tuned["kernel_args"]["particles_per_rank"] == 4096
    assert set(tuned["settings"]) <= {"cb_nodes", "romio_cb_write"}
    assert (bare / "store.jsonl").is_file() and not (bare / "iotune-store.jsonl").exists()

    config = load_config(bare / "iotune.yaml")
    simulated = with_backend(config, "sim", "hopper", None, cores=8192)
    assert simulated.backend.name == "sim"
    assert (simulated.system, simulated.kernel, simulated.space, simulated.train,
            simulated.store) == (config.system, config.kernel, config.space, config.train,
                                 config.store)


def test_a_user_config_without_a_space_gets_only_the_paper_space(bare, write_config,
                                                                 capsys):
    path = write_config({"space": None})
    config = with_backend(load_config(path), "sim", "hopper", None, cores=96)
    assert "no space; searching the paper's space on hopper" in capsys.readouterr().err
    assert config.system.name == "testbox" and config.kernel.args["particles_per_rank"] == 4096
    assert config.space.names == ["stripe_count", "stripe_size", "cb_nodes"]
    # the config's limits (4 cores per node, 4 aggregators per node) decide the nodes
    assert config.space.as_dict()["cb_nodes"] == (1, 2, 4, 8, 16, 24)
