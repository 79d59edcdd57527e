"""Config validation: every bad input names the key and the rule."""

from pathlib import Path

import pytest

from iotune.config import default_config_path, load_config, parse_config
from iotune.errors import ConfigError
from iotune.execution.scratch import check_scratch


def test_valid_config_loads_with_canonical_values(write_config, tmp_path):
    path = write_config({"space": {"cb_buffer_size": ["1MiB", "4MiB"], "cb_nodes": [1, 2]}})
    config = load_config(path)
    assert config.space.as_dict()["cb_buffer_size"] == (2**20, 4 * 2**20)
    assert config.kernel.args["particles_per_rank"] == 4096
    assert config.kernel.args["fsync"] is True  # default filled in
    assert config.store == tmp_path / "store.jsonl"  # relative to the config file


def _error(text: str) -> str:
    with pytest.raises(ConfigError) as info:
        parse_config(text, Path("/cfg/iotune.yaml"))
    return str(info.value)


def test_malformed_yaml_names_line():
    message = _error("system:\n  name: x\n  scratch: [unclosed\nkernel: {name: vpic}\n")
    assert message.startswith("/cfg/iotune.yaml: malformed YAML at line 4")


def test_unknown_top_level_key():
    assert _error("sytem: {}\n").startswith("sytem: unknown key; known keys: schema_version")


def test_unknown_setting_in_space():
    assert _error("space:\n  stripe_colour: [1]\n").startswith(
        "space.stripe_colour: unknown setting 'stripe_colour'")


def test_wrong_type_value():
    message = _error("space:\n  cb_nodes: [two]\n")
    assert message == "space.cb_nodes: 'two' is not a positive integer"


def test_stripe_count_above_ost_count():
    text = ("system: {ost_count: 8}\nspace: {stripe_count: [4, 16]}\n"
            "train: {scales: [{cores: 4}]}\n")
    assert _error(text) == "space.stripe_count: 16 exceeds the system's OST count (8)"


def test_unknown_kernel_lists_known():
    assert _error("kernel: {name: flash}\n") == (
        "kernel.name: unknown kernel 'flash'; known kernels: ior, vpic (your own "
        "program: kernel: {command: ...} or --command)")


def test_unknown_launcher_lists_known():
    assert _error("system: {launcher: qsub}\n") == (
        "system.launcher: unknown launcher 'qsub'; known launchers: mpiexec, srun, template")


def test_unknown_kernel_arg():
    assert _error("kernel: {name: vpic, args: {particles: 5}}\n").startswith(
        "kernel.args.particles: unknown argument of kernel 'vpic'")


def test_lhs_needs_runs():
    assert _error("train: {scales: [{cores: 2, design: lhs}]}\n") == (
        "train.scales[0].runs: a Latin hypercube design needs its number of runs")


