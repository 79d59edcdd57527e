import pytest

from iotune.errors import ConfigError
from iotune.settings.units import format_bytes, parse_bytes, parse_duration
from iotune.settings.values import (
    config_key,
    mpiio_hints,
    normalise_setting,
    normalise_settings,
    setting_argv,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [("4MiB", 4 * 2**20), ("4M", 4 * 2**20), ("1k", 1024), ("2GB", 2 * 10**9), (512, 512),
     ("1.5MiB", 3 * 2**19)],
)
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("bad", ["4 parsecs", "-1", True, "1.3", [1]])
def test_parse_bytes_rejects(bad):
    with pytest.raises(ValueError):
        parse_bytes(bad)


def test_format_bytes_roundtrip():
    assert format_bytes(4 * 2**20) == "4MiB"
    assert format_bytes(1000) == "1000"
    assert parse_bytes(format_bytes(96 * 2**20)) == 96 * 2**20


def test_parse_duration():
    assert parse_duration("5m") == 300
    assert parse_duration(12) == 12
    with pytest.raises(ValueError):
        parse_duration("soon")


def test_normalise_settings_canonical_values():
    out = normalise_settings({"stripe_size": "4MiB", "cb_nodes": "2", "romio_cb_write": "Disable",
                              "collective": "yes", "hint.romio_no_indep_rw": True})
    assert out == {"stripe_size": 4 * 2**20, "cb_nodes": 2, "romio_cb_write": "disable",
                   "collective": True, "hint.romio_no_indep_rw": "true"}


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [("stripe_count", 0, "space.stripe_count: 0 is not a positive integer"),
     ("stripe_count", "four", "space.stripe_count: 'four' is not a positive integer"),
     ("romio_cb_write", "maybe", "space.romio_cb_write: 'maybe' is not one of enable, disable"),
     ("cb_buffer_size", "lots", "space.cb_buffer_size: 'lots' is not a byte size"),
     ("stripe_colour", 3, "space.stripe_colour: unknown setting 'stripe_colour'; known settings:")],
)
def test_normalise_setting_messages(name, value, message):
    with pytest.raises(ConfigError) as info:
        normalise_setting(name, value, f"space.{name}")
    assert str(info.value).startswith(message)


def test_setting_argv_and_hints():
    settings = {"stripe_count": 4, "cb_buffer_size": 1048576, "collective": False,
                "hint.romio_no_indep_rw": "true"}
    assert setting_argv(settings) == ["--stripe-count", "4", "--cb-buffer-size", "1048576",
                                      "--collective", "no", "--hint", "romio_no_indep_rw=true"]
    assert mpiio_hints(settings) == {"striping_factor": "4", "cb_buffer_size": "1048576",
                                     "romio_no_indep_rw": "true"}


def test_config_key_is_order_independent_and_value_sensitive():
    a = config_key("vpic", 4, {"cb_nodes": 2, "stripe_count": 4}, {"timesteps": 1})
    b = config_key("vpic", 4, {"stripe_count": 4, "cb_nodes": 2}, {"timesteps": 1})
    c = config_key("vpic", 4, {"stripe_count": 8, "cb_nodes": 2}, {"timesteps": 1})
    assert a == b != c
    assert len(a) == 16
