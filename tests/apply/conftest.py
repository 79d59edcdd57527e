"""Fixtures of the apply tests: a plain MPI program that prints the hints its file has, and
the preload library."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from iotune.preload import LIBRARY_ENV, build_library

PROGRAMS = Path(__file__).resolve().parent / "programs"


@pytest.fixture(scope="module")
def show_hints(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """programs/show_hints.c built with mpicc: two ranks write 1 MiB each of the file named
    by its argument and print ``hint key=value`` for every hint the file has."""
    out = tmp_path_factory.mktemp("programs") / "show_hints"
    done = subprocess.run(["mpicc", "-Wall", "-Werror", "-O2", "-o", str(out),
                           str(PROGRAMS / "show_hints.c")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return out


@pytest.fixture(scope="module")
def library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The preload library, built where ``apply`` will find it."""
    target = tmp_path_factory.mktemp("preload") / "libiotune_preload.so"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LIBRARY_ENV, str(target))
        return build_library()
