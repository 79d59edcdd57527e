"""The lines ``iotune apply`` prints, run in a bash job script around IOR, reach IOR's file:
its own ``--mpiio.showHints`` printout shows the tuned hints, which a job script without
them does not."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from tests.programs.vendored import ior_hints

pytestmark = pytest.mark.mpi

#: A tuned file's settings, as ROMIO reports them in effect (all differ from its defaults).
TUNED = {"cb_buffer_size": "4MiB", "romio_cb_write": "disable", "cb_nodes": 2,
         "cb_config_list": "*:2"}
IN_EFFECT = {"cb_buffer_size": "4194304", "romio_cb_write": "disable", "cb_nodes": "2",
             "cb_config_list": "*:2"}


def job(tmp_path: Path, ior: str, lines: str) -> dict[str, str]:
    """Run a bash job script of ``lines`` then IOR at 2 ranks, launched through the
    ``iotune_run`` function the lines define (as a user's launch line is); the hints IOR
    showed."""
    script = tmp_path / "job.sh"
    launch = "iotune_run " if lines else ""
    script.write_text("set -euo pipefail\n" + lines + "\n"
                      f"{launch}mpiexec -n 2 {ior} -a MPIIO -c -w -e -b 4k -t 4k -s 16 "
                      f"-o {tmp_path / 'ior.dat'} --mpiio.showHints\n")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("ROMIO_", "IOR_HINT", "IOTUNE_SETTINGS", "MPICH_MPIIO"))}
    done = subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return ior_hints(done.stdout)


@pytest.mark.parametrize("fmt", ["all", "romio", "ior", "preload"])
def test_the_apply_lines_of_a_tuned_file_reach_ior(program, tmp_path, fmt):
    ior = program("ior")
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text(yaml.safe_dump({"settings": TUNED}))
    applied = CliRunner().invoke(cli, ["apply", str(tuned), "--format", fmt])
    assert applied.exit_code == 0, applied.output
    shown = job(tmp_path, ior, applied.stdout)
    assert {k: shown.get(k) for k in IN_EFFECT} == IN_EFFECT


def test_without_the_lines_ior_shows_none_of_the_tuned_hints(program, tmp_path):
    shown = job(tmp_path, program("ior"), "")
    assert all(shown.get(k) != v for k, v in IN_EFFECT.items()), shown
