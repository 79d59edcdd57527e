"""Configuration columns: defaults, broadcasting, ignored HDF5 settings, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from iotune.errors import ConfigError
from iotune.kernel_specs import get_kernel
from iotune.kernel_specs.vpic import vpic_pattern
from iotune.sim import IGNORED_HDF5_COLUMNS, Pattern, load_system, simulate_times
from iotune.sim.configs import AUTOMATIC, DISABLE, ENABLE, ConfigArrays, resolve_configs

HOPPER = load_system("hopper")
PATTERN = vpic_pattern(512)
MIB = 2**20


def resolve(configs: Any) -> ConfigArrays:
    return resolve_configs(HOPPER, PATTERN, configs)


def test_missing_columns_and_nan_are_defaults() -> None:
    frame = pd.DataFrame({"stripe_count": [np.nan, 8], "cb_nodes": [None, 4],
                          "romio_cb_write": [None, "Disable"]})
    cfg = resolve(frame)
    assert list(cfg.stripe_count) == [2, 8]
    assert list(cfg.stripe_size) == [MIB, MIB]
    assert list(cfg.cb_nodes) == [2, 4]  # Hopper's rule: one aggregator per stripe
    assert list(cfg.cb_buffer_size) == [16 * MIB] * 2
    assert list(cfg.cb_write) == [ENABLE, DISABLE]
    assert list(cfg.collective) == [True, True]


def test_default_cb_nodes_follows_the_resolved_stripe_count() -> None:
    assert list(resolve({"stripe_count": [16, -1, 0, 1000]}).cb_nodes) == [16, 156, 2, 156]


def test_no_configs_is_one_default_configuration() -> None:
    cfg = resolve(None)
    assert cfg.shape == ()
    result = simulate_times(HOPPER, PATTERN, None, noise=0)
    assert result.time_s.shape == () and result.two_phase


def test_mapping_columns_broadcast() -> None:
    cfg = resolve({"stripe_count": np.array([1, 2, 4])[:, None], "cb_nodes": [1, 2, 4, 8],
                   "romio_cb_write": "automatic"})
    assert cfg.shape == (3, 4)
    assert cfg.cb_write.shape == (3, 4) and int(cfg.cb_write[0, 0]) == AUTOMATIC
    with pytest.raises(ConfigError, match=r"^configs: columns do not broadcast"):
        resolve({"stripe_count": [1, 2, 3], "cb_nodes": [1, 2]})


def test_byte_sizes_as_strings() -> None:
    cfg = resolve(pd.DataFrame({"stripe_size": ["4MiB", 2 * MIB, None],
                                "cb_buffer_size": ["1MiB", "16M", "64KiB"]}))
    assert list(cfg.stripe_size) == [4 * MIB, 2 * MIB, MIB]
    assert list(cfg.cb_buffer_size) == [MIB, 16 * MIB, 64 * 1024]


def test_cb_config_list_caps_aggregators_per_node() -> None:
    configs = {"cb_nodes": 88, "cb_config_list": ["*:1", "*:2", "*:*"]}
    from iotune.sim import model_breakdown

    detail = model_breakdown(HOPPER, PATTERN, configs)
    assert list(detail.aggregators) == [22, 44, 88]


def test_hdf5_settings_are_accepted_without_effect() -> None:
    assert "alignment" in IGNORED_HDF5_COLUMNS
    plain = simulate_times(HOPPER, PATTERN, {"stripe_count": [4, 64]}, noise=0)
    tuned = simulate_times(HOPPER, PATTERN, {"stripe_count": [4, 64], "alignment": MIB,
                                              "sieve_buf_size": "1MiB"}, noise=0)
    assert np.array_equal(plain.time_s, tuned.time_s)


def test_ignored_hdf5_settings_are_still_checked() -> None:
    with pytest.raises(ConfigError, match=r"^configs\.alignment \(row 0\): 0 is not a positive "):
        resolve({"alignment": [0]})


def test_unknown_column_is_named() -> None:
    with pytest.raises(ConfigError, match=r"^configs\.striping_factor: not modelled by the "
                                          r"simulated backend; modelled columns: stripe_count"):
        resolve({"striping_factor": [4]})


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("stripe_count", 2.5, "configs.stripe_count (row 1): 2.5 is not a positive integer"),
        ("stripe_count", -3, "configs.stripe_count (row 1): -3 is not a positive integer"),
        ("stripe_size", 1000, "configs.stripe_size (row 1): 1000 is not a multiple of 64 KiB"),
        ("stripe_size", "big", "configs.stripe_size (row 1): 'big' is not a byte size"),
        ("cb_nodes", 0, "configs.cb_nodes (row 1): 0 is not a positive integer"),
        ("cb_buffer_size", -MIB, "configs.cb_buffer_size (row 1): -1048576 is not a positive"),
        ("romio_cb_write", "sometimes", "configs.romio_cb_write (row 1): 'sometimes' is not one of "
                                        "enable, disable, automatic"),
        ("romio_ds_write", 1, "configs.romio_ds_write (row 1): 1 is not one of"),
        ("collective", "perhaps", "configs.collective (row 1): 'perhaps' is not a boolean"),
        ("cb_config_list", "nid001:2",
         "configs.cb_config_list (row 1): 'nid001:2' is not of the form"),
        ("stripe_count", float("inf"),
         "configs.stripe_count (row 1): inf is not a positive integer"),
    ],
)
def test_bad_values_name_the_column(column: str, value: object, message: str) -> None:
    good = {"stripe_count": 4, "stripe_size": MIB, "cb_nodes": 4, "cb_buffer_size": MIB,
            "romio_cb_write": "enable", "romio_ds_write": "disable", "collective": True,
            "cb_config_list": "*:1"}
    frame = pd.DataFrame({column: [good[column], value]})
    with pytest.raises(ConfigError) as info:
        resolve(frame)
    assert str(info.value).startswith(message), str(info.value)


def test_configs_must_be_a_table() -> None:
    with pytest.raises(ConfigError, match=r"^configs: expected a pandas DataFrame"):
        resolve([1, 2, 3])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"kernel": "hacc", "ranks": 4, "bytes_per_rank": MIB},
         "pattern.kernel: unknown kernel 'hacc'"),
        ({"kernel": "vpic", "ranks": 0, "bytes_per_rank": MIB}, "pattern.ranks: 0 is not"),
        ({"kernel": "ior", "ranks": 4, "bytes_per_rank": MIB, "nodes": 8},
         "pattern.nodes: 8 exceeds ranks (4)"),
        ({"kernel": "ior", "ranks": 4, "bytes_per_rank": MIB, "transfer_size": 3000},
         "pattern.transfer_size: 3000 does not divide bytes_per_rank"),
        ({"kernel": "ior", "ranks": 4, "bytes_per_rank": MIB, "api": "netcdf"},
         "pattern.api: 'netcdf' is not one of posix, mpiio, hdf5"),
        ({"kernel": "vpic", "ranks": 4, "bytes_per_rank": MIB, "transfer_size": 4096},
         "pattern.transfer_size: only the ior kernel"),
        ({"kernel": "vpic", "ranks": 4, "bytes_per_rank": 100}, "pattern.variables: 8 does not"),
    ],
)
def test_pattern_validation(kwargs: dict[str, Any], message: str) -> None:
    fields = dict(kwargs)
    with pytest.raises(ConfigError) as info:
        get_kernel(fields.pop("kernel"), "pattern.kernel").pattern(**fields)
    assert str(info.value).startswith(message), str(info.value)


def test_a_pattern_checks_its_numbers_without_a_kernel() -> None:
    with pytest.raises(ConfigError, match=r"^pattern.api: None is not one of"):
        Pattern(kernel="mine", ranks=4, bytes_per_rank=MIB)
    mine = Pattern(kernel="mine", ranks=4, bytes_per_rank=MIB, api="mpiio", collective=True)
    assert (mine.variables, mine.calls, mine.uses_mpiio) == (1, 1, True)


def test_pattern_defaults() -> None:
    vpic = vpic_pattern(128)
    assert (vpic.bytes_per_rank, vpic.calls, vpic.api, vpic.collective) == (
        256 * MIB, 8, "hdf5", True)
    assert vpic.total_bytes == 32 * 2**30 and vpic.nodes_on(24) == 6
    ior = get_kernel("ior").pattern(8, MIB)
    assert (ior.api, ior.collective, ior.transfer_size, ior.calls) == (
        "posix", False, 256 * 1024, 4)
