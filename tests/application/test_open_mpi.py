"""A user's program under real Open MPI: its own MPI-IO layer (OMPIO) does not use ROMIO's
hints, so a tune says so, stops varying them and recommends none; with ``system.mpi_io:
romio`` they are searched, and judged by who writes to the file system (Open MPI's
``MPI_File_get_info`` only returns the hints given).

Needs Open MPI beside MPICH (Debian: openmpi-bin libopenmpi-dev libhdf5-openmpi-dev, which
scripts/setup.sh --test installs as root without making them the default MPI).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.preload import COMPILER_ENV, LIBRARY_ENV
from iotune.store import Store
from tests.open_mpi import ROOT_OK, needs_open_mpi

pytestmark = [pytest.mark.mpi, needs_open_mpi]

REPO = Path(__file__).resolve().parents[2]
PROGRAM = REPO / "tests" / "apply" / "programs" / "show_hints.c"
#: The venv whose mpi4py and h5py are built against Open MPI (scripts/setup.sh --test).
OPENMPI_PYTHON = Path(os.environ.get("IOTUNE_OPENMPI_VENV", REPO / ".venv-openmpi")) / \
    "bin" / "python"
HINTS = ("romio_cb_write", "cb_nodes")


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("openmpi") / "show_hints"
    done = subprocess.run(["mpicc.openmpi", "-O2", "-o", str(out), str(PROGRAM)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


def tune(tmp_path: Path, program: Path, mpi_io: str) -> tuple[object, dict, list[dict]]:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": 120,
                   "launcher": "template", "mpi_io": mpi_io,
                   "launcher_template": "mpiexec.openmpi -n {ranks} {command}",
                   "env": ROOT_OK},
        "store": "store.jsonl",
        "kernel": {"command": f"{program} {{scratch}}/out.dat", "metric": "wall",
                   "preload": "yes"},
        "space": {"romio_cb_write": ["enable", "disable"], "cb_nodes": [1, 2]},
    }))
    tuned = tmp_path / "tuned.yaml"
    env = {COMPILER_ENV: "h5pcc.openmpi", LIBRARY_ENV: str(tmp_path / "preload-openmpi.so")}
    result = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "2", "--budget",
                                      "6", "-o", str(tuned), "--no-color"], env=env)
    assert result.exit_code == 0, result.output
    records = [r for r in Store(tmp_path / "store.jsonl").records() if r["settings"]]
    assert records and all(r["status"] == "ok" for r in records)
    return result, yaml.safe_load(tuned.read_text()), records


def test_ompio_ignores_romio_hints_and_the_tune_says_so(tmp_path, program):
    result, tuned, records = tune(tmp_path, program, "default")
    assert "Open MPI" in records[0]["result"]["preload"]["mpi_library"]
    for name in HINTS:
        assert result.stderr.count(f"{name} has no effect here") == 1
        assert "OMPIO" in tuned["search"]["not_varied"][name]
        assert len({r["settings"][name] for r in records}) == 1  # never varied again
    assert tuned["settings"] == {}
    assert tuned["recommendation"] == "default"


def test_with_romio_selected_the_hints_are_searched(tmp_path, program):
    result, tuned, records = tune(tmp_path, program, "romio")
    assert "has no effect here" not in result.stderr
    assert {r["result"]["preload"]["mpi_io"] for r in records} == {"^ompio"}
    assert len({r["settings"]["romio_cb_write"] for r in records}) == 2
    assert "not_varied" not in tuned["search"]
    # Open MPI cannot read the hints back; who wrote to the file system tells instead
    # (the preload library counts it): with collective buffering on one aggregator one
    # rank writes for both, without it each rank writes its own part.
    judged = {}
    for record in records:
        settings, effects = record["settings"], record["result"]["settings_effect"]
        statuses = {name: effects[name]["status"] for name in HINTS}
        judged[settings["romio_cb_write"], settings["cb_nodes"]] = statuses
        assert "absent" not in statuses.values()
    for (cb_write, cb_nodes), statuses in judged.items():
        if cb_write == "disable":
            assert statuses["romio_cb_write"] == "in_effect"
        elif cb_nodes == 1:
            assert statuses == {"romio_cb_write": "in_effect", "cb_nodes": "in_effect"}
        else:  # two aggregators asked for on one node: ROMIO allows one per node
            assert statuses["cb_nodes"] == "differs"
    assert any("in_effect" in statuses.values() for statuses in judged.values())


@pytest.mark.skipif(not OPENMPI_PYTHON.exists(),
                    reason="no venv with mpi4py and h5py built against Open MPI "
                           "(scripts/setup.sh makes .venv-openmpi where Open MPI is installed)")
@pytest.mark.parametrize(("mpi_io", "hints"), [("default", "absent"), ("romio", "unverified")])
def test_the_kernels_under_open_mpi(tmp_path, mpi_io, hints):
    # The vpic kernel through h5py built against Open MPI: the hints read back are only
    # the ones given, so they are judged by the layer; HDF5's settings are read back.
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": 120,
                   "python": str(OPENMPI_PYTHON), "launcher": "template", "mpi_io": mpi_io,
                   "launcher_template": "mpiexec.openmpi -n {ranks} {command}",
                   "env": ROOT_OK},
        "store": "store.jsonl",
        "kernel": {"name": "vpic", "args": {"particles_per_rank": 4096}}}))
    result = CliRunner().invoke(cli, ["run", "-c", str(config), "--cores", "2",
                                      "--set", "cb_nodes=1", "--set", "romio_cb_write=enable",
                                      "--set", "alignment=1MiB", "--format", "json"])
    assert result.exit_code == 0, result.output
    (record,) = Store(tmp_path / "store.jsonl").records()
    assert record["result"]["mpi_library"].startswith("Open MPI")
    effects = {n: e["status"] for n, e in record["result"]["settings_effect"].items()}
    assert effects == {"cb_nodes": hints, "romio_cb_write": hints, "alignment": "in_effect"}
    assert json.loads(result.stdout)["status"] == "ok"
