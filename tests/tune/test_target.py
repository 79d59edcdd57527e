"""``--target write|read|total``: real tunes of the read phase, the model on the target's
time, and one-line errors for what cannot be tuned."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.config import parse_config
from iotune.errors import ConfigError, DataError
from iotune.model.from_measurements import fit_for_settings
from iotune.store import Store
from iotune.store.records import Measurement
from iotune.tune.target import with_target

TINY = {"kernel": {"name": "vpic", "args": {"particles_per_rank": 2048, "timesteps": 1}},
        "space": {"cb_nodes": [1, 2], "romio_cb_write": ["disable"],
                  "romio_cb_read": ["enable", "disable"]}}


def iotune(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    out = subprocess.run([sys.executable, "-m", "iotune", *args], cwd=cwd, env=env,
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    return out


@pytest.mark.mpi
def test_tune_total_minimises_write_plus_read(write_config, tmp_path, subprocess_env):
    config = write_config(TINY)
    tuned_path = tmp_path / "tuned.yaml"
    out = iotune("tune", "-c", str(config), "--cores", "2", "--target", "total",
                 "--strategy", "exhaustive", "--budget", "3", "-o", str(tuned_path),
                 cwd=tmp_path, env=subprocess_env)
    assert "target total: write open to close plus read-back" in out.stdout
    tuned = yaml.safe_load(tuned_path.read_text())
    assert tuned["target"] == "total" and tuned["kernel_args"]["access"] == "both"
    records = [r for r in Store(tmp_path / "store.jsonl").records() if r["campaign"] == "tune"]
    assert records and all(r["status"] == "ok" for r in records)
    for record in records:
        times = record["result"]["times_s"]
        assert times["total"] > 0 and times["read_total"] > 0
        assert record["params"]["access"] == "both"
    # the default's time is its runs' write + read times (a median of them)
    default = [Measurement.from_record(r) for r in records if not r["settings"]]
    io_times = sorted(m.time_for("total") for m in default)
    assert tuned["default"]["time_s"] == pytest.approx(float(np.median(io_times)), abs=1e-6)
    assert default and all(m.time_for("total") > (m.times.total or 0) for m in default)


@pytest.mark.mpi
def test_train_and_tune_read_keep_their_own_records(write_config, tmp_path, subprocess_env):
    config = write_config({**TINY, "train": {"scales": [{"cores": 2}]},
                           "tune": {"target": "read", "budget": 2, "strategy": "random"}})
    iotune("train", "-c", str(config), cwd=tmp_path, env=subprocess_env)
    trained = Store(tmp_path / "store.jsonl").records()
    assert len(trained) == 4
    assert all(r["params"]["access"] == "read" and "total" not in r["result"]["times_s"]
               for r in trained)
    # a write campaign of the same design is new work: access is part of the key
    iotune("train", "-c", str(config), "--target", "write", cwd=tmp_path, env=subprocess_env)
    records = Store(tmp_path / "store.jsonl").records()
    assert len(records) == 8
    assert len({r["config_key"] for r in records}) == 8
    tuned_path = tmp_path / "tuned.yaml"
    iotune("tune", "-c", str(config), "--cores", "2", "-o", str(tuned_path), cwd=tmp_path,
           env=subprocess_env)
    tuned = yaml.safe_load(tuned_path.read_text())
    assert tuned["target"] == "read" and tuned["kernel_args"]["access"] == "read"
    assert tuned["default"]["time_s"] > 0


def test_the_model_fits_the_targets_time():
    """Write time falls with cb_nodes, read time rises: each target's fit follows its own."""
    cb = np.array([1, 2, 4, 8, 1, 2, 4, 8], dtype=float)
    frame = pd.DataFrame({
        "cores": 4, "cb_nodes": cb,
        "write_time": 1.0 + 8.0 / cb,
        "read_time": 0.5 + 0.25 * cb,
        "io_time": 1.5 + 8.0 / cb + 0.25 * cb,
    })
    grid = pd.DataFrame({"cores": 4, "cb_nodes": [1.0, 8.0]})
    write = fit_for_settings(frame, ["cb_nodes"], 3, target="write").predict(grid)
    read = fit_for_settings(frame, ["cb_nodes"], 3, target="read").predict(grid)
    assert write[0] > write[1] and read[0] < read[1]
    assert read == pytest.approx([0.75, 2.5], rel=1e-6)
    # rows without the target's time are not used: no read time, no read model
    with pytest.raises(DataError, match="no numeric setting varies"):
        fit_for_settings(frame.assign(read_time=None), ["cb_nodes"], 3, target="read")


def test_access_is_set_for_the_target_and_never_overridden():
    config = parse_config("kernel: {name: ior}\n")
    assert "access" not in config.kernel.args
    assert with_target(config, "read").kernel.args["access"] == "read"
    assert with_target(config, "total").kernel.args["access"] == "both"
    assert "access" not in with_target(config, "write").kernel.args
    both = parse_config("kernel: {name: ior, args: {access: both}}\n")
    assert with_target(both, "read").kernel.args["access"] == "both"
    assert with_target(both, "write").tune.target == "write"
    with pytest.raises(ConfigError, match="'read' does not time the total target"):
        with_target(parse_config("kernel: {name: ior, args: {access: read}}\n"), "total")


def _error(result) -> str:
    assert "Traceback" not in result.output
    lines = [line for line in result.output.splitlines() if line.startswith("iotune: error:")]
    assert len(lines) == 1, result.output
    assert result.exit_code == 2
    return lines[0][len("iotune: error: "):]


def test_bad_target_in_the_config(write_config):
    config = write_config({"tune": {"target": "reads"}})
    result = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "2"])
    assert _error(result) == "tune.target: 'reads' is not one of write, read, total"


@pytest.mark.parametrize("backend", ["sim", "replay"])
def test_read_target_with_a_write_only_backend(write_config, tmp_path, backend):
    data = tmp_path / "runs.csv"
    data.write_text("cores,cb_nodes,write_time\n2,1,1.0\n2,2,0.5\n")
    config = write_config({"space": {"stripe_count": [1, 2]}})
    extra = ["--replay-data", str(data)] if backend == "replay" else []
    result = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "2", "--backend",
                                      backend, *extra, "--target", "read"])
    assert _error(result) == (f"--target: read: the {backend} backend models writes only (a "
                              "read target needs real runs: --backend mpi)")


def test_access_contradicting_the_target(write_config):
    config = write_config({"kernel": {"name": "vpic", "args": {"access": "write"}}})
    result = CliRunner().invoke(cli, ["train", "-c", str(config), "--target", "total",
                                      "--dry-run"])
    assert _error(result) == ("kernel.args.access: 'write' does not time the total target of "
                              "--target (it needs access both; leave access out to have it set)")


def test_kernel_without_a_read_phase(tmp_path):
    config = tmp_path / "app.yaml"
    config.write_text("kernel: {command: ./app}\nspace: {cb_nodes: [1, 2]}\n")
    result = CliRunner().invoke(cli, ["train", "-c", str(config), "--target", "read",
                                      "--dry-run"])
    assert _error(result) == ("--target: read: kernel 'command' has no read phase (vpic and "
                              "ior have one)")