def test_unset_environment_variable_in_scratch(monkeypatch):
    monkeypatch.delenv("IOTUNE_NO_SUCH_VAR", raising=False)
    config = parse_config("system:\n  scratch: ${IOTUNE_NO_SUCH_VAR}/x\n", Path("/cfg/i.yaml"))
    with pytest.raises(ConfigError, match="names an environment variable that is not set"):
        check_scratch(config.system.scratch, "system.scratch")


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_default_config_lookup_order(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("IOTUNE_CONFIG", raising=False)
    assert default_config_path(tmp_path) is None
    user = tmp_path / "xdg" / "iotune" / "config.yaml"
    user.parent.mkdir(parents=True)
    user.write_text("{}")
    assert default_config_path(tmp_path) == user
    monkeypatch.setenv("IOTUNE_CONFIG", str(tmp_path / "env.yaml"))
    assert default_config_path(tmp_path) == tmp_path / "env.yaml"
    (tmp_path / "iotune.yaml").write_text("{}")
    assert default_config_path(tmp_path) == tmp_path / "iotune.yaml"


@pytest.mark.parametrize("name", ["local.yaml", "hopper-vpic.yaml"])
def test_shipped_configs_load(name, monkeypatch):
    monkeypatch.setenv("SCRATCH", "/scratch")
    repo = Path(__file__).resolve().parents[2]
    config = load_config(repo / "configs" / name)
    assert config.space.names


def test_with_overrides_replaces_only_what_is_given(write_config, tmp_path):
    config = load_config(write_config())
    assert config.with_overrides() is config
    changed = config.with_overrides(backend="sim", noise=0.5, launcher="srun", kernel="ior",
                                    store=Path("other.jsonl"))
    assert (changed.backend.name, changed.backend.noise) == ("sim", 0.5)
    assert changed.backend.sim_system == config.backend.sim_system
    assert changed.system.launcher == "srun" and changed.system.scratch == config.system.scratch
    assert changed.kernel.name == "ior" and changed.kernel.args["api"] == "mpiio"
    assert changed.store == Path("other.jsonl").resolve()
    assert changed.space == config.space
    # naming the config's own kernel keeps its arguments
    assert config.with_overrides(kernel="vpic").kernel == config.kernel


@pytest.mark.parametrize(
    ("overrides", "message"),
    [({"noise": -1.0}, "--noise: -1 is not a number >= 0"),
     ({"kernel": "flash"}, "--kernel: unknown kernel 'flash'; known kernels: ior, vpic "
      "(your own program: kernel: {command: ...} or --command)")],
)
def test_with_overrides_checks_values(write_config, overrides, message):
    with pytest.raises(ConfigError) as info:
        load_config(write_config()).with_overrides(**overrides)
    assert str(info.value) == message


@pytest.mark.parametrize(("raw", "option", "message"), [
    ({}, "cloud", "--backend: 'cloud' is not one of mpi, sim, replay"),
    ({"backend": "cloud"}, None, "backend.name: 'cloud' is not one of mpi, sim, replay")])
def test_backend_names_are_the_registered_ones(write_config, raw, option, message):
    from iotune.backends import make_backend
    from iotune.cli.common import with_backend

    config = load_config(write_config(raw))
    with pytest.raises(ConfigError) as info:
        with_backend(config, option, None, None)
    assert str(info.value) == message
    if option is None:
        with pytest.raises(ConfigError) as made:
            make_backend(config)
        assert str(made.value) == message


def test_strategy_options_live_with_the_strategies():
    from iotune.strategies.base import make_strategy, resolve_options

    config = parse_config("tune:\n  seed: 4\n  top_k: 8\n"
                          "  options:\n    genetic: {population: 6}\n")
    genetic = make_strategy("genetic", **resolve_options(config.tune, "genetic"))
    assert genetic.values["population"] == 6 and genetic.values["seed"] == 4
    assert genetic.values["generations"] == 15  # the strategy's own default
    model = make_strategy("model", **resolve_options(config.tune, "model", {"kappa": 1.0}))
    assert model.values["top_k"] == 8 and model.values["kappa"] == 1.0  # shorthand, --option
    assert model.default_budget() == 8 + 10  # top_k + refit_rounds x top_k_refit
    assert "seed" not in resolve_options(config.tune, "exhaustive")  # it has no seed


@pytest.mark.parametrize("text, message", [
    ("tune:\n  options:\n    annealing: {steps: 3}\n", "tune.options.annealing: unknown strategy"),
    ("tune:\n  options:\n    genetic: {popsize: 3}\n", "tune.options.genetic: strategy genetic: "
                                                       "unknown option(s) ['popsize']"),
    ("tune:\n  options:\n    genetic: 3\n", "tune.options.genetic: must be a mapping"),
])
def test_bad_strategy_options_are_named(text, message):
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert message in str(info.value)


def test_mpi_io_romio_makes_every_run_exclude_ompio_unless_env_says_otherwise():
    config = parse_config("system: {mpi_io: romio, env: {A: '1'}}", Path("/c/iotune.yaml"))
    assert config.system.run_environment() == {"OMPI_MCA_io": "^ompio", "A": "1"}
    assert parse_config("{}", Path("/c/iotune.yaml")).system.run_environment() == {}
    own = parse_config("system: {mpi_io: romio, env: {OMPI_MCA_io: romio321}}",
                       Path("/c/iotune.yaml"))
    assert own.system.run_environment() == {"OMPI_MCA_io": "romio321"}
    with pytest.raises(ConfigError, match=r"system.mpi_io: 'ompi' is not one of default, romio"):
        parse_config("system: {mpi_io: ompi}", Path("/c/iotune.yaml"))
