"""Presets: the shipped ones load; every validation error names its key and rule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from iotune.errors import ConfigError
from iotune.sim import SimSystem, list_systems, load_system
from iotune.sim.system import system_from_mapping

PRESET_DIR = Path(__file__).resolve().parents[2] / "iotune" / "sim" / "systems"


def hopper_data() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((PRESET_DIR / "hopper.yaml").read_text())
    return data


def test_shipped_presets() -> None:
    assert {"hopper", "perlmutter"} <= set(list_systems())
    for name in list_systems():
        system = load_system(name)
        assert isinstance(system, SimSystem) and system.name == name


def test_hopper_has_the_papers_figures() -> None:
    hopper = load_system("hopper")
    assert (hopper.cores_per_node, hopper.ost_count) == (24, 156)
    assert 33000 < hopper.peak_bandwidth_mib_s < 34000  # ~35 GB/s
    assert (hopper.defaults.stripe_count, hopper.defaults.stripe_size) == (2, 2**20)
    assert hopper.nodes_for(2048) == 86 and hopper.nodes_for(8192) == 342


def test_system_is_frozen() -> None:
    with pytest.raises(AttributeError):
        load_system("hopper").ost_count = 1  # type: ignore[misc]


def test_load_by_path(tmp_path: Path) -> None:
    data = hopper_data()
    data["name"] = "mybox"
    path = tmp_path / "mybox.yaml"
    path.write_text(yaml.safe_dump(data))
    assert load_system(path).name == "mybox"
    assert load_system(str(path)).name == "mybox"


def test_unknown_system_lists_known() -> None:
    with pytest.raises(ConfigError, match=r"^system: unknown system 'nosuch'; known systems: "
                                          r".*hopper"):
        load_system("nosuch")


def test_missing_file() -> None:
    with pytest.raises(ConfigError, match=r"^system: no such file: .*absent.yaml"):
        load_system("absent.yaml")


def test_invalid_yaml(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: [unclosed\n")
    with pytest.raises(ConfigError, match=r"^system: .*not valid YAML"):
        load_system(path)


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        data = data[key]
    if value is _DELETE:
        del data[last]
    else:
        data[last] = value


_DELETE = object()


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("ost_count", 0, "system.ost_count: 0 is not a positive integer"),
        ("ost_count", 2.5, "system.ost_count: 2.5 is not a positive integer"),
        ("cores_per_node", _DELETE, "system.cores_per_node: missing (required)"),
        ("ost_bandwidth_mib_s", -1, "system.ost_bandwidth_mib_s: -1 is not a positive number"),
        ("peak_bandwidth_mib_s", "fast", "system.peak_bandwidth_mib_s: 'fast' is not a finite"),
        ("lock_overhead_s", -0.1, "system.lock_overhead_s: -0.1 is negative"),
        ("rpc_size", "1 furlong", "system.rpc_size: '1 furlong' is not a byte size"),
        ("name", "", "system.name: '' is not a non-empty string"),
        ("colour", "blue", "system.colour: unknown key; known keys: "),
        ("client_bandwidth_mib_s", 9000, "system.client_bandwidth_mib_s: 9000 exceeds "
                                         "injection_bandwidth_mib_s"),
        ("fabric_exponent", 1.5, "system.fabric_exponent: 1.5 exceeds 1"),
        ("defaults.stripe_count", 200, "system.defaults.stripe_count: 200 exceeds ost_count"),
        ("defaults.stripe_size", 1000, "system.defaults.stripe_size: 1000 is not a multiple "
                                       "of 64 KiB"),
        ("defaults.cb_nodes", "many", "system.defaults.cb_nodes: 'many' is not one of "
                                      "stripe_count, nodes or a positive integer"),
        ("defaults.romio_cb_write", "yes", "system.defaults.romio_cb_write: 'yes' is not one of "
                                           "enable, disable, automatic"),
        ("defaults.cb_buffer_size", _DELETE, "system.defaults.cb_buffer_size: missing"),
        ("noise.p_busy", 1.5, "system.noise.p_busy: 1.5 is not a probability in [0, 1]"),
        ("noise.busy_mean", 0.5, "system.noise.busy_mean: 0.5 is below 1"),
        ("noise.idle_sigma", -1, "system.noise.idle_sigma: -1 is negative"),
        ("noise.extra", 1, "system.noise.extra: unknown key"),
        ("defaults", [1, 2], "system.defaults: expected a mapping, got list"),
    ],
)
def test_validation_names_the_key(key: str, value: Any, message: str) -> None:
    data = hopper_data()
    _set(data, key, value)
    with pytest.raises(ConfigError) as info:
        system_from_mapping(data)
    assert str(info.value).startswith(message), str(info.value)


def test_top_level_must_be_a_mapping() -> None:
    with pytest.raises(ConfigError, match=r"^system: expected a mapping, got list"):
        system_from_mapping([1, 2])


def test_cb_nodes_rules() -> None:
    defaults = load_system("hopper").defaults
    assert defaults.cb_nodes_for(stripe_count=8, nodes=40) == 8
    data = hopper_data()
    data["defaults"]["cb_nodes"] = "nodes"
    assert system_from_mapping(data).defaults.cb_nodes_for(8, 40) == 40
    data["defaults"]["cb_nodes"] = 12
    assert system_from_mapping(data).defaults.cb_nodes_for(8, 40) == 12
