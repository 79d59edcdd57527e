"""One settings catalogue: a value is read, checked and passed the same way on every path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from iotune.backends import RunRequest
from iotune.backends.sim import SimBackend
from iotune.cli.main import cli
from iotune.config import build_config, load_config
from iotune.errors import ConfigError
from iotune.settings.catalogue import SETTINGS, SettingValueError, parse_hint, setting_argv

REPO = Path(__file__).resolve().parents[2]
STRIPE_RULE = "100000 is not a multiple of 64 KiB (65536 bytes), which Lustre requires"


def test_an_invalid_setting_is_rejected_with_the_same_words_everywhere(write_config, tmp_path):
    with pytest.raises(SettingValueError) as rule:
        SETTINGS["stripe_size"].parse(100000)
    assert str(rule.value) == STRIPE_RULE

    # 1. config YAML
    with pytest.raises(ConfigError) as config_error:
        load_config(write_config({"space": {"stripe_size": [1048576, 100000]}}, "bad.yaml"))
    assert str(config_error.value) == f"space.stripe_size: {STRIPE_RULE}"

    # 2. iotune run --set: rejected before anything runs, so no failed record is written
    path = write_config()
    result = CliRunner().invoke(cli, ["run", "-c", str(path), "--cores", "2",
                                      "--set", "stripe_size=100000"])
    assert result.exit_code == 2
    assert f"iotune: error: --set.stripe_size: {STRIPE_RULE}" in result.output
    assert not (tmp_path / "store.jsonl").exists()

    # 3. the kernel's own argument parser (ends before MPI starts)
    scratch = tmp_path / "scratch"
    kernel = subprocess.run(
        [sys.executable, str(REPO / "kernels" / "vpicio.py"), "--scratch", str(scratch),
         "--stripe-size", "100000"], capture_output=True, text=True, timeout=60, check=False)
    assert kernel.returncode == 2
    assert kernel.stderr.strip() == (
        f"vpicio.py: error: argument --stripe-size: {STRIPE_RULE} (see --help)")

    # 4. the simulated backend, given the value directly
    config = build_config({"backend": "sim", "system": {"scratch": str(scratch)}}, tmp_path)
    request = RunRequest("vpic", 48, {"stripe_size": 100000}, config.kernel.args)
    with pytest.raises(ConfigError) as sim_error:
        SimBackend(config).measure(request)
    assert str(sim_error.value) == f"configs.stripe_size (row 0): {STRIPE_RULE}"


@pytest.mark.parametrize(
    ("name", "written"),
    [("stripe_count", "8"), ("stripe_size", "4MiB"), ("cb_nodes", 2),
     ("cb_buffer_size", "16M"), ("romio_cb_write", "Disable"), ("romio_ds_write", "automatic"),
     ("cb_config_list", "*:2"), ("alignment", "1MiB"), ("alignment_threshold", 0),
     ("sieve_buf_size", 65536), ("meta_block_size", "0"), ("coll_metadata", "yes"),
     ("collective", False)],
)
def test_kernel_arguments_parse_back_to_the_canonical_value(name, written):
    setting = SETTINGS[name]
    canonical = setting.parse(written)
    flag, text = setting_argv({name: canonical})
    assert flag == setting.flag
    assert setting.parse(text) == canonical


def test_byte_settings_with_zero_as_a_value():
    assert SETTINGS["meta_block_size"].parse(0) == 0
    with pytest.raises(SettingValueError, match=r"^0 is not a positive byte size$"):
        SETTINGS["sieve_buf_size"].parse("0")
    with pytest.raises(SettingValueError, match=r"^-1 is not a byte size >= 0$"):
        SETTINGS["alignment_threshold"].parse(-1)


def test_free_hints():
    assert parse_hint("romio_no_indep_rw", True) == ("romio_no_indep_rw", "true")
    with pytest.raises(SettingValueError, match=r"hint key 'a b' has characters a setting "
                                                 r"cannot carry \(' '\)"):
        parse_hint("a b", "1")
    with pytest.raises(SettingValueError, match="hint key is empty"):
        parse_hint("", "1")
    with pytest.raises(SettingValueError, match=r"value 'a\$\(b\)' has characters"):
        parse_hint("x", "a$(b)")
    with pytest.raises(SettingValueError, match="hint 'x' has an empty value"):
        parse_hint("x", " ")


def test_a_setting_without_the_one_it_needs(write_config):
    with pytest.raises(ConfigError) as info:
        load_config(write_config({"space": {"alignment_threshold": [1024]}}))
    assert str(info.value) == "space.alignment_threshold: needs alignment (H5Pset_alignment)"


def test_the_catalogue_and_the_scratch_rule_load_nothing_heavy():
    code = (
        "import sys\n"
        "import iotune.settings.catalogue, iotune.execution.scratch\n"
        "heavy = ('numpy', 'pandas', 'yaml', 'click', 'mpi4py', 'h5py')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True)
    assert out.stdout.strip() == "[]"
