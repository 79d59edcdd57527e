"""The library behind the Darshan commands, called without click: documents and errors."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from darshan_helpers import IOR_HDF5, NO_POSIX, VPIC, cached_files, cached_log, sample_log

from iotune.backends.base import RunRequest
from iotune.darshan.characterize import characterize, ior_api, plan, write_characterization
from iotune.darshan.estimate import estimate_log, read_characterization
from iotune.darshan.match import match_document
from iotune.darshan.phases import trace_phases
from iotune.darshan.proxy import find_proxy, read_proxy, write_proxy
from iotune.darshan.records import read_counters
from iotune.darshan.search import SearchOptions
from iotune.darshan.signature import FEATURE_INDEX
from iotune.darshan.summary import human_bytes, profile_log
from iotune.darshan.target import signature_target
from iotune.errors import ConfigError, DataError

SMALL_SEARCH = SearchOptions(population=8, generations=3, seed=0)


def test_read_counters_needs_counter_records():
    log, files = read_counters(sample_log(IOR_HDF5), "a test")
    assert log.nprocs == 4 and [f.name for f in files] == [f.name for f in cached_files(IOR_HDF5)]
    with pytest.raises(DataError, match=r"no POSIX or MPI-IO or H5F or H5D records; a test "
                                        r"needs them \(modules in this log: LUSTRE, STDIO\)"):
        read_counters(sample_log(NO_POSIX), "a test")


def test_profile_document_of_the_ior_hdf5_log():
    summary = profile_log(sample_log(IOR_HDF5))
    assert summary["log"] == str(sample_log(IOR_HDF5))
    assert summary["job"]["nprocs"] == 4
    posix = cached_log(IOR_HDF5).counters["POSIX"]
    assert summary["totals"]["bytes_written"] == posix["POSIX_BYTES_WRITTEN"].sum()
    assert summary["totals"]["writes"] == 23
    assert summary["hdf5"]["datasets"] == 1
    assert [c["files"] for c in summary["classes"]] == [1]


def test_signature_target_masks_unobservable_and_ignored_features():
    target = signature_target(sample_log(VPIC), ignored=["sync", "hdf5"])
    assert target.ignored == ["hdf5", "hdf5_collective", "log2_datasets", "sync"]
    assert target.mask.shape == (len(FEATURE_INDEX),)
    masked = {name for name, i in FEATURE_INDEX.items() if target.mask[i] == 0}
    assert masked == set(target.ignored)
    assert target.chosen.index == 0 and target.chosen.share == pytest.approx(1.0)
    with pytest.raises(ConfigError, match=r"^--ignore-feature: unknown feature 'nope'"):
        signature_target(sample_log(VPIC), ignored=["nope"])
    with pytest.raises(DataError, match=r"class 3 does not exist; the log has classes 0\.\.0"):
        signature_target(sample_log(IOR_HDF5), class_index=3)


def test_match_document_ranks_vpic_first_and_adds_kernel_logs():
    data = match_document(signature_target(sample_log(VPIC)))
    ranking = data["ranking"]
    assert ranking[0]["kernel"] == "vpic-collective"
    assert data["ignored_features"] == ["hdf5", "hdf5_collective", "log2_datasets"]
    assert data["class"] == 0 and data["representative"].endswith("vpicio.hdf5")
    with_log = match_document(signature_target(sample_log(IOR_HDF5)), [sample_log(IOR_HDF5)])
    assert with_log["ranking"][0]["kernel"] == "ior_hdf5_example"
    assert with_log["ranking"][0]["pairwise"] == 1.0
    assert len(with_log["ranking"]) == len(ranking) + 1


def test_find_proxy_makes_a_loadable_proxy_document(tmp_path):
    target = signature_target(sample_log(IOR_HDF5))
    found = find_proxy(target, ["ior"], SMALL_SEARCH)
    document = found.document
    assert document["kernel"] == "ior" and document["ranks"] == 4
    assert document["similarity"] > 0.99 and document["source_sha256"] == target.log.sha256
    assert found.candidate.args["api"] == "hdf5"
    (row,) = found.search_rows()
    assert row["kernel"] == "ior" and row["similarity"] == document["similarity"]
    assert row["evaluations"] > 0 and row["args"] == dict(found.candidate.args)
    write_proxy(tmp_path / "p.yaml", document)
    assert read_proxy(tmp_path / "p.yaml").args == found.candidate.args


def test_find_proxy_with_a_cap_nothing_fits():
    options = SearchOptions(population=8, generations=2, max_bytes_per_rank=1)
    with pytest.raises(DataError, match=r"^--max-bytes-per-rank 1: no kernel configuration "
                                        r"writes that little per rank"):
        find_proxy(signature_target(sample_log(IOR_HDF5)), ["ior"], options)


def test_trace_phases_document():
    found = trace_phases(sample_log(IOR_HDF5))
    assert found.module == "DXT_MPIIO" and len(found.phases) == 14 and len(found.relevant) == 6
    data = found.document()
    assert data["phases_total"] == 14 and len(data["phases"]) == 6
    first = data["phases"][0]
    assert first["weight"] == human_bytes(first["weight_bytes"])
    assert len(found.document(show_all=True)["phases"]) == 14
    assert trace_phases(sample_log(IOR_HDF5), "posix").module == "DXT_POSIX"


def test_human_bytes():
    assert [human_bytes(n) for n in (0, 1000, 4 * 2**20, 1536, 3 * 2**50)] == [
        "0 B", "1000 B", "4 MiB", "1.5 KiB", "3.07e+03 TiB"]


class FakeBackend:
    """Answers each pattern run with a fixed time; runs of ``fail_ranks`` ranks fail."""

    def __init__(self, write_time: float, fail_ranks: tuple[int, ...] = ()) -> None:
        self.config = SimpleNamespace(system=SimpleNamespace(name="fake"))
        self.fs_type = "tmpfs"
        self.write_time = write_time
        self.fail_ranks = fail_ranks
        self.requests: list[RunRequest] = []

    def measure(self, request: RunRequest, rep: int) -> dict[str, Any]:
        self.requests.append(request)
        if request.cores in self.fail_ranks:
            return {"status": "failed", "error": "exit code 1: boom"}
        moved = request.cores * request.params["block_size"]
        op = request.params["op"]
        return {"status": "ok", "result": {"times_s": {op: self.write_time},
                                           f"bytes_{'written' if op == 'write' else 'read'}":
                                           moved}}


def test_characterize_then_estimate(tmp_path):
    found = trace_phases(sample_log(IOR_HDF5))
    assert ior_api("auto", found.module) == "mpiio" and ior_api("hdf5", found.module) == "hdf5"
    assert ior_api("auto", "DXT_POSIX") == "posix"
    runs = plan(found.relevant, ior_api("auto", found.module))
    backend = FakeBackend(write_time=0.5)
    document = characterize(found, runs, backend, repeat=2)
    assert len(backend.requests) == 2 * len(runs)
    assert (document["system"], document["fs_type"], document["module"]) == (
        "fake", "tmpfs", "DXT_MPIIO")
    assert document["source_sha256"] == found.trace.sha256
    for pattern, run in zip(document["patterns"], runs, strict=True):
        assert pattern["key"] == run.key and pattern["runs"] == 2
        assert pattern["bandwidth_bytes_s"] == pytest.approx(pattern["bytes"] / 0.5)
    path = tmp_path / "chars.yaml"
    write_characterization(path, document)
    assert yaml.safe_load(path.read_text())["patterns"] == document["patterns"]
    assert read_characterization(path) == document["patterns"]

    result = estimate_log(sample_log(IOR_HDF5), path, measured=2.0)
    total = result.document["total"]
    assert result.document["characterization"] == str(path)
    assert total["measured_from"] == "given" and total["measured_s"] == 2.0
    expected = sum(r["weight_bytes"] / (r["bandwidth_MiB_s"] * 2**20)
                   for r in result.document["phases"])
    assert total["estimated_s"] == pytest.approx(expected)
    assert len(result.phase_rows()) == 6 and len(result.phase_rows(show_all=True)) == 14
    with pytest.raises(DataError, match=r"measured time -1\.0: must be a positive number"):
        estimate_log(sample_log(IOR_HDF5), path, measured=-1.0)


def test_failed_patterns_are_kept_and_all_failing_is_an_error():
    found = trace_phases(sample_log(IOR_HDF5))
    runs = plan(found.relevant, "mpiio")
    assert sorted({r.ranks for r in runs}) == [1, 4]
    document = characterize(found, runs, FakeBackend(1.0, fail_ranks=(1,)))
    failed = [p for p in document["patterns"] if "bandwidth_bytes_s" not in p]
    assert failed and all(p["ranks"] == 1 and p["error"] == "exit code 1: boom" for p in failed)
    with pytest.raises(DataError, match=r"no phase pattern could be measured \(exit code 1: "
                                        r"boom\)"):
        characterize(found, runs, FakeBackend(1.0, fail_ranks=(1, 4)))
