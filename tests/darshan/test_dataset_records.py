"""Rajesh et al.'s records per dataset: each HDF5 dataset its own record, signature and
class, on pydarshan's sample logs and on a log made here."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from darshan_helpers import IOR_HDF5, MACSIO, VPIC, cached_log, sample_log

from iotune.darshan.datasets import (
    DATASET_FEATURE_NAMES,
    dataset_document,
    dataset_records,
    dataset_signature,
)
from iotune.darshan.logfile import DarshanLog

KiB, MiB = 2**10, 2**20


def _log(rows, names, nprocs=4):
    frame = pd.DataFrame(rows).fillna(0.0)
    return DarshanLog(Path("made.darshan"), "0" * 64, "3.41", nprocs, 1.0, "app", "3.4.4",
                      ("H5D",), {"H5D": frame}, names)


def _dataset(rank, ident, writes, size, collective=1.0, reads=0):
    return {"rank": rank, "id": ident, "H5D_WRITES": writes, "H5D_READS": reads,
            "H5D_BYTES_WRITTEN": writes * size, "H5D_BYTES_READ": reads * size,
            f"H5D_SIZE_WRITE_AGG_{'1M_4M' if size >= MiB else '0_100'}": writes,
            "H5D_REGULAR_HYPERSLAB_SELECTS": writes + reads, "H5D_ACCESS1_ACCESS": size,
            "H5D_ACCESS1_COUNT": writes, "H5D_DATASPACE_NDIMS": 1, "H5D_DATATYPE_SIZE": 4,
            "H5D_USE_MPIIO_COLLECTIVE": collective}


def test_a_record_per_dataset_merged_across_ranks_and_classed():
    names = {1: "/out/step.h5:/x", 2: "/out/step.h5:/y", 3: "/out/step.h5:/attrs"}
    rows = [_dataset(r, 1, 4, 2 * MiB) for r in range(4)]  # x: 4 ranks, 4 writes each
    rows += [_dataset(-1, 2, 16, 2 * MiB)]  # y: one shared record, the same pattern
    rows += [_dataset(0, 3, 3, 40, collective=0.0)]  # small independent metadata-like
    records = dataset_records(_log(rows, names))
    assert [r.name for r in records] == ["/out/step.h5:/x", "/out/step.h5:/y",
                                         "/out/step.h5:/attrs"]
    x, y, attrs = records
    assert (x.ranks, y.ranks, attrs.ranks) == (4, 4, 1)  # rank -1: all of the job's ranks
    assert x.h5d["H5D_WRITES"] == 16 and x.bytes == 32 * MiB
    vx, vattrs = dataset_signature(x), dataset_signature(attrs)
    feature = dict(zip(DATASET_FEATURE_NAMES, vx, strict=True))
    assert feature["h5d_write_1M_4M"] == 1.0 and feature["collective"] == 1.0
    assert feature["shared"] == 1.0 and feature["regular_hyperslabs"] == 1.0
    assert feature["log2_rank_requests"] == pytest.approx(2.3219, abs=1e-3)  # log2(1 + 4)
    assert dict(zip(DATASET_FEATURE_NAMES, vattrs, strict=True))["collective"] == 0.0
    doc = dataset_document(records)
    assert [(c["datasets"], c["representative"]) for c in doc["classes"]] == [
        (2, "/out/step.h5:/x"), (1, "/out/step.h5:/attrs")]
    assert [r["class"] for r in doc["records"]] == [0, 0, 1]
    assert doc["classes"][0]["bytes_share"] == pytest.approx(64 / (64 + 120 / MiB), abs=1e-4)


def test_sample_logs_keep_their_datasets_apart_from_their_files():
    (ior,) = dataset_records(cached_log(IOR_HDF5))
    assert ior.dataset == "Dataset-0000.0000" and ior.file.endswith("test123.h5")
    assert ior.h5d["H5D_WRITES"] == 12 and ior.h5d["H5D_READS"] == 12
    (macsio,) = dataset_records(cached_log(MACSIO))
    assert macsio.dataset == "constant" and macsio.ranks == 16
    assert dict(zip(DATASET_FEATURE_NAMES, dataset_signature(macsio),
                    strict=True))["dimensions"] == 3
    assert dataset_records(cached_log(VPIC)) == []  # a log without H5D records


def test_profile_prints_the_dataset_records(run_cli):
    result = run_cli("profile", sample_log(MACSIO))
    assert result.exit_code == 0, result.output
    assert "HDF5 datasets, one record each (1 classes" in result.stdout
    assert "macsio_hdf5_000.h5:/constant" in result.stdout
    import json

    data = json.loads(run_cli("profile", sample_log(IOR_HDF5), "--format", "json").stdout)
    assert data["datasets"]["records"][0]["reads"] == 12
    assert data["datasets"]["classes"][0]["features"]["h5d_write_100K_1M"] == 1.0
