"""Telling a program that carries its own copy of HDF5 from one that links it shared."""

from __future__ import annotations

from iotune.execution import linkage
from iotune.execution.linkage import HDF5_BANNER, links_hdf5_statically, static_hdf5_program


def test_the_banner_of_a_copy_of_hdf5_is_found_across_reads(tmp_path, monkeypatch):
    monkeypatch.setattr(linkage, "CHUNK", 16)  # the banner straddles two reads
    static = tmp_path / "static"
    static.write_bytes(b"\x7fELF" + b"x" * 21 + HDF5_BANNER + b" 1.10.8")
    shared = tmp_path / "shared"
    shared.write_bytes(b"\x7fELF" + b"x" * 21 + b"H5Fcreate libhdf5_mpich.so.103")
    assert links_hdf5_statically(str(static))
    assert not links_hdf5_statically(str(shared))


def test_only_an_executable_counts(tmp_path):
    script = tmp_path / "script.py"
    script.write_bytes(b"# " + HDF5_BANNER)  # not an ELF file
    assert not links_hdf5_statically(str(script))
    assert not links_hdf5_statically(str(tmp_path / "missing"))
    assert not links_hdf5_statically(str(tmp_path))


def test_the_program_is_found_among_the_launcher_words(tmp_path):
    program = tmp_path / "ior"
    program.write_bytes(b"\x7fELF" + HDF5_BANNER)
    argv = ["mpiexec", "-n", "2", str(program), "-a", "HDF5", "-o", str(tmp_path / "out.h5")]
    assert static_hdf5_program(argv) == str(program)
    assert static_hdf5_program(["mpiexec", "-n", "2", "python3", "app.py"]) is None
