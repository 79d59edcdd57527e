"""The doctor runs MPI, mpi4py and h5py only in subprocesses: the driver never imports
them (they can hang on a login node)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.doctor.machine import parse, write_config

pytestmark = pytest.mark.mpi


def test_the_doctor_process_loads_no_mpi4py_or_h5py(tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    config = write_config(tmp_path / "c.yaml", scratch, tmp_path / "store.jsonl")
    code = ("import sys\n"
            "from iotune.cli.main import cli\n"
            "try:\n"
            f"    cli(['doctor', '-c', {str(config)!r}], standalone_mode=False)\n"
            "except SystemExit:\n"
            "    pass\n"
            "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mpi4py', 'h5py'))\n"
            "print('LOADED', bad)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600, check=False)
    *report, loaded = done.stdout.rstrip("\n").splitlines()
    assert loaded == "LOADED []", done.stdout + done.stderr
    lines, _ = parse("\n".join(report) + "\n")
    assert lines["h5py"].status == "ok"  # the checks that import them did run
