"""Building a knowledge base: from CSV landscapes, stores and journals, incrementally,
with provenance kept apart, nothing but data stored, and the file replaced atomically."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import yaml

from iotune.errors import DataError
from iotune.knowledge.build import build
from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor
from iotune.knowledge.query import priors_for
from iotune.knowledge.schema import open_base
from iotune.store import Store
from tests.cli_result import invoke
from tests.knowledge.landscapes import write_landscape

CORI = SystemKey("cori", "lustre")
WRITE = WorkloadDescriptor(operation="write", layer="hdf5", ranks=512,
                           bytes_per_rank=16 * 2**20)


def _rows(base: Path, sql: str) -> list[tuple]:
    with open_base(base) as con:
        return con.execute(sql).fetchall()


def _landscapes(folder: Path) -> None:
    write_landscape(folder, "a", {"default": [2.0, 2.2], "stripe_count=8": [1.0, 1.1]})
    write_landscape(folder / "sub", "b", {"default": [3.0], "alignment=1048576": [2.5]},
                    system="summit", file_system="gpfs")


def test_a_folder_of_landscapes(tmp_path: Path) -> None:
    _landscapes(tmp_path / "data")
    (tmp_path / "data" / "lonely.csv").write_text("cores,write_time\n4,1.0\n")
    report = build([tmp_path / "data"], tmp_path / "kb")
    assert report.read == 2 and report.added.runs == {"measured": 6}
    assert report.unpaired_csv == 1 and report.added.workloads == 2
    assert _rows(tmp_path / "kb", "SELECT system, file_system, mpi, operation, layer, ranks, "
                 "measure FROM workloads ORDER BY system") == [
        ("cori", "lustre", "Cray MPICH", "write", "hdf5", 512, "recorded_seconds"),
        ("summit", "gpfs", "Cray MPICH", "write", "hdf5", 512, "recorded_seconds")]
    assert sorted(_rows(tmp_path / "kb", "SELECT settings, is_default FROM configurations")
                  ) == [('{"alignment":1048576}', False), ('{"stripe_count":8}', False),
                        ("{}", True)]
    assert sorted(_rows(tmp_path / "kb", "SELECT time_s FROM runs")) == [
        (1.0,), (1.1,), (2.0,), (2.2,), (2.5,), (3.0,)]


def test_no_path_or_name_is_stored_unless_asked(tmp_path: Path) -> None:
    _landscapes(tmp_path / "data")
    build([tmp_path / "data"], tmp_path / "kb")
    raw = (tmp_path / "kb").read_bytes()
    assert str(tmp_path).encode() not in raw and b"a.csv" not in raw
    assert _rows(tmp_path / "kb", "SELECT DISTINCT label FROM sources") == [(None,)]
    build([tmp_path / "data"], tmp_path / "kb2", labels=True)
    assert sorted(_rows(tmp_path / "kb2", "SELECT label FROM sources")) == [("a.csv",),
                                                                            ("b.csv",)]
    assert str(tmp_path).encode() not in (tmp_path / "kb2").read_bytes()


def test_a_second_build_adds_only_what_is_new(tmp_path: Path) -> None:
    _landscapes(tmp_path / "data")
    first = build([tmp_path / "data"], tmp_path / "kb")
    again = build([tmp_path / "data", tmp_path / "data" / "a.csv"], tmp_path / "kb")
    assert again.read == 0 and again.already == 2 and again.added.runs == {}
    assert first.base != again.base  # a new build id
    write_landscape(tmp_path / "data", "c", {"default": [5.0], "cb_nodes=4": [4.0]},
                    operation="read")
    third = build([tmp_path / "data"], tmp_path / "kb")
    assert third.read == 1 and third.added.runs == {"measured": 2}
    assert _rows(tmp_path / "kb", "SELECT count(*) FROM runs") == [(8,)]


def test_a_changed_sidecar_is_a_new_source(tmp_path: Path) -> None:
    write_landscape(tmp_path, "a", {"default": [2.0]})
    build([tmp_path / "a.csv"], tmp_path / "kb")
    sidecar = tmp_path / "a.workload.yaml"
    sidecar.write_text(sidecar.read_text().replace("ranks: 512", "ranks: 1024").replace(
        "\n", "\n", 1))
    (tmp_path / "a.csv").write_text("cores,write_time\n1024,2.0\n")
    assert build([tmp_path / "a.csv"], tmp_path / "kb").read == 1


def _replay_tune(folder: Path) -> Path:
    folder.mkdir()
    (folder / "data.csv").write_text("cores,cb_nodes,write_time\n4,,2.0\n4,1,1.5\n4,2,1.0\n"
                                     "4,,2.1\n4,2,1.1\n4,1,1.4\n")
    (folder / "iotune.yaml").write_text(yaml.safe_dump({
        "kernel": {"name": "vpic"}, "store": "s.jsonl",
        "backend": {"name": "replay", "replay_data": "data.csv"}}))
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        result = invoke("tune", "-c", "iotune.yaml", "--cores", "4", "--budget", "4",
                        "-o", "tuned.yaml")
        assert result.exit_code == 0, result.output
        result = invoke("run", "--backend", "sim", "--system", "hopper", "--cores", "128",
                        "--store", "s.jsonl", "--reps", "2")
        assert result.exit_code == 0, result.output
    return folder / "s.jsonl"


def test_a_store_keeps_its_provenances_apart(tmp_path: Path) -> None:
    store = _replay_tune(tmp_path / "tune")
    records = [json.loads(line) for line in store.read_text().splitlines()]
    replayed = sum(1 for r in records if r.get("backend") == "replay" and r["status"] == "ok")
    report = build([store], tmp_path / "kb")
    assert report.added.runs == {"replayed": replayed, "simulated": 2}
    assert _rows(tmp_path / "kb", "SELECT kind, provenance, runs FROM sources ORDER BY "
                 "provenance") == [("store", "replayed", replayed), ("store", "simulated", 2)]
    assert _rows(tmp_path / "kb", "SELECT system, operation, layer, ranks, bytes_per_rank "
                 "FROM workloads ORDER BY system") == [
        ("hopper", "write", "hdf5", 128, 32 * 8 * 2**20),
        ("replay of data.csv", "write", "hdf5", 4, 32 * 8 * 2**20)]
    # a query uses measured runs unless told: replayed runs change nothing by default
    replay = SystemKey("replay of data.csv", "replayed")
    described = WorkloadDescriptor(operation="write", layer="hdf5", ranks=4)
    assert priors_for(tmp_path / "kb", replay, described).similar_workloads == 0
    asked = priors_for(tmp_path / "kb", replay, described, provenance=("replayed",))
    assert asked.similar_workloads == 1 and asked.noise is not None
    raw = (tmp_path / "kb").read_bytes()
    assert str(tmp_path).encode() not in raw and b"data.csv\"" not in raw


def test_records_appended_to_a_store_are_added_alone(tmp_path: Path) -> None:
    store = _replay_tune(tmp_path / "tune")
    first = build([store], tmp_path / "kb")
    assert build([store], tmp_path / "kb").already == 1
    last = json.loads(store.read_text().splitlines()[-1])
    for key in ("id", "recorded_at", "schema_version"):
        last.pop(key)
    Store(store).append(last)
    added = build([store], tmp_path / "kb")
    assert added.read == 1 and added.added.runs == {"simulated": 1}
    total = sum(first.added.runs.values()) + 1
    assert _rows(tmp_path / "kb", "SELECT count(*) FROM runs") == [(total,)]


def test_a_production_journal_with_its_sidecars(tmp_path: Path) -> None:
    journal = Store(tmp_path / "prod.jsonl")
    for tag, job, settings, seconds in (("app", "1", {}, 10.0), ("app", "2", {"cb_nodes": 4},
                                        6.0), ("other", "1", {}, 3.0)):
        journal.append({"kind": "production_job", "event": "start", "tag": tag,
                        "job_id": job, "config": "x", "settings": settings})
        journal.append({"kind": "production_job", "event": "finish", "tag": tag,
                        "job_id": job, "status": "ok", "io_seconds": seconds})
    (tmp_path / "prod.app.workload.yaml").write_text("system: cori\nfile_system: lustre\n"
                                                    "operation: write\n")
    report = build([tmp_path / "prod.jsonl"], tmp_path / "kb")
    assert report.added.runs == {"measured": 2}
    assert any("campaign other: no sidecar" in note for note in report.notes)
    assert _rows(tmp_path / "kb", "SELECT s.kind, w.measure, r.time_s FROM runs r JOIN "
                 "sources s USING (source_id) JOIN workloads w USING (workload_id) "
                 "ORDER BY r.time_s") == [("journal", "io_seconds", 6.0),
                                          ("journal", "io_seconds", 10.0)]


def test_a_build_replaces_the_base_while_a_reader_has_the_old_one_open(tmp_path: Path
                                                                       ) -> None:
    write_landscape(tmp_path / "data", "a", {"default": [2.0, 2.1], "stripe_count=8": [1.0]})
    build([tmp_path / "data"], tmp_path / "kb")
    write_landscape(tmp_path / "data", "b", {"default": [2.0, 2.1], "stripe_count=8": [1.0]},
                    bytes_per_rank=20 * 2**20)
    with open_base(tmp_path / "kb") as old:
        inode = (tmp_path / "kb").stat().st_ino
        build([tmp_path / "data"], tmp_path / "kb")
        assert (tmp_path / "kb").stat().st_ino != inode  # renamed over, not written in place
        assert old.execute("SELECT count(*) FROM runs").fetchone() == (3,)
    assert priors_for(tmp_path / "kb", CORI, WRITE).similar_workloads == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "kb"]


def test_a_failed_build_leaves_the_base_as_it_was(tmp_path: Path) -> None:
    write_landscape(tmp_path / "data", "a", {"default": [2.0]})
    build([tmp_path / "data"], tmp_path / "kb")
    before = (tmp_path / "kb").read_bytes()
    write_landscape(tmp_path / "data", "b", {"default": [2.0]}, extra="colour: blue\n")
    with pytest.raises(DataError, match="'colour' is not a workload sidecar key"):
        build([tmp_path / "data"], tmp_path / "kb")
    assert (tmp_path / "kb").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data", "kb"]


def test_output_that_is_not_a_knowledge_base_is_never_replaced(tmp_path: Path) -> None:
    write_landscape(tmp_path, "a", {"default": [2.0]})
    con = duckdb.connect(str(tmp_path / "other.duckdb"))
    con.execute("CREATE TABLE t (x INTEGER)")
    con.close()
    before = (tmp_path / "other.duckdb").read_bytes()
    with pytest.raises(DataError, match="not a knowledge base"):
        build([tmp_path / "a.csv"], tmp_path / "other.duckdb")
    assert (tmp_path / "other.duckdb").read_bytes() == before
