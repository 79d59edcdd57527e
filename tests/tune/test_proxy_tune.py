"""A proxy from a real Darshan log is trained and tuned as the kernel (simulated backend)."""

import shutil
from pathlib import Path

import darshan.examples
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli

REPO = Path(__file__).resolve().parents[2]
LOG = Path(darshan.examples.__file__).parent / "example_logs" / "ior_hdf5_example.darshan"


def test_tune_a_proxy_file(tmp_path, monkeypatch):
    monkeypatch.setenv("SCRATCH", str(tmp_path))
    config = tmp_path / "hopper.yaml"
    shutil.copy(REPO / "configs" / "hopper-vpic.yaml", config)
    runner = CliRunner()
    proxy = tmp_path / "proxy.yaml"
    made = runner.invoke(cli, ["proxy", str(LOG), "-o", str(proxy)])
    assert made.exit_code == 0, made.output
    doc = yaml.safe_load(proxy.read_text())
    assert doc["kernel"] == "ior"

    trained = runner.invoke(cli, ["train", "-c", str(config), "--kernel", str(proxy),
                                  "--backend", "sim"])
    assert trained.exit_code == 0, trained.output
    # Budget 10 (the default is 30): what is checked is the tuned file of the proxy, which
    # any budget writes.
    out = runner.invoke(cli, ["tune", "-c", str(config), "--kernel", str(proxy), "--backend",
                              "sim", "--cores", "512", "--budget", "10", "-o",
                              str(tmp_path / "tuned.yaml")])
    assert out.exit_code == 0, out.output
    tuned = yaml.safe_load((tmp_path / "tuned.yaml").read_text())
    assert tuned["kernel"] == "ior"
    assert tuned["kernel_args"]["transfer_size"] == doc["args"]["transfer_size"]
    assert tuned["speedup"] >= 1.0
