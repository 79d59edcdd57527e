"""The workload descriptor: from a sidecar, a kernel's arguments, a preload report and a
Darshan signature."""

from __future__ import annotations

from pathlib import Path

import pytest

from iotune.errors import DataError
from iotune.knowledge.descriptor import (
    SIDECAR_KEYS,
    SystemKey,
    WorkloadDescriptor,
    from_sidecar,
    of_kernel,
    of_signature,
)

#: A sidecar as the production landscapes have them (every key).
FULL = """# workload of cori_103k_9_164_write.csv
system: cori
file_system: Lustre
mpi: Cray MPICH
layer: hdf5
operation: write
ranks: 512
ranks_per_node: 9
files: 1
datasets: 164
bytes_per_rank_per_dataset: 105472
bytes_per_rank: 17297408
source: xiexbing/hdf5-work d0cb1ce (IOR with HDF5)
"""


def _sidecar(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "x.workload.yaml"
    path.write_text(text)
    return path


def test_every_key_of_a_production_sidecar(tmp_path: Path) -> None:
    system, workload, source = from_sidecar(_sidecar(tmp_path, FULL))
    assert system == SystemKey("cori", "lustre", "Cray MPICH")
    assert workload == WorkloadDescriptor(
        operation="write", layer="hdf5", ranks=512, ranks_per_node=9, files=1, datasets=164,
        bytes_per_rank=17297408, bytes_per_rank_per_dataset=105472)
    assert source == "xiexbing/hdf5-work d0cb1ce (IOR with HDF5)"
    assert {line.split(":")[0] for line in FULL.splitlines()[1:]} == set(SIDECAR_KEYS)


def test_a_sidecar_may_leave_out_what_it_does_not_know(tmp_path: Path) -> None:
    system, workload, source = from_sidecar(_sidecar(tmp_path, "system: summit\n"))
    assert system == SystemKey("summit") and system.text() == "summit"
    assert workload == WorkloadDescriptor() and source is None


@pytest.mark.parametrize(("text", "says"), [
    ("file_system: gpfs\n", "system: missing"),
    ("system: cori\nbytes_per_ranks: 4\n", "'bytes_per_ranks' is not a workload sidecar key"),
    ("system: cori\nranks: 0\n", "ranks: 0 is not a positive integer"),
    ("system: cori\nranks: 2.5\n", "ranks: 2.5 is not a positive integer"),
    ("system: cori\nfiles: yes\n", "files: True is not a positive integer"),
    ("system: cori\nlayer: netcdf\n", "layer: 'netcdf' is not one of posix, mpiio, hdf5"),
    ("system: 3\n", "system: 3 is not a non-empty text"),
    ("- system\n", "is a mapping of keys"),
])
def test_a_bad_sidecar_is_one_line_naming_the_key(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(DataError, match=None) as caught:
        from_sidecar(_sidecar(tmp_path, text))
    assert says in str(caught.value) and "\n" not in str(caught.value)


def test_a_misspelt_key_gets_the_closest_one(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="did you mean 'bytes_per_rank'"):
        from_sidecar(_sidecar(tmp_path, "system: cori\nbytes_per_ranks: 4\n"))


def test_vpic_from_its_arguments() -> None:
    found = of_kernel("vpic", {"particles_per_rank": 1024, "timesteps": 2}, 64, 16)
    assert found == WorkloadDescriptor(
        operation="write", layer="hdf5", ranks=64, ranks_per_node=16, files=1, datasets=16,
        bytes_per_rank=32 * 1024 * 2, bytes_per_rank_per_dataset=4 * 1024,
        pattern="contiguous", collective=found.collective, request_bytes=4 * 1024)
    assert of_kernel("vpic", {"access": "read"}, 4, None).operation == "read"


def test_ior_shared_and_file_per_process() -> None:
    shared = of_kernel("ior", {"api": "posix", "block_size": 2**20, "segments": 4,
                               "transfer_size": 2**16}, 8, None)
    assert (shared.layer, shared.files, shared.pattern, shared.bytes_per_rank,
            shared.request_bytes) == ("posix", 1, "strided", 4 * 2**20, 2**16)
    alone = of_kernel("ior", {"file_per_process": True, "segments": 4}, 8, None)
    assert (alone.layer, alone.files, alone.pattern) == ("mpiio", 8, "contiguous")


def test_a_command_knows_its_ranks_and_what_its_preload_report_says() -> None:
    assert of_kernel("command", {"command": "./app"}, 32, 8) == WorkloadDescriptor(
        ranks=32, ranks_per_node=8)
    report = {"preload": "iotune", "version": 3, "files": [{
        "path": "out.dat", "opened_by": "MPI_File_open", "open_s": 1.0,
        "opens": [{"comm_size": 32, "amode": 37, "bytes_written": 32 * 2**20,
                   "bytes_read": 0, "ranks_writing": 32, "ranks_writing_to_files": 4,
                   "ranks_writing_collectively": 32,
                   "ranks_writing_to_files_collectively": 4}]}]}
    found = of_kernel("command", {"command": "./app"}, 32, 8, report=report)
    assert (found.operation, found.layer, found.ranks, found.bytes_per_rank,
            found.collective, found.ranks_per_node) == ("write", "mpiio", 32, 2**20, True, 8)


def test_a_darshan_signature() -> None:
    found = of_signature({"write_share": 1.0, "hdf5": 1.0, "mpiio": 1.0,
                          "collective_writes": 0.9, "log2_rank_bytes": 20.0,
                          "log2_write_size": 16.0, "log2_datasets": 3.0,
                          "shared_file": 1.0, "consecutive_writes": 0.1}, ranks=128)
    assert (found.operation, found.layer, found.collective, found.pattern, found.files,
            found.ranks) == ("write", "hdf5", True, "strided", 1, 128)
    assert found.bytes_per_rank == 2**20 - 1 and found.request_bytes == 2**16 - 1
    assert found.datasets == 7
