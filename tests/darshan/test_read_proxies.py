"""Kernel signatures that know about reads, and read proxies for read-heavy logs."""

from __future__ import annotations

import numpy as np
import pytest
import yaml
from darshan_helpers import DXT, sample_log

from iotune.darshan.analytic import Candidate, kernel_file
from iotune.darshan.match import match_document
from iotune.darshan.proxy import find_proxy, read_proxy
from iotune.darshan.search import SearchOptions, search_kernels
from iotune.darshan.signature import FEATURE_INDEX, FEATURE_NAMES, signature
from iotune.darshan.similarity import pairwise_similarity
from iotune.darshan.target import signature_target
from iotune.kernel_specs import get_kernel
from iotune.workload.genes import Gene, LogHints, access_of

#: dxt.darshan's class 3: four log files a Java worker only read (8 KiB requests).
READ_ONLY_CLASS = 3
IOR_ARGS = {"api": "mpiio", "transfer_size": 4096, "block_size": 16384, "segments": 2,
            "file_per_process": False, "verify": False, "fsync": False}


def _file(access: str | None, kernel: str = "ior", args: dict | None = None,
          collective: bool = True, ranks: int = 4):
    base = dict(args or IOR_ARGS)
    if access is not None:
        base["access"] = access
    return kernel_file(Candidate(kernel, base, collective, ranks))


def test_a_read_run_shows_only_its_reads_through_the_api() -> None:
    fc = _file("read")
    assert fc.bytes_written == 0 and fc.bytes_read == 4 * 2 * 16384
    assert fc.mpiio["MPIIO_COLL_READS"] == 4 * 8 and fc.mpiio.get("MPIIO_COLL_WRITES", 0) == 0
    assert fc.posix.get("POSIX_RW_SWITCHES", 0) == 0
    vector = signature(fc)
    assert vector[FEATURE_INDEX["read_share"]] == 1.0
    assert vector[FEATURE_INDEX["collective_reads"]] == 1.0


def test_both_writes_then_reads_and_verify_adds_a_second_read() -> None:
    both = _file("both")
    assert both.bytes_written == both.bytes_read == 4 * 2 * 16384
    assert both.posix["POSIX_RW_SWITCHES"] == 4
    checked = _file("both", args={**IOR_ARGS, "verify": True})
    assert checked.bytes_read == 2 * both.bytes_read
    # The second pass starts again at each rank's first offset: not sequential.
    assert checked.posix["POSIX_SEQ_READS"] == both.posix["POSIX_SEQ_READS"] + 4 * 7


def test_a_write_is_the_same_whether_access_is_given_or_not() -> None:
    assert np.array_equal(signature(_file(None)), signature(_file("write")))
    assert _file(None).bytes_read == 0


def test_vpic_reads_every_slab_back() -> None:
    args = {"particles_per_rank": 1024, "timesteps": 2, "verify": False, "fsync": False}
    fc = _file("read", "vpic", args)
    assert fc.h5d["H5D_READS"] == 4 * 8 * 2 and fc.h5d["H5D_WRITES"] == 0
    # Each slab is 4 bytes x 1024 particles: 64 data reads in the 1 KiB - 10 KiB bin.
    assert fc.posix["POSIX_SIZE_READ_1K_10K"] == 4 * 8 * 2
    assert fc.posix.get("POSIX_BYTES_WRITTEN", 0) == 0


@pytest.mark.parametrize(("written", "read", "expected"),
                         [(10, 0, "write"), (0, 10, "read"), (5, 10, "both"), (0, 0, "write")])
def test_access_of_a_file(written, read, expected) -> None:
    assert access_of(written, read) == expected


@pytest.mark.parametrize(("kernel", "args", "access"), [
    ("ior", {**IOR_ARGS, "api": "hdf5"}, "read"),
    ("ior", {**IOR_ARGS, "api": "posix", "file_per_process": True}, "both"),
    ("vpic", {"particles_per_rank": 4096, "timesteps": 3, "verify": False, "fsync": True},
     "read"),
])
def test_search_recovers_read_configurations(kernel, args, access) -> None:
    truth = _file(access, kernel, args, collective=kernel == "vpic")
    best = search_kernels(truth, signature(truth), np.ones(len(FEATURE_NAMES)),
                          ("ior", "vpic"), SearchOptions())[0]
    assert best.similarity >= 0.999 and best.candidate.args.get("access") == access


def _write_only(monkeypatch) -> None:
    """Drop ``read`` and ``both`` from every kernel's access gene."""
    for name in ("ior", "vpic"):
        spec = get_kernel(name)
        genes = type(spec).proxy_genes

        def only_writes(hints, genes=genes, spec=spec):
            return [Gene(g.name, ("write",), False) if g.name == "access" else g
                    for g in genes(spec, hints)]

        monkeypatch.setattr(spec, "proxy_genes", only_writes)


def test_a_read_only_log_gets_a_read_proxy_more_similar_than_a_write_proxy(monkeypatch):
    target = signature_target(sample_log(DXT), class_index=READ_ONLY_CLASS)
    assert LogHints.from_file(target.chosen.representative).access == "read"
    found = find_proxy(target, ("ior", "vpic"), SearchOptions())
    assert found.candidate.args.get("access") == "read"
    assert found.document["args"]["access"] == "read"
    _write_only(monkeypatch)
    writing = find_proxy(target, ("ior", "vpic"), SearchOptions())
    assert "access" not in writing.candidate.args
    assert found.results[0].similarity >= writing.results[0].similarity + 0.2
    assert found.results[0].similarity >= 0.9
    # What the write proxy gets most wrong: the writes the application never made.
    assert writing.unmatched and all("write" in m.feature and m.log == 0 < m.proxy
                                     for m in writing.unmatched)


def test_match_times_a_read_for_a_read_only_log() -> None:
    target = signature_target(sample_log(DXT), class_index=READ_ONLY_CLASS)
    ranking = match_document(target)["ranking"]
    assert ranking and all(row["args"]["access"] == "read" for row in ranking)
    top = ranking[0]
    reference = kernel_file(Candidate("ior", top["args"], bool(top["collective"]), 1))
    assert pairwise_similarity(target.chosen.vector, signature(reference)) == \
        pytest.approx(top["pairwise"], abs=1e-4)


def test_proxy_command_writes_a_read_proxy(run_cli, tmp_path) -> None:
    out = tmp_path / "reader.yaml"
    result = run_cli("proxy", sample_log(DXT), "--class", READ_ONLY_CLASS, "-o", out)
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(out.read_text())["args"]["access"] == "read"
    assert read_proxy(out).args["access"] == "read"
