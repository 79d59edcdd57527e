"""Mendez et al.'s phase model in full: repeated phases weighted by their repetitions, and
each phase's access mode (collective or independent, blocking or non-blocking)."""

from __future__ import annotations

import pandas as pd
import pytest
from darshan_helpers import IOR_HDF5, sample_log

from iotune.backends.base import RunRequest
from iotune.darshan.access import call_mode, counters_mode, label_access
from iotune.darshan.characterize import PROGRAM, plan
from iotune.darshan.estimate import estimate
from iotune.darshan.logfile import DXT_COLUMNS
from iotune.darshan.phases import group_repetitions, span_text, trace_phases
from iotune.darshan.trace import read_trace, write_text_trace

KiB, MiB = 2**10, 2**20


def _checkpoints(steps=3, calls=("MPI_File_write_at_all",)):
    """2 ranks write 4 x 1 MiB each to a shared file per step (a pause of 1 s between
    steps), the call of request i being calls[i % len(calls)]; then one read phase."""
    rows = []
    for step in range(steps):
        for rank in range(2):
            for i in range(4):
                start = step * 1.0 + i * 0.01
                rows.append(("DXT_MPIIO", 7, rank, "write", (rank * 4 + i) * MiB, MiB, start,
                             start + 0.008, calls[i % len(calls)]))
    for rank in range(2):
        for i in range(8):
            start = 10.0 + i * 0.002
            rows.append(("DXT_MPIIO", 7, rank, "read", (rank * 8 + i) * 64 * KiB, 64 * KiB,
                         start, start + 0.001, "MPI_File_iread_at"))
    return pd.DataFrame(rows, columns=[*DXT_COLUMNS, "call"])


def test_mpi_io_calls_name_their_access_mode():
    assert call_mode("MPI_File_write_at_all") == ("collective", "blocking")
    assert call_mode("MPI_File_iwrite_at_all") == ("collective", "non-blocking")
    assert call_mode("MPI_File_write_all_begin") == ("collective", "blocking")
    assert call_mode("MPI_File_read_ordered") == ("collective", "blocking")
    assert call_mode("MPI_File_iread_at") == ("independent", "non-blocking")
    assert call_mode("MPI_File_write") == ("independent", "blocking")
    assert call_mode("") == ("unknown", "unknown")


def test_file_counters_give_the_mode_of_each_operation_kind():
    counters = {"MPIIO_COLL_WRITES": 8.0, "MPIIO_INDEP_READS": 3.0, "MPIIO_NB_READS": 2.0}
    assert counters_mode(counters, "write") == ("collective", "blocking")
    assert counters_mode(counters, "read") == ("independent", "mixed")
    assert counters_mode({"MPIIO_SPLIT_WRITES": 1.0, "MPIIO_INDEP_WRITES": 1.0}, "write") == \
        ("mixed", "blocking")
    assert counters_mode({}, "read") == ("unknown", "unknown")


def test_repeated_phases_are_one_phase_weighted_by_their_repetitions(tmp_path):
    path = tmp_path / "trace.txt"
    write_text_trace(path, _checkpoints(), {7: "/scratch/ckpt.dat"})
    found = trace_phases(path)
    assert len(found.occurrences) == 4 and len(found.phases) == 2
    write, read = found.phases
    assert (write.op, write.request_size, write.repetitions, write.ranks) == \
        ("write", MiB, 3, 2)
    assert write.weight == 3 * 2 * 4 * MiB  # np x rep x rs, over the requests of a step
    assert write.per_rank == 4 and write.occurrences == (0, 1, 2)
    each = [p.duration for p in found.occurrences[:3]]
    assert write.duration == pytest.approx(sum(each))  # the pauses between steps excluded
    assert write.duration < write.end - write.start
    assert (write.collective, write.blocking) == ("collective", "blocking")
    assert (read.collective, read.blocking, read.repetitions) == \
        ("independent", "non-blocking", 1)
    assert write.key() == "write 1048576 shared collective blocking"
    row = found.document()["phases"][0]
    assert row["reps"] == 3 and row["occurrences"] == "0-2" and row["access"] == "collective"


def test_a_different_access_mode_is_a_different_phase(tmp_path):
    path = tmp_path / "trace.txt"
    ops = _checkpoints(steps=1, calls=("MPI_File_write_at_all", "MPI_File_write_at"))
    write_text_trace(path, ops, {7: "/scratch/ckpt.dat"})
    modes = sorted((p.collective, p.operations) for p in trace_phases(path).phases
                   if p.op == "write")
    assert modes == [("collective", 4), ("independent", 4)]


