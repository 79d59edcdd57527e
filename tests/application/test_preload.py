"""The preload library on real, unmodified MPI-IO and parallel HDF5 programs (2 ranks).

The two programs in programs/ are compiled here with the installed MPI compilers and run
under ``mpiexec -n 2`` with ``LD_PRELOAD``; what the library reports is checked against
what the program and the file on disk show.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from iotune.errors import ConfigError
from iotune.preload import (
    COMPILER_ENV,
    LIBRARY_ENV,
    OUT_ENV,
    SETTINGS_ENV,
    build_command,
    build_library,
    compiler,
    library_path,
    settings_text,
    source_path,
)
from iotune.preload.mpi_flavour import detect_mpi_flavour
from iotune.preload.report import REPORT_VERSION, file_io, opens

PROGRAMS = Path(__file__).resolve().parent / "programs"
TIMEOUT_S = 120
MIB = 1 << 20
MIB_PER_RANK = 2
CHUNK_KIB = 256
DOUBLES_PER_RANK = 131072  # 1 MiB per rank
ALIGNMENT = MIB
RUN_HINTS = "hint:cb_buffer_size=4194304\nhint:romio_cb_write=disable\n"


@dataclass
class AppRun:
    """A finished program run under the preload library."""

    returncode: int
    stdout: str
    stderr: str
    report_path: Path

    def report(self) -> dict[str, Any]:
        """The library's JSON report (asserts the run succeeded and wrote it)."""
        assert self.returncode == 0, self.stderr
        assert self.report_path.is_file(), f"no report; stderr:\n{self.stderr}"
        return json.loads(self.report_path.read_text())


