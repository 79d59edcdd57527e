"""The analytic kernel signatures against real Darshan logs of IOR and VPIC-IO runs.

pydarshan ships logs of the programs iotune's kernels imitate: IOR through HDF5 on 4 ranks
(default IOR pattern: 1 MiB block, 256 KiB transfers, write then read back), IOR through
POSIX with a file per process on 2048 ranks (64 transfers of 4 MiB), and VPIC-IO on 2048
ranks (one 128 MiB slab per rank in each of 8 datasets, collective). The model of the
matching kernel configuration must reproduce their counters and signatures.
"""

from __future__ import annotations

import pytest
from darshan_helpers import IOR_FPP, IOR_HDF5, VPIC, cached_classes, cached_files, cached_log

from iotune.darshan.analytic import Candidate, kernel_file
from iotune.darshan.signature import feature_mask, signature, unobservable
from iotune.darshan.similarity import pairwise_similarity

MiB = 2**20
IOR_HDF5_RUN = Candidate("ior", {"api": "hdf5", "block_size": MiB, "transfer_size": MiB // 4,
                                 "segments": 1, "file_per_process": False, "verify": True,
                                 "fsync": False}, False, 4)
IOR_FPP_RUN = Candidate("ior", {"api": "posix", "block_size": 4 * MiB,
                                "transfer_size": 4 * MiB, "segments": 64,
                                "file_per_process": True, "fsync": True}, False, 2048)
VPIC_RUN = Candidate("vpic", {"particles_per_rank": 32 * MiB, "timesteps": 1, "fsync": False},
                     True, 2048)


def _similarity(log_name: str, candidate: Candidate) -> float:
    log = cached_log(log_name)
    target = cached_classes(log_name)[0].vector
    mask = feature_mask(list(unobservable(log.lib_version)))
    return pairwise_similarity(target * mask, signature(kernel_file(candidate)) * mask)


@pytest.mark.parametrize(("log_name", "candidate"), [
    (IOR_HDF5, IOR_HDF5_RUN), (IOR_FPP, IOR_FPP_RUN), (VPIC, VPIC_RUN)])
def test_model_of_the_same_run_is_nearly_identical(log_name, candidate):
    assert _similarity(log_name, candidate) >= 0.99


@pytest.mark.parametrize(("log_name", "wrong"), [
    (IOR_HDF5, Candidate("ior", {**IOR_HDF5_RUN.args, "api": "posix"}, False, 4)),
    (IOR_HDF5, Candidate("ior", {**IOR_HDF5_RUN.args, "transfer_size": 4096}, False, 4)),
    (IOR_FPP, Candidate("ior", {**IOR_FPP_RUN.args, "file_per_process": False}, False, 2048)),
    (VPIC, Candidate("vpic", {**VPIC_RUN.args, "particles_per_rank": 1024}, True, 2048)),
])
def test_model_of_another_run_is_clearly_less_similar(log_name, wrong):
    right = {IOR_HDF5: IOR_HDF5_RUN, IOR_FPP: IOR_FPP_RUN, VPIC: VPIC_RUN}[log_name]
    assert _similarity(log_name, wrong) < _similarity(log_name, right) - 0.03


def test_ior_hdf5_counts_match_the_log():
    real = cached_files(IOR_HDF5)[0]
    model = kernel_file(IOR_HDF5_RUN)
    for key in ("POSIX_WRITES", "POSIX_READS", "POSIX_SIZE_WRITE_100K_1M",
                "POSIX_SIZE_READ_100K_1M", "POSIX_SIZE_WRITE_0_100", "POSIX_SIZE_WRITE_100_1K",
                "POSIX_RW_SWITCHES"):
        assert model.posix[key] == real.posix[key], key
    assert model.mpiio["MPIIO_INDEP_WRITES"] == real.mpiio["MPIIO_INDEP_WRITES"]
    assert model.mpiio.get("MPIIO_COLL_WRITES", 0) == real.mpiio["MPIIO_COLL_WRITES"] == 0
    assert model.posix["POSIX_BYTES_WRITTEN"] == pytest.approx(
        real.posix["POSIX_BYTES_WRITTEN"], rel=1e-3)
    assert model.ranks == real.ranks and model.datasets == real.datasets


def test_file_per_process_counts_match_the_log():
    real = cached_files(IOR_FPP)[0]
    model = kernel_file(IOR_FPP_RUN)
    for key in ("POSIX_WRITES", "POSIX_CONSEC_WRITES", "POSIX_SEQ_WRITES",
                "POSIX_BYTES_WRITTEN", "POSIX_SIZE_WRITE_1M_4M", "POSIX_ACCESS1_ACCESS"):
        assert model.posix[key] == real.posix[key], key
    assert model.ranks == real.ranks == 1


def test_vpic_counts_match_the_log():
    real = cached_files(VPIC)[0]
    model = kernel_file(VPIC_RUN)
    assert model.mpiio["MPIIO_COLL_WRITES"] == real.mpiio["MPIIO_COLL_WRITES"]
    for key in ("POSIX_SEQ_WRITES", "POSIX_CONSEC_WRITES", "POSIX_SIZE_WRITE_100M_1G"):
        assert model.posix[key] == real.posix[key], key
    assert model.ranks == real.ranks == 2048


def test_independent_vpic_and_posix_ior_have_no_collective_writes():
    vpic = kernel_file(Candidate("vpic", VPIC_RUN.args, False, 8))
    assert vpic.mpiio.get("MPIIO_COLL_WRITES", 0) == 0
    posix = kernel_file(Candidate("ior", {**IOR_FPP_RUN.args, "file_per_process": False},
                                  True, 8))
    assert not posix.mpiio  # the posix api never goes through MPI-IO
