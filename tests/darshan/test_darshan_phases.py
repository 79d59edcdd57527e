"""I/O phases from DXT traces: sample logs, text traces made here, and bad traces."""

from __future__ import annotations

import pandas as pd
import pytest
from darshan_helpers import DXT, IOR_HDF5, VPIC, cached_log, sample_log

from iotune.darshan.logfile import DXT_COLUMNS
from iotune.darshan.phases import find_phases
from iotune.darshan.trace import read_trace, write_text_trace
from iotune.errors import DataError

KiB, MiB = 2**10, 2**20


def _ops(rows):
    return pd.DataFrame(rows, columns=list(DXT_COLUMNS))


def _two_phase_trace():
    """2 ranks write 8 x 1 MiB each to a shared file, pause, then read 16 x 4 KiB each."""
    rows = []
    for rank in range(2):
        for i in range(8):
            start = 0.5 + i * 0.01 + rank * 0.001
            rows.append(("DXT_POSIX", 11, rank, "write", (rank * 8 + i) * MiB, MiB, start,
                         start + 0.009))
        for i in range(16):
            start = 5.0 + i * 0.002
            rows.append(("DXT_POSIX", 11, rank, "read", rank * 64 * KiB + i * 2 * 4 * KiB,
                         4 * KiB, start, start + 0.001))
    return _ops(rows)


def test_phases_of_the_ior_hdf5_log_follow_its_trace():
    log = cached_log(IOR_HDF5)
    mpiio = log.dxt[log.dxt["module"] == "DXT_MPIIO"]
    phases = find_phases(mpiio)
    big = [p for p in phases if p.request_size == 256 * KiB]
    assert [p.op for p in big] == ["write", "read"]
    for phase in big:
        ops = mpiio[(mpiio["op"] == phase.op) & (mpiio["length"] == phase.request_size)]
        assert phase.operations == len(ops) and phase.weight == ops["length"].sum()
        assert phase.ranks == ops["rank"].nunique() == log.nprocs
        assert phase.start == ops["start"].min() and phase.end == ops["end"].max()
        assert phase.pattern == "contiguous" and phase.shared and phase.relevant
    assert sum(p.operations for p in phases) == len(mpiio)
    assert [p.index for p in phases] == list(range(len(phases)))
    assert [p.start for p in phases] == sorted(p.start for p in phases)


def test_text_trace_round_trip_and_phase_model(tmp_path):
    path = tmp_path / "trace.txt"
    write_text_trace(path, _two_phase_trace(), {11: "/scratch/app/out.dat"})
    trace = read_trace(path)
    assert trace.nprocs == 2 and trace.names[11] == "/scratch/app/out.dat"
    write, read = find_phases(trace.select("auto"))
    assert (write.op, write.request_size, write.ranks, write.per_rank) == ("write", MiB, 2, 8)
    assert write.weight == 16 * MiB and write.pattern == "contiguous" and write.shared
    assert (read.op, read.request_size, read.per_rank, read.pattern) == \
        ("read", 4 * KiB, 16, "strided")
    assert write.duration == pytest.approx(0.5 + 7 * 0.01 + 0.001 + 0.009 - 0.5, abs=2e-4)


def test_a_pause_longer_than_the_gap_splits_a_phase():
    rows = [("DXT_POSIX", 1, 0, "write", i * 100, 100, t, t + 0.001)
            for i, t in enumerate([0.0, 0.002, 0.004, 1.0, 1.002])]
    assert len(find_phases(_ops(rows), gap=0.01)) == 2
    assert len(find_phases(_ops(rows), gap=2.0)) == 1


def test_access_patterns_of_runs():
    def pattern(offsets):
        rows = [("DXT_POSIX", 1, 0, "write", o, 10, i * 0.001, i * 0.001 + 0.0005)
                for i, o in enumerate(offsets)]
        return find_phases(_ops(rows))[0].pattern

    assert pattern([0, 10, 20, 30]) == "contiguous"
    assert pattern([0, 100, 200, 300]) == "strided"
    assert pattern([0, 10, 50, 300]) == "sequential"
    assert pattern([300, 10, 50, 0]) == "random"
    assert pattern([7]) == "single"


def test_per_process_files_and_relevance():
    rows = [("DXT_POSIX", 100 + r, r, "write", i * 8, 8, i * 0.001, i * 0.001 + 0.0005)
            for r in range(3) for i in range(50)]
    rows.append(("DXT_POSIX", 100, 0, "read", 0, 1, 9.0, 9.000001))
    big, tiny = find_phases(_ops(rows))
    assert not big.shared and big.ranks == 3 and big.files == 3 and big.relevant
    assert not tiny.relevant


