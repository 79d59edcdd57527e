"""The C reference writer (``benchmarks/c/bare_writer.c``) writes byte for byte what the
IOR-style kernel writes, so that ``benchmarks/kernels_vs_c.py`` compares equal work.

Real MPI at 2 ranks: the writer is compiled with ``mpicc``, both programs write with the same
flags and keep their files, and the files are compared whole.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from kernel_helpers import KERNELS, REPO, mpiexec, run_program

pytestmark = pytest.mark.mpi

SOURCE = REPO / "benchmarks" / "c" / "bare_writer.c"


@pytest.fixture(scope="module")
def bare_writer(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C writer built with ``mpicc -O2`` (POSIX and MPI-IO)."""
    binary = tmp_path_factory.mktemp("build") / "bare_writer"
    done = subprocess.run(["mpicc", "-O2", "-Wall", "-Werror", str(SOURCE), "-o", str(binary)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    return binary


@pytest.mark.parametrize(("api", "collective", "fpp", "block", "transfer"), [
    ("posix", "no", "no", 65, 13),  # transfers not a multiple of 8 bytes
    ("posix", "no", "yes", 20, 5),  # transfers shorter than the header word
    ("mpiio", "yes", "no", 65536, 16384),
    ("mpiio", "no", "yes", 24576, 8192),
])  # fmt: skip
def test_the_c_writer_writes_the_kernels_bytes(
    bare_writer: Path, tmp_path: Path, api: str, collective: str, fpp: str, block: int,
    transfer: int,
) -> None:
    flags = ["--api", api, "--collective", collective, "--file-per-process", fpp,
             "--segments", "2", "--block-size", str(block), "--transfer-size", str(transfer)]
    c_dir, scratch = tmp_path / "c", tmp_path / "scratch"
    c_dir.mkdir()
    scratch.mkdir()
    c_run = run_program(["mpiexec", "-n", "2", str(bare_writer), *flags, "--dir", str(c_dir),
                         "--keep"])  # fmt: skip
    assert c_run.returncode == 0, c_run.stderr
    py_run = run_program(mpiexec(2, str(KERNELS / "ior.py"), *flags, "--scratch", str(scratch),
                                 "--keep"))  # fmt: skip
    assert py_run.returncode == 0, py_run.stderr
    kernel_dir = Path(py_run.result()["output_dir"])

    names = ["ior.00000000.dat", "ior.00000001.dat"] if fpp == "yes" else ["ior.dat"]
    assert sorted(p.name for p in c_dir.iterdir()) == names
    for name in names:
        c_bytes = (c_dir / name).read_bytes()
        assert len(c_bytes) == 2 * block * (1 if fpp == "yes" else 2)
        assert c_bytes == (kernel_dir / name).read_bytes(), name
