"""The query a tune takes its priors from: same system only, similar workloads only,
the pooled noise and the candidates by the documented rule."""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import duckdb
import numpy as np
import pytest

from iotune.knowledge.build import build
from iotune.knowledge.descriptor import SystemKey, WorkloadDescriptor
from iotune.knowledge.query import priors_for
from iotune.knowledge.similarity import SIZE_FACTOR, similar, where_similar
from tests.knowledge.landscapes import write_landscape

CORI = SystemKey("cori", "lustre")
MIB = 2**20
WRITE = WorkloadDescriptor(operation="write", layer="hdf5", ranks=512, bytes_per_rank=16 * MIB)
#: Similar workloads on cori: stripe_count=8 wins two, alignment one; cb_nodes=2 is slower.
SIMILAR = {
    "s1": {"default": [2.0, 2.2, 2.1], "stripe_count=8": [1.0, 1.1], "alignment=1048576":
           [1.9, 2.0], "cb_nodes=2": [4.0, 4.4]},
    "s2": {"default": [3.0, 3.3], "stripe_count=8": [1.5, 1.4], "alignment=1048576": [2.9],
           "cb_nodes=2": [5.0]},
    "s3": {"default": [1.0, 1.2], "stripe_count=8": [0.95], "alignment=1048576": [0.5, 0.55]},
}


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("kb")
    for name, times in SIMILAR.items():
        size = {"s1": 16, "s2": 32, "s3": 8}[name] * MIB
        write_landscape(root / "cori", name, times, bytes_per_rank=size)
    # a much larger write on cori (not similar), where cb_nodes wins big
    write_landscape(root / "cori", "big", {"default": [9.0, 9.1], "cb_nodes=2": [1.0, 1.1]},
                    bytes_per_rank=1024 * MIB)
    # another system where cb_nodes always wins
    for i in range(3):
        write_landscape(root / "summit", f"w{i}", {"default": [5.0, 5.5],
                                                   "cb_nodes=2": [1.0, 1.2]},
                        system="summit", file_system="gpfs", bytes_per_rank=16 * MIB)
    build([root / "cori"], root / "cori.kb")
    build([root / "cori", root / "summit"], root / "both.kb")
    return {"cori": root / "cori.kb", "both": root / "both.kb"}


def test_candidates_noise_and_counts(bases: dict[str, Path]) -> None:
    priors = priors_for(bases["cori"], CORI, WRITE)
    assert priors.similar_workloads == 3 and priors.system == "cori/lustre"
    assert [(dict(c.settings), c.wins, c.workloads) for c in priors.candidates] == [
        ({"stripe_count": 8}, 2, 3), ({"alignment": 1048576}, 1, 3)]
    s8 = priors.candidates[0].median_speedup
    assert s8 == pytest.approx(float(np.median([2.1 / 1.05, 3.15 / 1.45, 1.1 / 0.95])))
    # the noise: pooled sd of log times around each (workload, configuration) mean
    groups = [ts for times in SIMILAR.values() for ts in times.values() if len(ts) > 1]
    squares = sum(float(np.sum((np.log(ts) - np.mean(np.log(ts))) ** 2)) for ts in groups)
    freedom = sum(len(ts) - 1 for ts in groups)
    assert priors.noise is not None
    assert priors.noise.sigma == pytest.approx(math.sqrt(squares / freedom))
    assert priors.noise.degrees_of_freedom == freedom
    assert priors.noise.runs == sum(len(ts) for ts in groups)
    assert "/" not in priors.base.split("@")[0] and priors.base.startswith("cori.kb@")
    assert "2 candidates from 3 similar workloads: stripe_count=8 won 2 of 3" in priors.text()


def test_another_system_changes_nothing(bases: dict[str, Path]) -> None:
    alone, both = priors_for(bases["cori"], CORI, WRITE), priors_for(bases["both"], CORI, WRITE)
    assert {**alone.to_dict(), "base": ""} == {**both.to_dict(), "base": ""}
    summit = priors_for(bases["both"], SystemKey("summit", "gpfs"), WRITE)
    assert [dict(c.settings) for c in summit.candidates] == [{"cb_nodes": 2}]
    assert priors_for(bases["both"], SystemKey("cori", "gpfs"), WRITE).empty


def test_nothing_similar_gives_empty_priors(bases: dict[str, Path]) -> None:
    for system, workload in ((SystemKey("perlmutter", "lustre"), WRITE),
                             (CORI, replace(WRITE, operation="read")),
                             (CORI, replace(WRITE, bytes_per_rank=64 * 1024))):
        priors = priors_for(bases["both"], system, workload)
        assert priors.empty and priors.similar_workloads == 0 and not priors.candidates
        assert "no similar workload" in priors.text()


def test_a_larger_write_finds_its_own_winner(bases: dict[str, Path]) -> None:
    priors = priors_for(bases["cori"], CORI, replace(WRITE, bytes_per_rank=1024 * MIB))
    assert priors.similar_workloads == 1
    assert [(dict(c.settings), c.wins) for c in priors.candidates] == [({"cb_nodes": 2}, 1)]


def test_limit(bases: dict[str, Path]) -> None:
    assert len(priors_for(bases["cori"], CORI, WRITE, limit=1).candidates) == 1
    assert priors_for(bases["cori"], CORI, WRITE, limit=0).candidates == ()


def _descriptors() -> list[WorkloadDescriptor]:
    out = []
    for operation in ("write", "read", None):
        for size in (MIB, 3 * MIB, 4 * MIB, 5 * MIB, None):
            for files in (1, 64, None):
                out.append(WorkloadDescriptor(operation=operation, bytes_per_rank=size,
                                              files=files, ranks=64))
    return out


def test_the_sql_rule_is_the_python_rule() -> None:
    described = _descriptors()
    con = duckdb.connect()
    con.execute("CREATE TABLE w (id INTEGER, operation VARCHAR, layer VARCHAR, "
                "pattern VARCHAR, collective BOOLEAN, files BIGINT, ranks BIGINT, "
                "bytes_per_rank BIGINT, bytes_per_rank_per_dataset BIGINT, "
                "request_bytes BIGINT)")
    con.executemany("INSERT INTO w VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", [
        (i, d.operation, d.layer, d.pattern, d.collective, d.files, d.ranks,
         d.bytes_per_rank, d.bytes_per_rank_per_dataset, d.request_bytes)
        for i, d in enumerate(described)])
    for query in described:
        condition, values = where_similar(query)
        found = {r[0] for r in con.execute(f"SELECT id FROM w WHERE {condition}",
                                           values).fetchall()}
        assert found == {i for i, d in enumerate(described) if similar(query, d)}
    assert similar(WorkloadDescriptor(bytes_per_rank=MIB),
                   WorkloadDescriptor(bytes_per_rank=int(SIZE_FACTOR * MIB)))
    assert not similar(WorkloadDescriptor(bytes_per_rank=MIB),
                       WorkloadDescriptor(bytes_per_rank=int(SIZE_FACTOR * MIB) + 1))
