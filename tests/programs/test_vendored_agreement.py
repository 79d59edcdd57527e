"""iotune's verdict on each setting agrees with what the program itself reports: IOR's
``--mpiio.showHints`` printout for MPI-IO hints, ``h5dump -p`` of the file IOR wrote for the
HDF5 alignment; and what ``run`` prints on the screen says the same."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from itertools import product
from pathlib import Path

import pytest
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.cli.verdicts import run_verdicts
from iotune.settings.in_effect import same_hint_value
from tests.programs.vendored import IOR_HDF5, IOR_METRIC, IOR_MPIIO, ior_hints

pytestmark = pytest.mark.mpi

#: One aggregator per node or two, times one asked for or two; the buffer size and
#: collective buffering vary with them so that each run checks four settings.
GRID = [{"cb_nodes": nodes, "cb_config_list": listed,
         "cb_buffer_size": {1: "1MiB", 2: "4MiB"}[nodes],
         "romio_cb_write": {"*:1": "disable", "*:2": "enable"}[listed]}
        for nodes, listed in product((1, 2), ("*:1", "*:2"))]
#: The settings as ROMIO takes them (IOR prints sizes in bytes).
AS_HINTS = {"1MiB": "1048576", "4MiB": "4194304"}


def run(*args: str) -> str:
    """``iotune run ARGS`` at 2 ranks, recording nothing; its stdout."""
    result = CliRunner().invoke(cli, ["run", "--cores", "2", "--no-store", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("settings", GRID, ids=lambda s: "-".join(map(str, s.values())))
def test_the_verdict_on_each_hint_is_what_ior_shows(program, tmp_path, monkeypatch, settings):
    monkeypatch.chdir(tmp_path)
    ior = program("ior")
    sets = [w for name, value in settings.items() for w in ("--set", f"{name}={value}")]
    record = json.loads(run("--command", f"{ior} {IOR_MPIIO} -o {{scratch}}/f --mpiio.showHints",
                            "--metric", IOR_METRIC, "--format", "json", *sets))
    shown = ior_hints(record["result"]["stdout_tail"])
    effects = record["result"]["settings_effect"]
    screen = run_verdicts(record)  # what `run` prints beside the figures
    for name, value in settings.items():
        requested = AS_HINTS.get(str(value), str(value))
        verdict = effects[name]
        if same_hint_value(requested, shown[name]):
            # IOR shows what was asked: never 'differs' (at most unverified, when the
            # files the program opened disagree), and said on the screen unless in effect
            assert verdict["status"] in ("in_effect", "unverified"), (name, shown[name],
                                                                      verdict)
        else:  # IOR shows another value: iotune says that one
            assert (verdict["status"], verdict["in_effect"]) == ("differs", shown[name]), (
                name, shown[name], verdict)
        listed = any(key.endswith(f": {name}") for key in screen)
        assert listed == (verdict["status"] != "in_effect"), (name, screen)


def _h5_offsets(path: Path) -> list[int]:
    """The file offsets of the datasets of an HDF5 file (``h5dump -p -H``)."""
    dump = subprocess.run(["h5dump", "-p", "-H", str(path)], capture_output=True, text=True,
                          check=True).stdout
    return [int(x) for x in re.findall(r"OFFSET (\d+)", dump)]


def _links_hdf5_shared(path: str) -> bool:
    libraries = subprocess.run(["ldd", path], capture_output=True, text=True).stdout
    return "libhdf5" in libraries


@pytest.mark.parametrize("name", ["ior", "ior-h5pcc"])
def test_hdf5_alignment_reaches_a_shared_hdf5_and_a_static_one_is_said(program, tmp_path,
                                                                      monkeypatch, name):
    if shutil.which("h5dump") is None:
        pytest.skip("h5dump not found (Debian: apt-get install hdf5-tools)")
    ior = program(name)
    static = name == "ior-h5pcc"
    if static and _links_hdf5_shared(ior):
        pytest.skip(f"{ior} links HDF5 shared here: this h5pcc does not link statically")
    monkeypatch.chdir(tmp_path)
    output = tmp_path / "ior.h5"  # outside the run directory, which goes after the run
    screen = run("--command", f"{ior} {IOR_HDF5} -k -o {output}", "--metric", IOR_METRIC,
                 "--set", "alignment=1MiB")
    offsets = _h5_offsets(output)
    assert len(offsets) == 4  # IOR's four segments, one dataset each
    lines = {line.split()[0]: line for line in screen.splitlines() if line.strip()}
    if not static:
        assert all(offset % 2**20 == 0 for offset in offsets), offsets
        assert "alignment=1MiB" in lines["hdf5_in_effect"].split()
        assert "unverified:" not in screen, screen
        return
    # The program's own HDF5 never saw the setting: the datasets are not aligned, and the
    # screen says why and what to do.
    assert not all(offset % 2**20 == 0 for offset in offsets), offsets
    assert "hdf5_in_effect" not in lines
    (line,) = [x for x in screen.splitlines() if x.startswith("unverified: alignment")]
    assert f"alignment=1MiB: unverified; {ior} links HDF5 statically" in line, line
    assert "link HDF5 shared" in line and "CC=mpicc" in line