@pytest.fixture(scope="session")
def preload_lib(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The library, built once into a temporary directory through build_library()."""
    target = tmp_path_factory.mktemp("preload") / "libiotune_preload.so"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LIBRARY_ENV, str(target))
        built = build_library()
    assert built == target and target.is_file()
    yield target


@pytest.fixture(scope="session")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The test programs, compiled: mpiio and files (mpicc), h5 (h5pcc, shared HDF5) and h5_static
    (h5pcc's default on Debian: HDF5 linked into the executable)."""
    out = tmp_path_factory.mktemp("programs")
    builds = {
        "mpiio": ["mpicc", "-Wall", "-Werror", "-O2", str(PROGRAMS / "mpiio_write.c")],
        "files": ["mpicc", "-Wall", "-Werror", "-O2", str(PROGRAMS / "files_write.c")],
        "h5": ["h5pcc", "-shlib", "-Wall", "-Werror", "-O2", str(PROGRAMS / "h5_write.c")],
        "h5_static": ["h5pcc", "-Wall", "-O2", str(PROGRAMS / "h5_write.c")],
    }
    paths = {}
    for name, command in builds.items():
        paths[name] = out / name
        done = subprocess.run([*command, "-o", str(paths[name])], capture_output=True,
                              text=True, cwd=out, timeout=TIMEOUT_S, check=False)
        assert done.returncode == 0, done.stderr
    return paths


@pytest.fixture
def run_app(preload_lib: Path, tmp_path: Path):
    """``run_app(argv, settings=None, out=True, preload=True)``: ``mpiexec -n 2 argv`` in
    tmp_path with the library preloaded; ``settings`` is the settings file's text (None:
    no IOTUNE_SETTINGS), ``out`` whether IOTUNE_PRELOAD_OUT is set."""

    def run(argv: list[str], settings: str | None = None, out: bool = True,
            preload: bool = True) -> AppRun:
        env = {k: v for k, v in os.environ.items()
               if k not in ("ROMIO_HINTS", SETTINGS_ENV, OUT_ENV, "LD_PRELOAD")}
        if preload:
            env["LD_PRELOAD"] = str(preload_lib)
        if settings is not None:
            settings_file = tmp_path / "settings.txt"
            settings_file.write_text(settings)
            env[SETTINGS_ENV] = str(settings_file)
        report = tmp_path / "preload.json"
        if out:
            env[OUT_ENV] = str(report)
        done = subprocess.run(["mpiexec", "-n", "2", *argv], cwd=tmp_path, env=env,
                              capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
        return AppRun(done.returncode, done.stdout, done.stderr, report)

    return run


def only_file(report: dict[str, Any], opened_by: str) -> dict[str, Any]:
    """The one entry of report["files"] opened by ``opened_by``."""
    entries = [f for f in report["files"] if f["opened_by"] == opened_by]
    assert len(entries) == 1, report["files"]
    return entries[0]


def dataset_offset(path: Path) -> int:
    """Byte offset of /data in the HDF5 file."""
    with h5py.File(path, "r") as f:
        offset = f["data"].id.get_offset()
        assert offset is not None
        np.testing.assert_array_equal(f["data"][:], np.arange(2 * DOUBLES_PER_RANK))
        return int(offset)


# --- MPI-IO program --------------------------------------------------------------------


@pytest.mark.mpi
def test_run_hints_override_the_programs_own_info(run_app, programs, tmp_path):
    data = tmp_path / "out.dat"
    run = run_app([str(programs["mpiio"]), str(data), str(MIB_PER_RANK), str(CHUNK_KIB)],
                  settings="# the run's hints\n\n" + RUN_HINTS)
    report = run.report()
    # The library writes the version its reader (iotune.preload.report) knows.
    assert report["preload"] == "iotune" and report["version"] == REPORT_VERSION
    assert report["ranks"] == 2
    assert report["settings_applied"] == {"hint:cb_buffer_size": "4194304",
                                          "hint:romio_cb_write": "disable"}
    entry = only_file(report, "MPI_File_open")
    assert entry["path"] == str(data)
    # The program asked for cb_buffer_size=1048576 and romio_cb_write=enable; ours win.
    assert entry["hints_in_effect"]["cb_buffer_size"] == "4194304"
    assert entry["hints_in_effect"]["romio_cb_write"] == "disable"
    assert report["warnings"] == [] and report["files_omitted"] == 0
    # Timing and bytes: exactly what the program wrote, in the calls it made.
    total = 2 * MIB_PER_RANK * MIB
    assert json.loads(run.stdout)["bytes"] == total
    assert report["bytes_written"] == total
    assert report["write_calls"] == 2 * MIB_PER_RANK * 1024 // CHUNK_KIB
    assert 0 < report["write_time_s"] < json.loads(run.stdout)["io_time_s"]
    # The data went through intact.
    np.testing.assert_array_equal(np.fromfile(data, dtype=np.float64),
                                  np.arange(total // 8, dtype=np.float64))


def hints_by_file(report: dict[str, Any]) -> dict[str, tuple[str | None, dict[str, str]]]:
    """Each file's one open as (its section, its hints read back), by the file's name."""
    found = {}
    for entry in report["files"]:
        (only,) = entry["opens"]
        found[Path(entry["path"]).name] = (only["section"], only["hints_in_effect"])
    return found


@pytest.mark.mpi
def test_each_file_gets_the_settings_of_its_section(run_app, programs, tmp_path):
    (tmp_path / "out").mkdir()
    argv = [str(programs["files"]), "1", "out/ckpt_1.dat", "plot.dat", "run.log"]
    # ROMIO's own values, from the same program without settings.
    default = hints_by_file(run_app(argv).report())["run.log"][1]
    assert default["cb_buffer_size"] != "4194304" and default["romio_cb_write"] != "disable"
    settings = ("hint:cb_buffer_size=4194304\n"  # files no section matches
                "file:*/ckpt_*\n"  # out/ckpt_1.dat as passed
                "hint:romio_cb_write=disable\n"
                "# plot.dat matches through its absolute form only\n"
                f"file:{tmp_path}/plot.*\n"
                "hint:cb_buffer_size=2097152\n")
    run = run_app(argv, settings=settings)
    report = run.report()
    assert report["version"] == REPORT_VERSION and report["warnings"] == []
    assert report["settings_applied"] == {"hint:cb_buffer_size": "4194304"}
    assert report["sections"] == [
        {"file": "*/ckpt_*", "settings_applied": {"hint:romio_cb_write": "disable"}},
        {"file": f"{tmp_path}/plot.*", "settings_applied": {"hint:cb_buffer_size": "2097152"}}]
    seen = hints_by_file(report)
    # Each file has its own section's values and ROMIO's for the rest: a section never
    # adds to the lines before it.
    ckpt_section, ckpt = seen["ckpt_1.dat"]
    assert ckpt_section == "*/ckpt_*"
    assert (ckpt["romio_cb_write"], ckpt["cb_buffer_size"]) == (
        "disable", default["cb_buffer_size"])
    plot_section, plot = seen["plot.dat"]
    assert plot_section == f"{tmp_path}/plot.*"
    assert (plot["romio_cb_write"], plot["cb_buffer_size"]) == (
        default["romio_cb_write"], "2097152")
    log_section, log = seen["run.log"]
    assert log_section is None
    assert (log["romio_cb_write"], log["cb_buffer_size"]) == (
        default["romio_cb_write"], "4194304")
    # The reader: each open's section, and a file measured by its section's glob although
    # its path as passed (plot.dat) does not match it.
    assert {o.path: o.section for o in opens(report)} == {
        "out/ckpt_1.dat": "*/ckpt_*", "plot.dat": f"{tmp_path}/plot.*", "run.log": None}
    assert [f.path for f in file_io(report, f"{tmp_path}/plot.*")] == ["plot.dat"]
    assert [f.path for f in file_io(report, "*/ckpt_*")] == ["out/ckpt_1.dat"]
    assert [f.bytes_written for f in file_io(report)] == [2 * MIB] * 3


@pytest.mark.mpi
def test_the_first_matching_section_wins_and_bad_sections_are_skipped(run_app, programs,
                                                                      tmp_path):
    settings = ("file:\nhint:cb_buffer_size=1048576\n"  # no glob: its lines are ignored
                "file:*.dat\nhint:cb_buffer_size=2097152\n"
                "file:*a.dat\nhint:cb_buffer_size=3145728\n"
                "file:*.dat\nhint:romio_cb_write=disable\n")  # the same section, added to
    run = run_app([str(programs["files"]), "1", "a.dat"], settings=settings)
    report = run.report()
    assert run.stderr.count("file: needs a glob") == 1
    assert report["settings_applied"] == {}
    section, hints = hints_by_file(report)["a.dat"]
    assert section == "*.dat"
    assert (hints["cb_buffer_size"], hints["romio_cb_write"]) == ("2097152", "disable")


@pytest.mark.mpi
def test_an_hdf5_file_gets_its_sections_settings(run_app, programs, tmp_path):
    data = tmp_path / "ckpt.h5"
    run = run_app([str(programs["h5"]), str(data), str(DOUBLES_PER_RANK)],
                  settings=f"file:*/other.h5\nhdf5:alignment={ALIGNMENT}\n"
                           f"file:*/ckpt.h5\nhint:cb_buffer_size=4194304\n")
    report = run.report()
    assert run.stdout.strip() == "ok"
    created = only_file(report, "H5Fcreate")
    assert [o["section"] for o in created["opens"]] == ["*/ckpt.h5"]
    assert created["hints_in_effect"]["cb_buffer_size"] == "4194304"
    # The other section's alignment did not reach this file.
    assert dataset_offset(data) % ALIGNMENT != 0


@pytest.mark.mpi
def test_without_settings_the_program_keeps_its_hints_and_is_measured(run_app, programs,
                                                                      tmp_path):
    data = tmp_path / 'a "quoted"\\back\tslashed é.dat'  # JSON escaping of the path
    report = run_app([str(programs["mpiio"]), str(data), str(MIB_PER_RANK)]).report()
    assert report["settings_applied"] == {}
    entry = only_file(report, "MPI_File_open")
    assert entry["path"] == str(data)
    hints = entry["hints_in_effect"]
    assert hints["cb_buffer_size"] == "1048576"
    assert hints["romio_cb_write"] == "enable"
    assert report["bytes_written"] == 2 * MIB_PER_RANK * MIB
    assert report["write_time_s"] > 0
    assert report["warnings"] == []


@pytest.mark.mpi
def test_no_output_variable_means_no_report(run_app, programs, tmp_path):
    run = run_app([str(programs["mpiio"]), str(tmp_path / "out.dat"), "1"],
                  settings=RUN_HINTS, out=False)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["bytes"] == 2 * MIB
    assert not run.report_path.exists()
    assert not list(tmp_path.glob("*.tmp*"))


@pytest.mark.mpi
def test_programs_that_open_no_file_are_unaffected(run_app, preload_lib):
    # `true` is not an MPI program; mpiexec and its proxies also run with the library.
    run = run_app(["true"], settings=RUN_HINTS)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert not run.report_path.exists()


@pytest.mark.mpi
def test_unknown_and_invalid_settings_are_reported_once_and_ignored(run_app, programs,
                                                                    tmp_path):
    settings = (RUN_HINTS + "stripe_count=4\nstripe_count=8\nhdf5:alignment=0\n"
                "hdf5:coll_metadata=maybe\nno equals sign\n")
    run = run_app([str(programs["mpiio"]), str(tmp_path / "out.dat"), "1"], settings=settings)
    report = run.report()
    assert run.stderr.count("unknown setting 'stripe_count'") == 1  # once, not per rank
    assert run.stderr.count("hdf5:alignment must be a positive number") == 1
    assert run.stderr.count("expected key=value") == 1
    assert len(report["warnings"]) == 4
    assert report["settings_applied"] == {"hint:cb_buffer_size": "4194304",
                                          "hint:romio_cb_write": "disable"}
    assert only_file(report, "MPI_File_open")["hints_in_effect"]["cb_buffer_size"] == "4194304"


@pytest.mark.mpi
def test_hdf5_settings_in_a_pure_mpiio_program_are_flagged(run_app, programs, tmp_path):
    run = run_app([str(programs["mpiio"]), str(tmp_path / "out.dat"), "1"],
                  settings=f"hdf5:alignment={ALIGNMENT}\n")
    report = run.report()
    assert report["settings_applied"] == {"hdf5:alignment": str(ALIGNMENT)}
    assert any("hdf5:* settings had no effect" in w for w in report["warnings"])


@pytest.mark.mpi
def test_each_open_records_its_ranks_bytes_and_times(run_app, programs, tmp_path):
    data = tmp_path / "out.dat"
    run = run_app([str(programs["mpiio"]), str(data), str(MIB_PER_RANK), str(CHUNK_KIB)],
                  settings=RUN_HINTS)
    report = run.report()
    entry = only_file(report, "MPI_File_open")
    [opened] = entry["opens"]
    total = 2 * MIB_PER_RANK * MIB
    assert (opened["comm_size"], opened["ranks"], opened["closed"]) == (2, 2, True)
    assert opened["bytes_written"] == entry["bytes_written"] == total
    assert opened["bytes_read"] == entry["bytes_read"] == report["bytes_read"] == 0
    assert opened["write_calls"] == report["write_calls"]
    assert opened["ranks_writing"] == opened["ranks_writing_collectively"] == 2
    # romio_cb_write=disable: every rank writes its own part to the file.
    assert opened["ranks_writing_to_files_collectively"] == 2
    assert opened["hints_in_effect"] == entry["hints_in_effect"]
    # The calls lie inside the open, which lies inside the program's own open-to-close.
    assert 0 < opened["write_s"] <= opened["open_to_close_s"] == entry["open_s"]
    assert opened["open_to_close_s"] <= json.loads(run.stdout)["io_time_s"]


# --- parallel HDF5 program --------------------------------------------------------------


@pytest.mark.mpi
def test_hdf5_alignment_changes_the_layout_and_hints_reach_the_file(run_app, programs,
                                                                    tmp_path):
    path = tmp_path / "out.h5"
    run = run_app([str(programs["h5"]), str(path), str(DOUBLES_PER_RANK)],
                  settings=RUN_HINTS + f"hdf5:alignment={ALIGNMENT}\n")
    report = run.report()
    assert run.stdout.strip() == "ok"
    offset = dataset_offset(path)
    assert offset > 0 and offset % ALIGNMENT == 0
    # Read back from the open file's access list, as the kernels do.
    assert report["hdf5_settings_in_effect"]["alignment"] == ALIGNMENT
    assert report["mpi_library"].startswith("MPICH") and report["mpi_io"] is None
    # Both the create and the read-back open went through HDF5's MPI-IO driver with our
    # hints over the program's cb_buffer_size=1048576.
    for opened_by in ("H5Fcreate", "H5Fopen"):
        entry = only_file(report, opened_by)
        assert entry["path"] == str(path)
        assert entry["hints_in_effect"]["cb_buffer_size"] == "4194304"
        assert entry["hints_in_effect"]["romio_cb_write"] == "disable"
    assert report["warnings"] == []
    # The raw data plus HDF5's own metadata writes (a few KiB).
    data_bytes = 2 * DOUBLES_PER_RANK * 8
    assert data_bytes < report["bytes_written"] < data_bytes + 64 * 1024
    assert report["write_time_s"] > 0 and report["write_calls"] >= 2


@pytest.mark.mpi
def test_hdf5_opens_record_what_went_through_them(run_app, programs, tmp_path):
    path = tmp_path / "out.h5"
    report = run_app([str(programs["h5"]), str(path), str(DOUBLES_PER_RANK)],
                     settings=RUN_HINTS).report()
    data_bytes = 2 * DOUBLES_PER_RANK * 8
    [created] = only_file(report, "H5Fcreate")["opens"]
    [reopened] = only_file(report, "H5Fopen")["opens"]
    assert created["comm_size"] == reopened["comm_size"] == 2
    assert data_bytes < created["bytes_written"] == report["bytes_written"]
    assert reopened["bytes_written"] == 0 and reopened["bytes_read"] >= data_bytes
    assert report["bytes_read"] == created["bytes_read"] + reopened["bytes_read"]
    assert 0 < reopened["read_s"] <= reopened["open_to_close_s"]
    assert 0 < created["write_s"] <= created["open_to_close_s"]


H5PY_PROGRAM = """
import sys
import numpy as np
import h5py
from mpi4py import MPI
comm = MPI.COMM_WORLD
n = int(sys.argv[2])
mine = slice(comm.rank * n, (comm.rank + 1) * n)
with h5py.File(sys.argv[1], "w", driver="mpio", comm=comm) as f:
    data = f.create_dataset("data", (comm.size * n,), dtype="f8")
    data[mine] = np.arange(comm.size * n, dtype="f8")[mine]
print("ok")
"""


@pytest.mark.mpi
def test_hdf5_settings_reach_h5py_which_loads_hdf5_privately(run_app, tmp_path):
    # Python loads h5py's extensions (and through them HDF5) with RTLD_LOCAL: the real
    # H5Fcreate is not in the global scope, and the library must find it from its caller.
    script = tmp_path / "h5py_write.py"
    script.write_text(H5PY_PROGRAM)
    path = tmp_path / "out.h5"
    run = run_app([sys.executable, str(script), str(path), str(DOUBLES_PER_RANK)],
                  settings=RUN_HINTS + f"hdf5:alignment={ALIGNMENT}\n")
    report = run.report()
    assert run.stdout.replace("\n", "") == "okok"  # one per rank, lines may interleave
    assert dataset_offset(path) % ALIGNMENT == 0
    assert only_file(report, "H5Fcreate")["hints_in_effect"]["cb_buffer_size"] == "4194304"
    assert report["warnings"] == []


def test_the_library_does_not_depend_on_hdf5(preload_lib):
    # A program without HDF5 must not load it (and its dozens of dependencies) just
    # because the library is preloaded: HDF5 functions are looked up when first needed.
    done = subprocess.run(["readelf", "-d", str(preload_lib)], capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=True)
    needed = [line for line in done.stdout.splitlines() if "(NEEDED)" in line]
    assert any("libmpi" in line for line in needed), needed
    assert not any("hdf5" in line for line in needed), needed


@pytest.mark.mpi
def test_hdf5_without_settings_keeps_the_default_layout(run_app, programs, tmp_path):
    path = tmp_path / "out.h5"
    run = run_app([str(programs["h5"]), str(path), str(DOUBLES_PER_RANK)])
    report = run.report()
    assert run.stdout.strip() == "ok"
    assert dataset_offset(path) % ALIGNMENT != 0
    assert report["settings_applied"] == {}
    assert only_file(report, "H5Fcreate")["hints_in_effect"]["cb_buffer_size"] == "1048576"
    assert report["bytes_written"] > 2 * DOUBLES_PER_RANK * 8


@pytest.mark.mpi
def test_hdf5_metadata_settings_are_applied_and_the_data_survives(run_app, programs,
                                                                  tmp_path):
    path = tmp_path / "out.h5"
    settings = ("hdf5:alignment=65536\nhdf5:alignment_threshold=1048576\n"
                "hdf5:meta_block_size=1048576\nhdf5:sieve_buf_size=262144\n"
                "hdf5:coll_metadata=yes\n")
    run = run_app([str(programs["h5"]), str(path), str(DOUBLES_PER_RANK)], settings=settings)
    report = run.report()
    assert run.stdout.strip() == "ok"
    assert report["warnings"] == []
    assert report["settings_applied"] == {
        "hdf5:alignment": "65536", "hdf5:alignment_threshold": "1048576",
        "hdf5:meta_block_size": "1048576", "hdf5:sieve_buf_size": "262144",
        "hdf5:coll_metadata": "yes"}
    # The 2 MiB dataset is above the threshold, so it is aligned to 64 KiB.
    assert dataset_offset(path) % 65536 == 0


@pytest.mark.mpi
def test_statically_linked_hdf5_still_gets_the_mpiio_hints(run_app, programs, tmp_path):
    # Its H5Fcreate cannot be interposed, but HDF5's MPI_File_open goes through the MPI
    # library, so the hints still reach the file; the HDF5 settings are flagged as unused.
    path = tmp_path / "out.h5"
    run = run_app([str(programs["h5_static"]), str(path), str(DOUBLES_PER_RANK)],
                  settings=RUN_HINTS + f"hdf5:alignment={ALIGNMENT}\n")
    report = run.report()
    assert run.stdout.strip() == "ok"
    assert only_file(report, "MPI_File_open")["hints_in_effect"]["cb_buffer_size"] == "4194304"
    assert dataset_offset(path) % ALIGNMENT != 0
    assert any("hdf5:* settings had no effect" in w for w in report["warnings"])


# --- processes that open nothing through MPI-IO stay silent ----------------------------

NOISY_SETTINGS = RUN_HINTS + f"hdf5:alignment={ALIGNMENT}\nhdf5:coll_metadata=yes\nbogus=1\n"


def test_a_serial_hdf5_tool_under_the_library_prints_nothing(preload_lib, tmp_path):
    # h5dump links the serial HDF5, which lacks the collective-metadata functions: the
    # settings cannot be applied, but a job script's h5dump must not say so.
    path = tmp_path / "small.h5"
    with h5py.File(path, "w") as f:
        f["x"] = np.arange(4)
    settings = tmp_path / "settings.txt"
    settings.write_text(NOISY_SETTINGS)
    env = {**os.environ, "LD_PRELOAD": str(preload_lib), SETTINGS_ENV: str(settings),
           OUT_ENV: str(tmp_path / "preload.json")}
    done = subprocess.run(["h5dump", "-H", str(path)], env=env, capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0 and "DATASET \"x\"" in done.stdout
    assert done.stderr == ""
    assert not (tmp_path / "preload.json").exists()  # not an MPI process: no report


@pytest.mark.mpi
def test_an_mpi_program_that_opens_no_file_keeps_its_warnings_in_the_report(run_app,
                                                                            tmp_path):
    script = tmp_path / "no_io.py"
    script.write_text("from mpi4py import MPI\nMPI.COMM_WORLD.Barrier()\n")
    run = run_app([sys.executable, str(script)], settings=NOISY_SETTINGS)
    report = run.report()
    assert run.stderr == ""
    assert report["files"] == [] and report["bytes_written"] == 0
    assert any("unknown setting 'bogus'" in w for w in report["warnings"])
    assert any("hdf5:* settings had no effect" in w for w in report["warnings"])


# --- building and locating the library ---------------------------------------------------


def test_library_path_is_per_source_in_the_cache_or_explicit(monkeypatch, tmp_path):
    monkeypatch.delenv(LIBRARY_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    path = library_path()
    assert path.parent == tmp_path / "cache" / "iotune"
    assert path.name.startswith("libiotune_preload-") and path.suffix == ".so"
    assert len(path.stem.rsplit("-", 1)[1]) == 16
    monkeypatch.setenv(LIBRARY_ENV, str(tmp_path / "lib.so"))
    assert library_path() == tmp_path / "lib.so"


def test_a_changed_source_gets_a_library_of_its_own(monkeypatch, tmp_path):
    # The cached library is named by the hash of its source: an edited iotune_preload.c is
    # compiled anew, never served by the library of the version before.
    import iotune.preload as preload

    monkeypatch.delenv(LIBRARY_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shipped = library_path()
    edited = tmp_path / "iotune_preload.c"
    edited.write_bytes(source_path().read_bytes() + b"/* edited */\n")
    monkeypatch.setattr(preload, "source_path", lambda: edited)
    assert library_path() != shipped and library_path().parent == shipped.parent


def test_the_compiler_is_the_wrapper_of_the_mpi_mpiexec_starts(monkeypatch, tmp_path,
                                                                fake_program):
    # Every build (a tune's runs, python -m iotune.preload, the job lines) gets Open MPI's
    # wrapper when mpiexec is Open MPI's; IOTUNE_PRELOAD_CC still overrides it.
    fake_program("mpiexec", "echo 'mpiexec (Open MPI) 4.1.4'")
    fake_program("h5pcc.openmpi", "exit 0")
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv(COMPILER_ENV, raising=False)
    detect_mpi_flavour.cache_clear()
    try:
        assert compiler() == "h5pcc.openmpi"
        assert compiler("mpich") == "h5pcc"
        monkeypatch.setenv(COMPILER_ENV, "my-h5pcc")
        assert compiler() == "my-h5pcc"
    finally:
        detect_mpi_flavour.cache_clear()  # later callers detect the real mpiexec


def test_missing_compiler_is_a_config_error(monkeypatch, tmp_path):
    monkeypatch.setenv(LIBRARY_ENV, str(tmp_path / "lib.so"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ConfigError, match="compiler 'h5pcc' not found"):
        build_library()


def test_compiler_failure_names_the_compiler_and_its_last_line(monkeypatch, tmp_path,
                                                               fake_program):
    fake_program("h5pcc", "echo 'warning: something' >&2; echo 'fatal: no mpi.h' >&2; exit 1")
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv(LIBRARY_ENV, str(tmp_path / "lib" / "lib.so"))
    with pytest.raises(ConfigError, match=r"h5pcc failed .*: fatal: no mpi.h$"):
        build_library()
    assert not (tmp_path / "lib" / "lib.so").exists()
    assert list((tmp_path / "lib").iterdir()) == []  # the scratch directory is gone


def test_a_current_library_is_not_rebuilt_unless_forced(monkeypatch, tmp_path, fake_program):
    calls = tmp_path / "calls"
    # A stand-in compiler: records the call and writes the output file (after -o).
    fake_program("h5pcc", f'echo x >> {calls}; while [ "$1" != -o ]; do shift; done; '
                          'echo built > "$2"')
    monkeypatch.setenv("PATH", str(tmp_path) + os.pathsep + os.environ["PATH"])
    monkeypatch.setenv(LIBRARY_ENV, str(tmp_path / "lib.so"))
    assert build_library() == tmp_path / "lib.so"
    assert build_library() == tmp_path / "lib.so"
    assert calls.read_text().count("x") == 1
    build_library(force=True)
    assert calls.read_text().count("x") == 2
    # Older than the source: stale.
    os.utime(tmp_path / "lib.so", (0, 0))
    build_library()
    assert calls.read_text().count("x") == 3
    assert source_path().is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["calls", "h5pcc", "lib.so"]


def test_settings_text_writes_the_library_format():
    text = settings_text({"cb_buffer_size": 4194304, "romio_cb_write": "disable"},
                         {"alignment": 1048576, "coll_metadata": True})
    assert text == ("hint:cb_buffer_size=4194304\nhint:romio_cb_write=disable\n"
                    "hdf5:alignment=1048576\nhdf5:coll_metadata=yes\n")
    assert settings_text() == ""
    with pytest.raises(ConfigError, match="unknown HDF5 setting 'stripe'"):
        settings_text(hdf5={"stripe": 1})
    with pytest.raises(ConfigError, match="not a non-negative number"):
        settings_text(hdf5={"alignment": "1M"})
    with pytest.raises(ConfigError, match="cannot be written"):
        settings_text({"a=b": 1})


def test_library_compiles_without_warnings(tmp_path):
    command = [*build_command(tmp_path / "lib.so"), "-Wextra", "-Werror"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path,
                          timeout=TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""
