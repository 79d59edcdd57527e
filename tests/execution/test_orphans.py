"""Run directories left by killed runs are removed, and only those (issue: no orphaned files)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.execution.rundirs import MARKER, orphans, owner, remove_orphans, write_marker


def dead_owner() -> dict:
    """The owner record of a process that has ended."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    return owner(int(done.stdout))


def make_dir(scratch: Path, name: str, record: dict | None, size: int = 1000) -> Path:
    directory = scratch / name
    directory.mkdir()
    (directory / "data.bin").write_bytes(b"x" * size)
    if record is not None:
        write_marker(directory, record)
    return directory


def test_only_run_directories_of_a_gone_owner_are_removed(tmp_path):
    gone = dead_owner()
    orphan = make_dir(tmp_path, "iotune-vpic-1", gone, 5000)
    mine = make_dir(tmp_path, "iotune-ior-2", owner())  # this process: alive
    elsewhere = make_dir(tmp_path, "iotune-app-3", {**gone, "host": "another-node"})
    unmarked = make_dir(tmp_path, "iotune-vpic-4", None)
    foreign = make_dir(tmp_path, "results", gone)  # not ours by name
    reused = make_dir(tmp_path, "iotune-vpic-5", {**owner(), "start": -1})  # pid reused
    (tmp_path / "iotune-link").symlink_to(orphan)
    assert orphans(tmp_path) == sorted([orphan, reused])
    done = remove_orphans(tmp_path)
    assert sorted(done.removed) == sorted([orphan, reused]) and done.bytes >= 6000
    for kept in (mine, elsewhere, unmarked, foreign):
        assert kept.is_dir()
    assert not orphan.exists() and not reused.exists()


@pytest.mark.mpi
def test_run_removes_orphans_and_says_how_much(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "iotune.yaml").write_text(
        f"system: {{scratch: {scratch}, cores_per_node: 2}}\nstore: s.jsonl\n"
        "kernel: {name: vpic, args: {particles_per_rank: 1024}}\n")
    make_dir(scratch, "iotune-vpic-killed", dead_owner(), 2 * 2**20)
    result = CliRunner().invoke(cli, ["run", "--cores", "2", "--format", "json"])
    assert result.exit_code == 0, result.output
    assert "removed 1 orphaned run directory (2.0 MiB)" in result.output
    assert not any(scratch.iterdir())  # the orphan and the run's own directory are gone
    assert json.loads(result.stdout[result.stdout.index("{"):])["status"] == "ok"


def test_the_marker_names_the_driver_passed_in_the_environment(tmp_path, monkeypatch):
    record = {"pid": 12345, "host": "node7", "start": 99}
    monkeypatch.setenv("IOTUNE_OWNER", json.dumps(record))
    write_marker(tmp_path)
    assert json.loads((tmp_path / MARKER).read_text()) == record
