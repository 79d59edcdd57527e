"""Read phases of the kernels: real MPI runs at 2 ranks on small files.

Each api reads back what it wrote, the read is timed apart from the write, a corrupted file
fails the read, and the read hints (romio_cb_read, romio_ds_read) are in effect on the file
opened for reading.
"""

from __future__ import annotations

import textwrap

import pytest
from kernel_helpers import KERNELS, mpiexec, run_program

pytestmark = pytest.mark.mpi

READ_KEYS = ("read_open", "read", "read_close", "read_total")
WRITE_KEYS = ("open", "write", "close", "total")
IOR_SMALL = ["--block-size", "64K", "--transfer-size", "16K", "--segments", "2"]


@pytest.mark.parametrize(("api", "collective", "fpp"), [
    ("posix", "no", "no"),
    ("posix", "no", "yes"),
    ("mpiio", "no", "no"),
    ("mpiio", "yes", "no"),
    ("hdf5", "no", "yes"),
    ("hdf5", "yes", "no"),
])
def test_ior_reads_back_with_each_api(kernel, scratch, api, collective, fpp):
    run = kernel("ior", 2, "--scratch", str(scratch), "--api", api, *IOR_SMALL,
                 "--collective", collective, "--file-per-process", fpp, "--access", "both")
    assert run.returncode == 0, run.stderr
    result = run.result()
    times = result["times_s"]
    assert all(times[key] > 0 for key in ("write", "total", "read", "read_total"))
    assert times["read_total"] == pytest.approx(
        times["read_open"] + times["read"] + times["read_close"], rel=0.5)
    assert result["params"]["access"] == "both"
    assert result["bytes_read"] == result["bytes_written"] == 2 * 2 * 64 * 1024
    assert result["read_bandwidth_mib_s"] == pytest.approx(
        result["bytes_read"] / times["read_total"] / 2**20)
    assert result["bandwidth_mib_s"] == pytest.approx(
        result["bytes_written"] / times["total"] / 2**20)
    check = result["read_check"]
    # 16 KiB transfers, 8 per rank: 1024 evenly spaced bytes of each (every 16th, from the
    # first) plus the 7 other bytes of its header word
    assert check["ok"] and check["checked_values"] == 2 * 8 * (1024 + 7)
    assert result["read_cache"]["advice_refused_ranks"] == 0


def test_vpic_read_only_times_the_read_and_reports_read_hints(kernel, scratch):
    run = kernel("vpicio", 2, "--scratch", str(scratch), "--particles-per-rank", "2048",
                 "--timesteps", "2", "--access", "read", "--romio-cb-read", "disable",
                 "--romio-ds-read", "enable", "--collective", "no")
    assert run.returncode == 0, run.stderr
    result = run.result()
    times = result["times_s"]
    assert set(times) == set(READ_KEYS) and all(times[key] > 0 for key in ("read", "read_total"))
    assert result["bandwidth_mib_s"] is None and "prepare" in result["write_untimed"]
    assert result["bytes_read"] == 32 * 2048 * 2 * 2
    assert result["hints_requested"] == {"romio_cb_read": "disable", "romio_ds_read": "enable"}
    assert result["hints_in_effect"]["romio_cb_read"] == "disable"
    assert result["hints_in_effect"]["romio_ds_read"] == "enable"
    assert result["hints_not_in_effect"] == {}
    # 2 timesteps x 8 datasets per rank, 1024 sampled values of each 2048-element slab
    assert result["read_check"]["checked_values"] == 2 * 16 * 1024


def test_mpiio_read_hints_in_effect_on_the_read_file(kernel, scratch):
    run = kernel("ior", 2, "--scratch", str(scratch), "--api", "mpiio", *IOR_SMALL,
                 "--access", "read", "--romio-cb-read", "enable", "--romio-ds-read", "disable")
    assert run.returncode == 0, run.stderr
    result = run.result()
    assert "read phase" in result["hints_source"]
    assert result["hints_in_effect"]["romio_cb_read"] == "enable"
    assert result["hints_in_effect"]["romio_ds_read"] == "disable"
    assert "total" not in result["times_s"] and result["times_s"]["read_total"] > 0


def test_write_access_is_unchanged(kernel, scratch):
    run = kernel("ior", 2, "--scratch", str(scratch), "--api", "posix", *IOR_SMALL)
    assert run.returncode == 0, run.stderr
    result = run.result()
    assert set(result["times_s"]) == set(WRITE_KEYS)
    assert "bytes_read" not in result and result["params"]["access"] == "write"


def test_bad_access_is_one_line(kernel, scratch):
    run = kernel("vpicio", 0, "--scratch", str(scratch), "--access", "sideways")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "--access" in lines[0] and "write, read, both" in lines[0]


CORRUPT_VPIC = textwrap.dedent("""
    import sys
    from pathlib import Path
    sys.path.insert(0, {kernels!r})
    import h5py
    import numpy as np
    from mpi4py import MPI
    import vpicio
    from kit import hdf5, readback
    from kit.errors import KernelError

    comm = MPI.COMM_WORLD
    path = Path({path!r})
    layout = vpicio.compute_layout(comm, 2048)
    steps = [vpicio.make_step_data(layout, 0)]
    options = hdf5.Hdf5Options()
    vpicio.write_particles(comm, path, MPI.INFO_NULL, options, steps, layout,
                           collective=True, fsync=True)
    if comm.rank == 0:  # garbage over rank 1's slab of one dataset
        with h5py.File(path, "r+") as f:
            f["Timestep_0/py"][2048:4096] = np.float32(-7.0)
    readback.settle(comm, [path])
    try:
        vpicio.read_particles(comm, path, MPI.INFO_NULL, options, layout, 1, collective=True)
    except KernelError as exc:
        said = f"rank {{comm.rank}} exit {{exc.exit_code}}: {{exc}}"
    else:
        said = f"rank {{comm.rank}} read garbage without noticing"
    lines = comm.gather(said, root=0)  # one writer: ranks' lines never interleave
    if comm.rank == 0:
        print("\\n".join(lines), flush=True)
""")


