"""Signatures, normalisation, similarity and equivalence classes."""

from __future__ import annotations

import numpy as np
import pytest
from darshan_helpers import DXT, IOR_FPP, IOR_HDF5, MACSIO, cached_classes, cached_files, cached_log

from iotune.darshan.classes import equivalence_classes, pick_class
from iotune.darshan.records import file_counters
from iotune.darshan.signature import (
    FEATURE_INDEX,
    FEATURE_NAMES,
    HDF5_FEATURES,
    feature_mask,
    signature,
    unobservable,
)
from iotune.darshan.similarity import (
    cosine,
    pairwise_normalise,
    pairwise_similarity,
    range_normalise,
    similarities,
)
from iotune.errors import DataError
from iotune.workload.counters import SIZE_BINS, FileCounters, size_bin


def _value(vector: np.ndarray, name: str) -> float:
    return float(vector[FEATURE_INDEX[name]])


def test_signature_features_follow_the_log_counters():
    log = cached_log(IOR_HDF5)
    posix = log.counters["POSIX"].iloc[0]
    mpiio = log.counters["MPI-IO"].iloc[0]
    (fc,) = file_counters(log)
    v = signature(fc)
    assert len(v) == len(FEATURE_NAMES)
    written, read = posix["POSIX_BYTES_WRITTEN"], posix["POSIX_BYTES_READ"]
    assert _value(v, "write_share") == pytest.approx(written / (written + read))
    for name, _ in SIZE_BINS:
        assert _value(v, f"posix_write_{name}") == pytest.approx(
            posix[f"POSIX_SIZE_WRITE_{name}"] / posix["POSIX_WRITES"])
        assert _value(v, f"mpiio_read_{name}") == pytest.approx(
            mpiio[f"MPIIO_SIZE_READ_AGG_{name}"] / mpiio["MPIIO_INDEP_READS"])
    assert _value(v, "independent_writes") == 1.0 and _value(v, "collective_writes") == 0.0
    assert _value(v, "shared_file") == 1.0 and _value(v, "hdf5") == 1.0
    assert _value(v, "log2_datasets") == 1.0  # one dataset
    assert _value(v, "consecutive_writes") == pytest.approx(
        posix["POSIX_CONSEC_WRITES"] / posix["POSIX_WRITES"])
    assert 2 ** _value(v, "log2_common_access") - 1 == pytest.approx(
        posix["POSIX_ACCESS1_ACCESS"])
    assert 2 ** _value(v, "log2_rank_bytes") - 1 == pytest.approx((written + read) / 4)
    assert _value(v, "sync") == 0.0


def test_size_bins_match_darshan_edges():
    assert size_bin(100) == "0_100" and size_bin(101) == "100_1K"
    assert size_bin(1024) == "100_1K" and size_bin(2**20) == "100K_1M"
    assert size_bin(2**20 + 1) == "1M_4M" and size_bin(2**31) == "1G_PLUS"


def test_a_file_without_reads_has_zero_read_features():
    fc = FileCounters("f", ranks=1, nprocs=1,
                      posix={"POSIX_WRITES": 4, "POSIX_BYTES_WRITTEN": 4096,
                             "POSIX_SIZE_WRITE_1K_10K": 4})
    v = signature(fc)
    assert _value(v, "read_share") == 0 and _value(v, "log2_read_size") == 0
    assert _value(v, "posix_write_1K_10K") == 1 and not np.isnan(v).any()


def test_pairwise_normalisation_and_cosine():
    a, b = np.array([2.0, 0.0, 4.0, 0.0]), np.array([1.0, 3.0, 4.0, 0.0])
    na, nb = pairwise_normalise(a, b)
    assert np.allclose(na, [1, 0, 1, 0]) and np.allclose(nb, [0.5, 1, 1, 0])
    assert pairwise_similarity(a, a) == pytest.approx(1.0)
    assert pairwise_similarity(a, b) == pytest.approx(pairwise_similarity(b, a))
    assert pairwise_similarity(a, b) < 1.0
    assert cosine(np.zeros(3), np.zeros(3)) == 1.0
    assert cosine(np.zeros(3), np.ones(3)) == 0.0


def test_range_normalisation_scales_columns_and_drops_constant_ones():
    m = np.array([[1.0, 5.0, 2.0], [3.0, 5.0, 4.0], [2.0, 5.0, 0.0]])
    scaled = range_normalise(m)
    assert np.allclose(scaled[:, 0], [0, 1, 0.5])
    assert np.allclose(scaled[:, 1], 0)
    assert np.allclose(scaled[:, 2], [0.5, 1, 0])
    ranked = similarities(m[0], m[1:], "range")
    assert ranked.shape == (2,)
    with pytest.raises(ValueError, match="expected one of pairwise, range"):
        similarities(m[0], m[1:], "cosine")


def test_per_process_files_form_one_class():
    classes = cached_classes(IOR_FPP)
    assert len(classes) == 1
    assert classes[0].files == 2048 and classes[0].share == pytest.approx(1.0)


def test_classes_separate_data_from_logs_and_order_by_bytes():
    files = cached_files(MACSIO)
    classes = equivalence_classes(files)
    assert classes[0].representative.name.endswith(".h5")
    assert [c.bytes for c in classes] == sorted((c.bytes for c in classes), reverse=True)
    assert sum(c.share for c in classes) == pytest.approx(1.0)
    assert sum(c.files for c in classes) == sum(1 for f in files if f.has_data)


def test_a_stricter_threshold_never_gives_fewer_classes():
    files = cached_files(DXT)
    counts = [len(equivalence_classes(files, t)) for t in (0.5, 0.8, 0.95, 1.0)]
    assert counts == sorted(counts) and counts[0] < counts[-1]
    for c in equivalence_classes(files, 0.8):
        for member in c.members:
            assert pairwise_similarity(signature(member), c.vector) >= 0.8 - 1e-12


def test_class_choice_errors():
    classes = equivalence_classes(cached_files(IOR_HDF5))
    with pytest.raises(DataError, match=r"x\.darshan: class 3 does not exist; the log has "
                                        r"classes 0\.\.0"):
        pick_class(classes, 3, "x.darshan")
    with pytest.raises(DataError, match="no file in the log was read or written"):
        pick_class([], None, "x.darshan")
    with pytest.raises(DataError, match=r"class threshold 1\.5: must be in \(0, 1\]"):
        equivalence_classes([], 1.5)


def test_logs_before_darshan_3_2_cannot_show_hdf5():
    assert unobservable("3.1.3") == HDF5_FEATURES
    assert unobservable("3.2.1") == () and unobservable("3.4.0-pre1") == ()
    assert unobservable("") == ()
    mask = feature_mask(list(HDF5_FEATURES))
    assert mask.sum() == len(FEATURE_NAMES) - 3
    with pytest.raises(ValueError, match="unknown feature 'bogus'"):
        feature_mask(["bogus"])