def test_grouping_keeps_different_phases_apart():
    ops = label_access(_checkpoints().drop(columns="call"), {})
    from iotune.darshan.phases import find_phases

    occurrences = find_phases(ops)
    assert {(p.collective, p.blocking) for p in occurrences} == {("unknown", "unknown")}
    grouped = group_repetitions(occurrences)
    assert [p.repetitions for p in grouped] == [3, 1]
    assert sum(p.weight for p in grouped) == sum(p.weight for p in occurrences)
    assert [p.index for p in grouped] == [0, 1]
    assert span_text((0, 2, 3, 4, 9)) == "0,2-4,9"


def test_a_binary_log_takes_the_mode_from_its_counters():
    found = trace_phases(sample_log(IOR_HDF5))
    # the IOR run's MPI-IO counters: 23 independent writes, 36 independent reads, no
    # collective or non-blocking ones (iotune profile)
    assert {(p.collective, p.blocking) for p in found.phases} == {("independent", "blocking")}
    posix = trace_phases(sample_log(IOR_HDF5), "posix")
    assert {(p.collective, p.blocking) for p in posix.phases} == {("n/a", "n/a")}


def test_characterisation_runs_the_phase_mode_and_one_repetition(tmp_path):
    path = tmp_path / "trace.txt"
    write_text_trace(path, _checkpoints(), {7: "/scratch/ckpt.dat"})
    write, read = plan(trace_phases(path).phases, "mpiio")
    assert write.key == "write 1048576 shared collective blocking"
    assert write.params["collective"] and not write.params["nonblocking"]
    assert write.params["block_size"] == 4 * MiB  # one repetition: 4 requests per rank
    assert read.params["nonblocking"] and not read.params["collective"]
    (posix_write, _) = plan(trace_phases(path).phases, "posix")
    assert not posix_write.params["collective"]  # POSIX has no collective calls


def test_the_estimate_weights_a_repeated_phase_by_its_repetitions(tmp_path):
    path = tmp_path / "trace.txt"
    write_text_trace(path, _checkpoints(), {7: "/scratch/ckpt.dat"})
    phases = trace_phases(path).phases
    patterns = [
        {"key": "write 1048576 shared independent blocking", "op": "write",
         "request_size": MiB, "shared": True, "bandwidth_bytes_s": 1.0 * MiB},
        {"key": "write 2097152 shared collective blocking", "op": "write",
         "request_size": 2 * MiB, "shared": True, "bandwidth_bytes_s": 8.0 * MiB},
        {"key": "read 65536 shared independent non-blocking", "op": "read",
         "request_size": 64 * KiB, "shared": True, "bandwidth_bytes_s": 4.0 * MiB},
    ]
    write, read = estimate(phases, patterns)["phases"]
    # no exact pattern: the nearest of the same operation, sharing and access mode wins
    # over the exact request size measured independently
    assert write["bandwidth_from"] == "nearest (write 2097152 shared collective blocking)"
    assert write["estimated_s"] == pytest.approx(24 * MiB / (8.0 * MiB))
    assert write["reps"] == 3 and write["measured_s"] == pytest.approx(phases[0].duration)
    assert read["bandwidth_from"] == "exact" and read["access"] == "independent"


def test_phases_command_shows_repetitions_and_mode(run_cli, tmp_path):
    path = tmp_path / "trace.txt"
    write_text_trace(path, _checkpoints(), {7: "/scratch/ckpt.dat"})
    assert "MPI_File_iread_at" in path.read_text()
    assert read_trace(path).ops["call"].str.startswith("MPI_File_").all()
    result = run_cli("phases", path)
    assert result.exit_code == 0, result.output
    assert "2 phases (4 occurrences) in DXT_MPIIO" in result.stdout
    header, _, first = result.stdout.splitlines()[1:4]
    assert header.split()[5:9] == ["access", "blocking", "ranks", "reps"]
    assert first.split()[5:9] == ["collective", "blocking", "2", "3"]


@pytest.mark.mpi
@pytest.mark.parametrize("op", ["write", "read"])
def test_the_pattern_program_runs_collective_non_blocking_requests(pattern_backend, op):
    backend = pattern_backend
    params = {"op": op, "api": "mpiio", "transfer_size": MiB, "block_size": 2 * MiB,
              "file_per_process": False, "direct": False, "collective": True,
              "nonblocking": True}
    record = backend.measure(RunRequest(PROGRAM, 2, {}, params))
    assert record["status"] == "ok", record["error"]
    result = record["result"]
    assert result["collective"] and result["nonblocking"] and result["ranks"] == 2
    assert result[f"bytes_{'written' if op == 'write' else 'read'}"] == 4 * MiB
    assert result["times_s"][op] > 0
    assert record["command"][-4:] == ["--collective", "yes", "--nonblocking", "yes"]