def test_corrupt_data_fails_the_read_on_every_rank(tmp_path):
    script = tmp_path / "corrupt.py"
    script.write_text(CORRUPT_VPIC.format(kernels=str(KERNELS), path=str(tmp_path / "v.h5")))
    run = run_program(mpiexec(2, str(script)))
    assert run.returncode == 0, run.stderr
    lines = sorted(run.stdout.strip().splitlines())
    assert len(lines) == 2
    for rank, line in enumerate(lines):
        assert line.startswith(f"rank {rank} exit 1: read-back check failed: 1024 of 16384 "
                               "sampled values differ"), line
        assert "'where': 'Timestep_0/py'" in line and "'found': -7.0" in line
        assert "'index': 2048" in line and "'rank': 1" in line


CORRUPT_IOR = textwrap.dedent("""
    import os
    import sys
    from pathlib import Path
    sys.path.insert(0, {kernels!r})
    from mpi4py import MPI
    import ior
    from kit import readback
    from kit.errors import KernelError

    comm = MPI.COMM_WORLD
    path = Path({path!r})
    pattern = ior.Pattern(comm.rank, comm.size, 65536, 16384, 1, False)
    if comm.rank == 0:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        os.pwrite(fd, ior.pattern_bytes(0, 2 * 65536, 0, 16384).tobytes(), 0)
        {damage}
        os.close(fd)
    readback.settle(comm, [path])
    check = readback.ReadCheck(comm.rank)
    readback.read_transfers(lambda: readback.PosixReader(path), comm, pattern.offsets(),
                            16384, check, path.name,
                            lambda offsets: ior.pattern_bytes_at(offsets, 0, 16384),
                            head=ior.HEADER_BYTES)
    try:
        check.finish(comm)
        said = f"rank {{comm.rank}}: no mismatch found"
    except KernelError as exc:
        said = f"rank {{comm.rank}}: {{exc}}"
    lines = comm.gather(said, root=0)
    if comm.rank == 0:
        print("\\n".join(lines), flush=True)
""")

#: 2 ranks x 4 transfers of 16 KiB, each: 1024 evenly spaced bytes plus 7 of its header word.
IOR_SAMPLED = 2 * 4 * (1024 + 7)


def corrupt_ior_run(tmp_path, damage: str) -> list[str]:
    """Rank 0 writes the ior file of 2 ranks (one 64 KiB block each, 16 KiB transfers),
    applies ``damage`` (a statement on ``fd``), then both ranks read their transfers back
    and check them; returns each rank's line."""
    script = tmp_path / "corrupt_ior.py"
    script.write_text(CORRUPT_IOR.format(kernels=str(KERNELS), path=str(tmp_path / "i.dat"),
                                         damage=damage))
    run = run_program(mpiexec(2, str(script)))
    assert run.returncode == 0, run.stderr
    lines = run.stdout.strip().splitlines()
    assert len(lines) == 2
    return lines


def test_corrupt_ior_bytes_are_caught(tmp_path):
    lines = corrupt_ior_run(tmp_path, 'os.pwrite(fd, b"\\xff" * 100, 65536 + 5000)  # rank 1')
    assert all(f": 6 of {IOR_SAMPLED} sampled values differ" in line for line in lines)
    # the sampled bytes are every 16th of each 16 KiB transfer: 100 bytes of 0xff (never a
    # byte of the pattern there) hold 6 of them, the first at 65536 + 5013
    assert all("'rank': 1" in line and "'where': 'i.dat'" in line for line in lines)
    assert all("'index': 70549" in line and "'found': 255" in line for line in lines)


def test_an_ior_transfer_at_the_wrong_offset_is_caught(tmp_path):
    # Rank 1's own transfer for 65536 + 16384, written at 65536 + 32768 over the right one:
    # the same ramp, only its header word (which holds the offset) differs.
    damage = "os.pwrite(fd, ior.pattern_bytes(81920, 16384, 0, 16384).tobytes(), 98304)"
    lines = corrupt_ior_run(tmp_path, damage)
    # 81920 = 0x14000 and 98304 = 0x18000 differ in byte 1 of the header word only
    assert all(f": 1 of {IOR_SAMPLED} sampled values differ" in line for line in lines)
    assert all("'index': 98305" in line and "'rank': 1" in line for line in lines)
    assert all("'expected': 128, 'found': 64" in line for line in lines)


def test_intact_ior_data_passes_the_same_check(tmp_path):
    # The check above on an undamaged file: the failures come from the damage alone.
    lines = corrupt_ior_run(tmp_path, "pass")
    assert lines == ["rank 0: no mismatch found", "rank 1: no mismatch found"]


def test_values_at_matches_particle_values():
    import numpy as np
    import vpicio

    for name, _ in vpicio.DATASETS:
        slab = vpicio.particle_values(name, 1000, 50, 3)
        picked = vpicio.values_at(name, np.array([1000, 1020, 1049]), 3)
        assert (picked.view(np.uint32) == slab[[0, 20, 49]].view(np.uint32)).all()

