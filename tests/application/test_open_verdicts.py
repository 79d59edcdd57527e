"""Per-setting verdicts judged on the open that moved the data (2 ranks, real MPI-IO).

programs/reopen_self.c writes a file collectively and then, like IOR, reopens it on rank 0
with MPI_COMM_SELF only to read its size. That second open reads back cb_nodes=1 whatever
the write had; the verdict must come from the open that moved the bytes, checked against
the ranks that wrote to the file inside its collective writes, and be ``unverified`` when
the two witnesses disagree, never a wrong ``differs``.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.preload import LIBRARY_ENV
from iotune.preload.report import NO_OPENS, WRITER_FIELDS, data_open, data_opens, file_io
from iotune.settings.in_effect import setting_effects
from iotune.store import Store
from iotune.store.records import Measurement
from iotune.strategies.base import Evaluation
from iotune.tune.result import verify

PROGRAMS = Path(__file__).resolve().parent / "programs"
TIMEOUT_S = 120
MIB = 1 << 20
#: The hints of the IOR report (issue 35): two aggregators on this one node.
TWO_AGGREGATORS = ("cb_nodes=2", "cb_config_list=*:2", "romio_cb_write=enable")
#: ROMIO gives each aggregator a file domain of at least this many bytes, so a 2 MiB write
#: leaves the second aggregator nothing: cb_nodes reads back 2 while one rank writes.
ONE_DOMAIN = "hint.romio_min_fdomain_size=1073741824"


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("reopen") / "reopen_self"
    done = subprocess.run(["mpicc", "-Wall", "-Werror", "-O2", "-o", str(out),
                           str(PROGRAMS / "reopen_self.c")], capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("preload") / "libiotune_preload.so"


def run_once(tmp_path: Path, program: Path, library: Path, monkeypatch: pytest.MonkeyPatch,
             settings: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """``iotune run --cores 2`` of the program with ``settings``: its output and record."""
    monkeypatch.setenv(LIBRARY_ENV, str(library))
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({
        "system": {"scratch": str(scratch), "cores_per_node": 2, "timeout": "2m"},
        "store": "store.jsonl",
        "kernel": {"command": f"{program} {{scratch}}/out.dat 2", "metric": "io_time",
                   "preload": "yes"},
    }))
    args = ["run", "-c", str(config), "--cores", "2"]
    for setting in settings:
        args += ["--set", setting]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    [record] = Store(tmp_path / "store.jsonl").records()
    assert record["status"] == "ok", record.get("error")
    return result.stdout, record


@pytest.mark.mpi
def test_the_reopen_on_one_rank_does_not_decide_cb_nodes(tmp_path, program, library,
                                                         monkeypatch):
    output, record = run_once(tmp_path, program, library, monkeypatch, TWO_AGGREGATORS)
    result = record["result"]
    assert json.loads(result["stdout_tail"]) == {"bytes": 4 * MIB, "size": 4 * MIB}
    # The trap was there: the last open of the file read back one aggregator.
    [entry] = result["preload"]["files"]
    write, reopen = entry["opens"]
    assert (reopen["comm_size"], reopen["bytes_written"], reopen["bytes_read"]) == (1, 0, 0)
    assert reopen["hints_in_effect"]["cb_nodes"] == "1"
    assert (write["comm_size"], write["bytes_written"]) == (2, 4 * MIB)
    assert write["hints_in_effect"]["cb_nodes"] == "2"
    # The verdict follows the open that wrote, and its two writers agree with it.
    assert result["data_open"]["comm_size"] == 2
    assert result["data_open"]["ranks_writing_to_files_collectively"] == 2
    assert result["hints_in_effect"]["cb_nodes"] == "2"
    effect = result["settings_effect"]["cb_nodes"]
    assert (effect["status"], effect["in_effect"]) == ("in_effect", "2")
    assert "2 of 2 ranks wrote" in effect["detail"]
    assert "not in effect: cb_nodes" not in output
    # The old reader of the report (a file's hints) sees the open that moved the data too.
    assert entry["hints_in_effect"]["cb_nodes"] == "2"


@pytest.mark.mpi
def test_witnesses_that_disagree_leave_cb_nodes_unverified(tmp_path, program, library,
                                                           monkeypatch):
    _, record = run_once(tmp_path, program, library, monkeypatch,
                         (*TWO_AGGREGATORS, ONE_DOMAIN))
    result = record["result"]
    assert result["hints_in_effect"]["cb_nodes"] == "2"  # what MPI_File_get_info says
    assert result["data_open"]["ranks_writing_to_files_collectively"] == 1  # who wrote
    effect = result["settings_effect"]["cb_nodes"]
    assert effect["status"] == "unverified" and effect["in_effect"] is None
    assert "witnesses disagree" in effect["detail"]
    assert result["settings_effect"]["romio_cb_write"]["status"] == "in_effect"


@pytest.mark.mpi
def test_a_clamped_cb_nodes_still_differs_when_the_writers_agree(tmp_path, program, library,
                                                                 monkeypatch):
    # One aggregator per node by default ('*:1'): ROMIO uses 1, and one rank writes.
    _, record = run_once(tmp_path, program, library, monkeypatch,
                         ("cb_nodes=2", "romio_cb_write=enable"))
    effect = record["result"]["settings_effect"]["cb_nodes"]
    assert (effect["status"], effect["in_effect"]) == ("differs", "1")
    assert "1 of 2 ranks wrote" in effect["detail"]


# --- the rules on recorded results (no MPI) ----------------------------------------------


def open_record(comm_size: int, written: int, hints: dict[str, str] | None, *,
                read: int = 0, writers: tuple[int, int, int, int] = (0, 0, 0, 0),
                open_s: float = 0.5) -> dict[str, Any]:
    """One open as the report lists it."""
    return {"comm_size": comm_size, "amode": 5, "ranks": comm_size, "closed": True,
            "open_to_close_s": open_s, "write_s": 0.1, "read_s": 0.0,
            "bytes_written": written, "bytes_read": read, "write_calls": 1, "read_calls": 0,
            **dict(zip(WRITER_FIELDS, writers, strict=True)), "hints_in_effect": hints}


def report_of(*files: tuple[str, list[dict[str, Any]]]) -> dict[str, Any]:
    return {"preload": "iotune", "version": 2, "ranks": 2,
            "files": [{"path": path, "opened_by": "MPI_File_open", "hints_in_effect": {},
                       "bytes_written": sum(o["bytes_written"] for o in opens),
                       "bytes_read": sum(o["bytes_read"] for o in opens),
                       "open_s": sum(o["open_to_close_s"] for o in opens), "opens": opens}
                      for path, opens in files]}


def effects(settings: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    """The verdicts a run with ``report`` gets, as application.py records them."""
    data = data_open(report)
    hints = data["hints_in_effect"] if isinstance(data, dict) else {}
    result = {"hints_in_effect": hints, "preload": report, "data_open": data}
    return {n: (e.status, e.in_effect) for n, e in setting_effects(settings, result).items()}


ENABLED = {"cb_nodes": "2", "romio_cb_write": "enable"}


def test_the_open_with_the_most_bytes_is_judged_and_ties_go_to_the_larger_communicator():
    report = report_of(("a", [open_record(2, 4 * MIB, ENABLED, writers=(2, 2, 2, 2)),
                              open_record(1, 0, {"cb_nodes": "1"})]),
                       ("b", [open_record(1, MIB, {"cb_nodes": "1"})]))
    assert [(o.path, o.comm_size) for o in data_opens(report)] == [("a", 2)]
    assert effects({"cb_nodes": 2}, report) == {"cb_nodes": ("in_effect", "2")}
    tied = report_of(("a", [open_record(1, MIB, {"cb_nodes": "1"}, read=MIB),
                            open_record(2, 0, {"cb_nodes": "2"}, read=2 * MIB)]))
    assert [o.comm_size for o in data_opens(tied)] == [2]
    # IOR's write and read phases tie: the hints agree, and the writers are the write's.
    phases = report_of(("a", [open_record(2, MIB, ENABLED, writers=(2, 2, 2, 2)),
                              open_record(1, 0, {"cb_nodes": "1"}),
                              open_record(2, 0, ENABLED, read=MIB)]))
    moved = data_open(phases)
    assert isinstance(moved, dict) and moved["opens"] == 2
    assert moved["ranks_writing_to_files_collectively"] == 2
    assert effects({"cb_nodes": 2}, phases) == {"cb_nodes": ("in_effect", "2")}


def test_no_open_that_moved_data_leaves_the_hints_unverified():
    report = report_of(("a", [open_record(2, 0, ENABLED), open_record(1, 0, ENABLED)]))
    assert data_open(report) is None
    assert effects({"cb_nodes": 2, "romio_cb_write": "enable"}, report) == {
        "cb_nodes": ("unverified", None), "romio_cb_write": ("unverified", None)}


def test_tied_opens_that_read_back_different_values_leave_that_hint_unverified():
    report = report_of(("a", [open_record(2, MIB, ENABLED, writers=(2, 2, 2, 2))]),
                       ("b", [open_record(2, MIB, {"cb_nodes": "1", "romio_cb_write": "enable"},
                                          writers=(2, 1, 2, 1))]))
    moved = data_open(report)
    assert isinstance(moved, dict)
    assert moved["hints_disputed"] == ["cb_nodes"] and moved["opens"] == 2
    assert moved["ranks_writing_to_files_collectively"] is None  # they disagree on it too
    assert effects({"cb_nodes": 2, "romio_cb_write": "enable"}, report) == {
        "cb_nodes": ("unverified", None), "romio_cb_write": ("in_effect", "enable")}


def test_the_writers_witness_only_where_collective_buffering_was_on():
    # romio_cb_write=automatic: ROMIO may write independently, so who wrote says nothing.
    automatic = {"cb_nodes": "2", "romio_cb_write": "automatic"}
    report = report_of(("a", [open_record(2, MIB, automatic, writers=(2, 1, 2, 1))]))
    assert effects({"cb_nodes": 2}, report) == {"cb_nodes": ("in_effect", "2")}
    # Enabled, but no collective write: nothing to witness.
    report = report_of(("a", [open_record(2, MIB, ENABLED, writers=(2, 2, 0, 0))]))
    assert effects({"cb_nodes": 2}, report) == {"cb_nodes": ("in_effect", "2")}
    # Enabled with collective writes: one writer where two aggregators were read back.
    report = report_of(("a", [open_record(2, MIB, ENABLED, writers=(2, 1, 2, 1))]))
    assert effects({"cb_nodes": 2}, report) == {"cb_nodes": ("unverified", None)}
    # A version-1 report (no opens) is judged as before, from its hints alone.
    old = {"hints_in_effect": {"cb_nodes": "1"}, "preload": {"version": 1, "files": []}}
    assert setting_effects({"cb_nodes": 2}, old)["cb_nodes"].status == "differs"
    assert data_open({"version": 1, "files": []}) == NO_OPENS


def test_an_unverified_run_keeps_a_differing_value_from_being_recommended():
    settings = {"cb_nodes": 2}
    differs = {"cb_nodes": {"status": "differs", "requested": "2", "in_effect": "1"}}
    unverified = {"cb_nodes": {"status": "unverified", "requested": "2"}}

    def run(effect: dict[str, Any]) -> Measurement:
        return Measurement.from_record({
            "kernel": "command", "cores": 2, "backend": "mpi", "status": "ok",
            "settings": settings,
            "result": {"times_s": {"total": 1.0}, "settings_effect": effect}})

    both = Evaluation(settings, "k", times=[1.0, 1.0],
                      measurements=[run(differs), run(unverified)])
    verified = verify(both, {}, measured=True)
    assert verified.settings == {} and verified.unverified == {"cb_nodes": "2"}
    assert "cb_nodes" not in verified.not_in_effect
    only_differs = Evaluation(settings, "k", times=[1.0], measurements=[run(differs)])
    assert verify(only_differs, {}, measured=True).settings == {"cb_nodes": 1}


def test_file_io_adds_each_files_opens_and_filters_by_glob():
    report = report_of(("/run/ckpt.h5", [open_record(2, 4 * MIB, ENABLED, open_s=1.5),
                                         open_record(1, 0, ENABLED, read=MIB, open_s=0.25)]),
                       ("/run/log.dat", [open_record(1, MIB, {}, open_s=0.5)]))
    every = file_io(report)
    assert [(f.path, f.seconds, f.bytes_written, f.bytes_read, f.opens) for f in every] == [
        ("/run/ckpt.h5", 1.75, 4 * MIB, MIB, 2), ("/run/log.dat", 0.5, MIB, 0, 1)]
    assert [f.path for f in file_io(report, "*.h5")] == ["/run/ckpt.h5"]
    assert file_io({"version": 1, "files": [{"path": "x"}]}) == []
