"""``iotune knowledge show`` and ``check``, and what a damaged or foreign file gives."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import duckdb
import pytest

from iotune.errors import DataError
from iotune.knowledge.build import build
from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor
from iotune.knowledge.query import priors_for
from tests.cli_result import error_line, invoke
from tests.knowledge.landscapes import write_landscape


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("kb")
    for i in range(2):
        write_landscape(root / "data", f"c{i}", {"default": [2.0, 2.1],
                                                 "stripe_count=8": [1.0, 1.1]},
                        bytes_per_rank=(i + 1) * 2**20)
    write_landscape(root / "data", "s0", {"default": [2.0], "cb_nodes=2": [1.9]},
                    system="summit", file_system="gpfs", operation="read")
    build([root / "data"], root / "site.kb")
    return root / "site.kb"


def test_show(base: Path) -> None:
    result = invoke("knowledge", "show", str(base))
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("knowledge site.kb@") and "10 runs of 3 workloads" in lines[0]
    text = result.output
    for title in ("Systems", "Workloads", "Sources", "What wins where (measured runs)"):
        assert title in lines
    assert any(line.split()[:5] == ["cori", "lustre", "write", "hdf5", "stripe_count=8"]
               and line.split()[5:] == ["2", "2", "1.95x"] for line in lines), text
    assert any(line.split()[:5] == ["summit", "gpfs", "read", "hdf5", "(default:"]
               for line in lines), text
    only = invoke("knowledge", "show", str(base), "--system", "summit")
    assert "summit" in only.output and "cori" not in only.output.split("\n", 1)[1]
    assert "2 runs of 1 workloads on summit" in only.output


def test_check_ok(base: Path) -> None:
    result = invoke("knowledge", "check", str(base))
    assert result.exit_code == 0, result.output
    assert result.output.startswith("ok: site.kb@") and "10 runs, 3 workloads" in result.output


def test_check_lists_each_problem(base: Path, tmp_path: Path) -> None:
    bad = tmp_path / "bad.kb"
    shutil.copyfile(base, bad)
    con = duckdb.connect(str(bad))
    con.execute("INSERT INTO runs VALUES (1, 1, 1, 'measured', -1.0)")
    con.execute("INSERT INTO runs VALUES (1, 99, 1, 'guessed', 1.0)")
    con.execute("UPDATE configurations SET is_default = NOT is_default WHERE config_id = 1")
    con.close()
    result = invoke("knowledge", "check", str(bad))
    assert result.exit_code == 1
    lines = result.output.splitlines()
    for problem in ("runs whose time_s is not a finite positive number of seconds (1 row(s))",
                    "runs of a workload not in workloads (1 row(s))",
                    "runs whose provenance is not one of measured, replayed, simulated",
                    "sources whose runs count differs from their rows in runs",
                    "configurations marked default whose settings are not empty"):
        assert any(problem in line for line in lines), result.output
    assert not any(line.startswith("ok:") for line in lines)


def _damaged(base: Path, tmp_path: Path) -> dict[str, Path]:
    files = {}
    truncated = tmp_path / "truncated.kb"
    truncated.write_bytes(base.read_bytes()[:20000])
    files["truncated"] = truncated
    flipped = bytearray(base.read_bytes())
    for i in range(5000, len(flipped), 997):
        flipped[i] ^= 0xFF
    (tmp_path / "flipped.kb").write_bytes(bytes(flipped))
    files["flipped"] = tmp_path / "flipped.kb"
    foreign = tmp_path / "foreign.kb"
    con = duckdb.connect(str(foreign))
    con.execute("CREATE TABLE meta (x INTEGER)")
    con.close()
    files["foreign"] = foreign
    lite = tmp_path / "lite.kb"
    sqlite3.connect(lite).execute("CREATE TABLE meta (key TEXT)").connection.commit()
    files["sqlite"] = lite
    (tmp_path / "text.kb").write_text("format: iotune-knowledge\n")
    files["text"] = tmp_path / "text.kb"
    files["directory"] = tmp_path
    files["missing"] = tmp_path / "nothere.kb"
    viewed = tmp_path / "viewed.kb"
    shutil.copyfile(base, viewed)
    con = duckdb.connect(str(viewed))
    con.execute("ALTER TABLE runs RENAME TO runs_data")
    con.execute("CREATE VIEW runs AS SELECT * FROM runs_data")
    con.close()
    files["view"] = viewed
    return files


def test_a_damaged_or_foreign_file_is_one_line(base: Path, tmp_path: Path) -> None:
    system, workload = SystemKey("cori", "lustre"), WorkloadDescriptor(operation="write")
    for kind, path in _damaged(base, tmp_path).items():
        for command in ("check", "show"):
            result = invoke("knowledge", command, str(path))
            assert result.exit_code == DataError.exit_code, (kind, result.output)
            line = error_line(result)
            assert "knowledge base" in line, (kind, line)
        with pytest.raises(DataError):
            priors_for(path, system, workload)
    view = error_line(invoke("knowledge", "check", str(tmp_path / "viewed.kb")))
    assert "table runs is a view" in view