def test_dxt_log_phases_cover_every_traced_operation():
    log = cached_log(DXT)
    phases = find_phases(log.dxt)
    assert sum(p.operations for p in phases) == len(log.dxt)
    assert sum(p.weight for p in phases) == log.dxt["length"].sum()
    assert any(p.relevant for p in phases) and not all(p.relevant for p in phases)


def test_phases_command_table_and_json(run_cli):
    result = run_cli("phases", sample_log(IOR_HDF5), "--module", "posix")
    assert result.exit_code == 0, result.output
    assert "occurrences) in DXT_POSIX" in result.stdout and "contiguous" in result.stdout
    result = run_cli("phases", sample_log(IOR_HDF5), "--format", "json", "--all")
    assert result.exit_code == 0
    import json

    data = json.loads(result.stdout)
    assert data["module"] == "DXT_MPIIO" and len(data["phases"]) == data["phases_total"]


@pytest.mark.parametrize(("make", "message"), [
    (lambda p: sample_log(VPIC), r"no DXT_POSIX or DXT_MPIIO records; phases need a DXT trace"),
    (lambda p: p / "missing.darshan", r"missing\.darshan: no such file"),
    (lambda p: _text(p, "# DXT, file_id: 5, file_name: /a\n X_POSIX 0 write 0 zero 8 0.1 0.2\n"),
     r"trace\.txt:2: expected integers for rank, offset and length"),
    (lambda p: _text(p, " X_POSIX 0 write 0 0 8 0.1 0.2\n# DXT, file_id: 5, file_name: /a\n"),
     r"trace\.txt:1: trace line before any '# DXT, file_id:' header"),
    (lambda p: _text(p, "# DXT, file_id: 5, file_name: /a\n X_POSIX 0 seek 0 0 8 0.1 0.2\n"),
     r"trace\.txt:2: operation 'seek' is not write or read"),
    (lambda p: _text(p, "# DXT, file_id: 5, file_name: /a\n# nothing traced\n"),
     r"trace\.txt: no traced operations"),
])
def test_bad_traces_are_one_line_errors(run_cli, tmp_path, make, message):
    path = make(tmp_path)
    with pytest.raises(DataError, match=message):
        read_trace(path)
    result = run_cli("phases", path)
    assert result.exit_code == 3
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("iotune: error: ")


def test_asking_for_an_untraced_layer(run_cli, tmp_path):
    trace = tmp_path / "posix.txt"
    write_text_trace(trace, _two_phase_trace(), {11: "/a"})
    result = run_cli("phases", trace, "--module", "mpiio")
    assert result.exit_code == 3
    assert "no DXT_MPIIO records (traced modules: DXT_POSIX)" in result.stderr


def _text(tmp_path, body):
    path = tmp_path / "trace.txt"
    path.write_text(body)
    return path


def _phased_app():
    """benchmarks/programs/phased_app.py as a module (it imports mpi4py only in main)."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "programs" / "phased_app.py"
    spec = importlib.util.spec_from_file_location("phased_app", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("phased_app", module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_benchmark_application_traces_in_the_dxt_text_layout(tmp_path):
    app = _phased_app()
    phases = [app.parse_phase("write:1048576:2:shared"), app.parse_phase("read:4096:3:fpp")]
    gathered = [[(0, "write", r * 2 * MiB + i * MiB, MiB, 0.1 + i * 0.01, 0.109 + i * 0.01)
                 for i in range(2)]
                + [(1, "read", i * 4096, 4096, 1.0 + i * 0.001, 1.0005 + i * 0.001)
                   for i in range(3)] for r in range(2)]
    trace = tmp_path / "trace.txt"
    app.write_trace(trace, tmp_path, phases, gathered)
    ops = read_trace(trace).select("posix")
    assert len(ops) == 10 and set(ops["module"]) == {"DXT_POSIX"}
    found = find_phases(ops)
    assert [(p.op, p.request_size, p.shared, p.ranks, p.weight, p.pattern) for p in found] == [
        ("write", MiB, True, 2, 4 * MiB, "contiguous"),
        ("read", 4096, False, 2, 6 * 4096, "contiguous")]
    assert found[0].duration == pytest.approx(0.119 - 0.1)
    assert found[1].duration == pytest.approx(1.0025 - 1.0)
    with pytest.raises(Exception, match="expected op:request_size:requests"):
        app.parse_phase("copy:1:1")
