"""What run and tune print about settings not in effect or unverified, from records."""

from __future__ import annotations

from iotune.cli.run_commands import phase_times
from iotune.cli.verdicts import run_verdicts, tune_verdicts
from iotune.execution.linkage import HDF5_BANNER
from iotune.store.records import PhaseTimes


def program_record(settings, *, command=("mpiexec", "-n", "2", "./app"), preloaded=True,
                   hdf5=None, hints=None, effects=None):
    """A measured run of a user's program, as the command kernel records it."""
    result = {"measure": "regex", "times_s": {"total": 1.0, "write": 0.25},
              "preloaded": preloaded, "hints_in_effect": hints or {},
              "hdf5_settings_in_effect": hdf5 or {},
              "preload": {"files": [], "warnings": []} if preloaded else None}
    if effects is not None:
        result["settings_effect"] = effects
    return {"status": "ok", "provenance": "measured", "backend": "mpi", "kernel": "command",
            "command": list(command), "settings": settings, "result": result}


def test_an_hdf5_setting_a_static_hdf5_kept_out_is_said_with_the_fix(tmp_path):
    program = tmp_path / "ior"
    program.write_bytes(b"\x7fELF" + HDF5_BANNER)
    record = program_record({"alignment": 2**20}, command=("mpiexec", "-n", "2", str(program)))
    line = run_verdicts(record)["unverified: alignment"]
    assert line.startswith(f"alignment=1MiB: unverified; {program} links HDF5 statically")
    assert "link HDF5 shared" in line
    # A program that opened no HDF5 file through the library: either reason is given.
    line = run_verdicts(program_record({"alignment": 2**20}))["unverified: alignment"]
    assert "saw no H5Fcreate/H5Fopen" in line and "links it statically" in line


def test_each_reason_for_an_unverified_setting():
    without = program_record({"cb_nodes": 2}, preloaded=False)
    assert "without the preload library" in run_verdicts(without)["unverified: cb_nodes"]
    no_file = program_record({"cb_nodes": 2})
    assert "no file's MPI-IO hints" in run_verdicts(no_file)["unverified: cb_nodes"]


def test_what_took_effect_is_not_listed_and_what_differs_is():
    record = program_record({"cb_nodes": 2, "cb_buffer_size": 4 * 2**20},
                            hints={"cb_nodes": "1", "cb_buffer_size": "4194304"})
    lines = run_verdicts(record)
    assert list(lines) == ["not in effect: cb_nodes"]
    assert lines["not in effect: cb_nodes"].startswith("cb_nodes=2: in effect 1; ")


def test_simulated_runs_have_no_verdicts_to_show():
    record = {**program_record({"cb_nodes": 2}), "provenance": "simulated", "backend": "sim"}
    assert run_verdicts(record) == {}
    assert tune_verdicts([record]) == []


def test_a_tune_counts_the_runs_of_each_verdict():
    differs = {"cb_nodes": {"status": "differs", "requested": "2", "in_effect": "1"}}
    fine = {"cb_nodes": {"status": "in_effect", "requested": "1", "in_effect": "1"}}
    records = [program_record({"cb_nodes": 2}, effects=differs) for _ in range(3)]
    records.append(program_record({"cb_nodes": 1}, effects=fine))
    (line,) = tune_verdicts(records)
    assert line.startswith("cb_nodes=2: in effect 1 in 3 of 3 runs that asked it; ")


def test_run_names_only_the_phases_it_measured():
    kernel = PhaseTimes.from_json({"total": 1.0, "open": 0.1, "write": 0.8, "close": 0.1})
    assert phase_times(kernel, {}) == {"open/write/close_s": kernel.text()}
    program = PhaseTimes.from_json({"total": 1.0, "write": 0.25})
    assert phase_times(program, {"preloaded": True}) == {"mpi_io_write_s": 0.25}
    assert phase_times(PhaseTimes.from_json({"total": 1.0}), {"preloaded": False}) == {}
