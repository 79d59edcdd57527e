"""``iotune apply`` in real job scripts around real MPI programs (2 ranks).

Each test writes a tuned file shaped like the ones ``iotune tune`` writes (for the vpic
and ior kernels and for a command kernel), prints its lines with ``iotune apply``, pastes
them into a job script under ``set -euo pipefail`` in front of an ``mpiexec`` of a program
that knows nothing of iotune, runs it, and reads the settings in effect from inside the
program: its own ``MPI_File_get_info`` (programs/show_hints.c), or the preload library's
report for the h5py lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import h5py
import pytest
import yaml
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.preload import LIBRARY_ENV, OUT_ENV

TIMEOUT_S = 120
SETTINGS = {"cb_buffer_size": "4MiB", "romio_cb_write": "disable", "romio_ds_write": "disable",
            "stripe_count": 4, "alignment": "1MiB"}
#: What the program's file must show when the MPI-IO hints took effect.
IN_EFFECT = {"cb_buffer_size": "4194304", "romio_cb_write": "disable",
             "romio_ds_write": "disable"}
KERNELS = {
    "vpic": {"particles_per_rank": 8388608, "timesteps": 1, "fsync": False},
    "ior": {"transfer_size": 1048576, "segments": 1},
    "command": {"command": "./my_app -o {scratch}/out.dat", "output_dir": "", "metric": "wall",
                "preload": "auto"},
}


def tuned_file(tmp_path: Path, kernel: str) -> Path:
    """A tuned file as ``iotune tune -o`` writes it for ``kernel``."""
    doc = {"schema_version": 1, "kernel": kernel, "kernel_args": KERNELS[kernel],
           "target": "write", "cores": 2, "nodes": 1, "system": "local", "backend": "mpi",
           "provenance": "measured", "recommendation": "tuned",
           "reason": "faster than the default with 90% confidence", "settings": SETTINGS}
    path = tmp_path / f"tuned-{kernel}.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def apply_lines(tuned: Path, fmt: str, library: Path) -> str:
    result = CliRunner().invoke(cli, ["apply", str(tuned), "--format", fmt],
                                env={LIBRARY_ENV: str(library)})
    assert result.exit_code == 0, result.output
    lines = result.stdout
    check = subprocess.run(["bash", "-n", "-c", lines], capture_output=True, text=True,
                           check=False)
    assert check.returncode == 0, check.stderr
    return lines


def run_job(tmp_path: Path, lines: str, program: list[str], path: str = "/usr/bin:/bin",
            extra_env: dict[str, str] | None = None,
            after: str = "") -> subprocess.CompletedProcess[str]:
    """A job script: the lines, then ``iotune_run mpiexec -n 2 program`` (``mpiexec`` alone
    without lines), then ``after``; run in tmp_path."""
    output = tmp_path / "out"
    output.mkdir(exist_ok=True)
    script = tmp_path / "job.sh"
    launch = ("iotune_run " if lines else "") + "mpiexec -n 2 " + " ".join(program)
    script.write_text("#!/bin/bash\nset -euo pipefail\n" + lines + "\n\n" + launch + "\n"
                      + after + "\n")
    env = {"PATH": path, "HOME": str(tmp_path), "OUTPUT_DIR": str(output),
           **(extra_env or {})}
    return subprocess.run(["bash", str(script)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=TIMEOUT_S, check=False)


def printed(stdout: str, kind: str) -> dict[str, str]:
    """The program's ``hint k=v`` or ``env k=v`` lines as a mapping."""
    pairs = [line.split(" ", 1)[1].split("=", 1) for line in stdout.splitlines()
             if line.startswith(kind + " ")]
    return {key: value for key, value in pairs}


@pytest.mark.mpi
@pytest.mark.parametrize("kernel", list(KERNELS))
@pytest.mark.parametrize("fmt", ["all", "romio", "preload"])
def test_the_programs_file_has_the_tuned_hints(tmp_path, show_hints, library, kernel, fmt):
    lines = apply_lines(tuned_file(tmp_path, kernel), fmt, library)
    job = run_job(tmp_path, lines, [str(show_hints), '"$OUTPUT_DIR/out.dat"'])
    assert job.returncode == 0, job.stderr
    hints = printed(job.stdout, "hint")
    assert {k: hints.get(k) for k in IN_EFFECT} == IN_EFFECT
    if fmt == "all":  # no lfs here: said once, and the job went on
        assert "iotune: no lfs command (not a Lustre system): striping not applied" \
            in job.stderr


@pytest.mark.mpi
def test_a_tool_run_after_the_program_sees_none_of_the_settings(tmp_path, show_hints,
                                                                library):
    # An h5dump after the program used to run under the exported LD_PRELOAD and settings.
    with h5py.File(tmp_path / "small.h5", "w") as f:
        f["x"] = [1, 2, 3]
    lines = apply_lines(tuned_file(tmp_path, "command"), "all", library)
    job = run_job(tmp_path, lines, [str(show_hints), '"$OUTPUT_DIR/out.dat"'],
                  after='echo "-- after the program" >&2\nh5dump -d /x small.h5\n'
                        'env | grep -E "^(LD_PRELOAD|IOTUNE_|ROMIO_HINTS|MPICH_MPIIO|IOR_HINT)"'
                        ' || echo "no settings after the program"')
    assert job.returncode == 0, job.stderr
    assert {k: printed(job.stdout, "hint").get(k) for k in IN_EFFECT} == IN_EFFECT
    assert "(0): 1, 2, 3" in job.stdout
    assert job.stdout.rstrip().endswith("no settings after the program")
    assert "iotune preload" not in job.stderr.split("-- after the program", 1)[1]


@pytest.mark.mpi
def test_without_the_lines_the_program_runs_with_romios_defaults(tmp_path, show_hints):
    # The control for the test above: the same program, no tuned lines.
    job = run_job(tmp_path, "", [str(show_hints), '"$OUTPUT_DIR/out.dat"'])
    assert job.returncode == 0, job.stderr
    hints = printed(job.stdout, "hint")
    assert hints["romio_cb_write"] != "disable"
    assert hints["cb_buffer_size"] != "4194304"


@pytest.mark.mpi
def test_lustre_lines_stripe_the_output_directory_before_the_program_runs(tmp_path,
                                                                          show_hints,
                                                                          library):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "lfs").write_text(f'#!/bin/sh\necho "$@" >> {tmp_path / "lfs-calls"}\n')
    (bin_dir / "lfs").chmod(0o755)
    lines = apply_lines(tuned_file(tmp_path, "vpic"), "lustre", library)
    job = run_job(tmp_path, lines, [str(show_hints), '"$OUTPUT_DIR/out.dat"'],
                  path=f"{bin_dir}:/usr/bin:/bin")
    assert job.returncode == 0, job.stderr
    assert (tmp_path / "lfs-calls").read_text() == f"setstripe -c 4 {tmp_path}/out\n"
    assert (tmp_path / "out" / "out.dat").stat().st_size == 2 * 2**20


@pytest.mark.mpi
@pytest.mark.parametrize(("fmt", "variables"), [
    ("cray", {"MPICH_MPIIO_HINTS": "*:cb_buffer_size=4194304:romio_cb_write=disable:"
                                   "romio_ds_write=disable:striping_factor=4"}),
    ("ior", {"IOR_HINT__MPI__cb_buffer_size": "4194304",
             "IOR_HINT__MPI__romio_cb_write": "disable",
             "IOR_HINT__MPI__striping_factor": "4"}),
])
def test_cray_and_ior_lines_reach_the_programs_environment(tmp_path, show_hints, library,
                                                           fmt, variables):
    # Only Cray MPICH reads MPICH_MPIIO_HINTS and only IOR reads IOR_HINT__MPI__*; here
    # the check is that the job runs and the program is started with them.
    lines = apply_lines(tuned_file(tmp_path, "ior"), fmt, library)
    job = run_job(tmp_path, lines, [str(show_hints), '"$OUTPUT_DIR/out.dat"'])
    assert job.returncode == 0, job.stderr
    env = printed(job.stdout, "env")
    assert {k: env.get(k) for k in variables} == variables


H5PY_TAIL = """
import numpy as np
n = 131072
data = f.create_dataset("data", (MPI.COMM_WORLD.size * n,), dtype="f8")
rank = MPI.COMM_WORLD.rank
data[rank * n:(rank + 1) * n] = np.full(n, float(rank))
f.close()
"""


@pytest.mark.mpi
def test_h5py_lines_in_a_python_program_set_hints_and_alignment(tmp_path, library):
    program = tmp_path / "app.py"
    program.write_text(apply_lines_python(tuned_file(tmp_path, "vpic"), library) + H5PY_TAIL)
    report = tmp_path / "preload.json"
    # The preload library without settings only reports what the file had.
    job = run_job(tmp_path, "", [sys.executable, str(program)],
                  path=os.environ["PATH"],
                  extra_env={"LD_PRELOAD": str(library), OUT_ENV: str(report)})
    assert job.returncode == 0, job.stderr
    files = json.loads(report.read_text())["files"]
    created = next(f for f in files if f["opened_by"] == "H5Fcreate")
    assert {k: created["hints_in_effect"].get(k) for k in IN_EFFECT} == IN_EFFECT
    with h5py.File(tmp_path / "output.h5", "r") as f:
        assert f["data"].id.get_offset() % 2**20 == 0


def apply_lines_python(tuned: Path, library: Path) -> str:
    result = CliRunner().invoke(cli, ["apply", str(tuned), "--format", "h5py"],
                                env={LIBRARY_ENV: str(library)})
    assert result.exit_code == 0, result.output
    compile(result.stdout, "h5py-lines", "exec")
    return result.stdout


#: A tuned file with per-file settings: the checkpoint its own, logs nothing at all, every
#: other file the top-level settings.
PER_FILE = {"schema_version": 1, "kernel": "command", "cores": 2, "provenance": "measured",
            "settings": {"cb_buffer_size": "4MiB"},
            "files": {"*/ckpt_*": {"cb_buffer_size": "2MiB", "romio_cb_write": "disable"},
                      "*.log": {}}}


@pytest.mark.mpi
@pytest.mark.parametrize("fmt", ["auto", "preload"])
def test_per_file_settings_reach_each_file(tmp_path, show_hints, library, fmt):
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text(yaml.safe_dump(PER_FILE))
    lines = apply_lines(tuned, fmt, library)
    # The hints file would apply to every file, so the lines say it is not used.
    assert "ROMIO_HINTS=" not in lines
    if fmt == "auto":
        assert "# ROMIO hints file: applies to every file, so not used" in lines
    default = printed(run_job(tmp_path, "", [str(show_hints), "plain.dat"]).stdout, "hint")
    assert default["cb_buffer_size"] not in ("4194304", "2097152")
    seen = {}
    for name in ("out/ckpt_1.dat", "plot.dat", "run.log"):
        job = run_job(tmp_path, lines, [str(show_hints), name])
        assert job.returncode == 0, job.stderr
        hints = printed(job.stdout, "hint")
        seen[name] = (hints["cb_buffer_size"], hints["romio_cb_write"])
    assert seen == {"out/ckpt_1.dat": ("2097152", "disable"),
                    "plot.dat": ("4194304", default["romio_cb_write"]),
                    "run.log": (default["cb_buffer_size"], default["romio_cb_write"])}


def test_per_file_settings_are_left_out_of_mechanisms_for_every_file(tmp_path, library):
    tuned = tmp_path / "tuned.yaml"
    tuned.write_text(yaml.safe_dump(PER_FILE))
    for fmt in ("romio", "cray", "ior"):
        lines = apply_lines(tuned, fmt, library)
        assert "# per-file settings (files:) are applied by the preload library alone: " \
               "--format preload" in lines
        assert "iotune_run() { \"$@\"; }" in lines  # the program runs with nothing set


#: A candidate whose patterns overlap: the checkpoint matches both, and only its own
#: (first) pattern's settings may reach it. Alphabetically "*" sorts first.
OVERLAPPING = ("schema_version: 1\nkernel: command\ncores: 2\nprovenance: measured\n"
               "recommendation: tuned\nsettings: {}\nfiles:\n"
               "  '*/ckpt_*.dat': {romio_cb_write: disable}\n"
               "  '*': {cb_buffer_size: 1MiB}\n")


@pytest.mark.mpi
def test_a_settled_campaign_keeps_the_candidates_pattern_order_to_the_program(
        tmp_path, show_hints, library):
    """Candidate -> start records -> settled tuned file -> apply -> each file's hints."""
    candidate, settled = tmp_path / "cand.yaml", tmp_path / "settled.yaml"
    candidate.write_text(OVERLAPPING)
    store = str(tmp_path / "prod.jsonl")
    for i in range(20):
        start = CliRunner().invoke(cli, ["job", "start", "--store", store, "--tag", "app",
                                         "--job-id", f"j{i}", "--candidate", str(candidate)])
        assert start.exit_code == 0, start.output
        chosen = start.stdout.split(": ", 1)[1].split(" ", 1)[0]
        seconds = 10.0 if chosen == "default" else 5.0 * (1 + 0.02 * (i % 3))
        finish = CliRunner().invoke(cli, ["job", "finish", "--store", store, "--tag", "app",
                                          "--job-id", f"j{i}", "--seconds", str(seconds),
                                          "--tuned", str(settled)])
        assert finish.exit_code == 0, finish.output
        if settled.exists():
            break
    doc = yaml.safe_load(settled.read_text())
    assert doc["recommendation"] == "tuned"
    assert [entry["pattern"] for entry in doc["files"]] == ["*/ckpt_*.dat", "*"]
    # A tool that sorts keys cannot reorder the list: the file reads back the same.
    resorted = tmp_path / "resorted.yaml"
    resorted.write_text(yaml.safe_dump(doc, sort_keys=True))
    for tuned in (settled, resorted):
        lines = apply_lines(tuned, "auto", library)
        seen = {}
        for name in ("out/ckpt_1.dat", "plot.dat"):
            job = run_job(tmp_path, lines, [str(show_hints), name])
            assert job.returncode == 0, job.stderr
            hints = printed(job.stdout, "hint")
            seen[name] = (hints["romio_cb_write"], hints["cb_buffer_size"])
        default = printed(run_job(tmp_path, "", [str(show_hints), "plain.dat"]).stdout, "hint")
        assert default["romio_cb_write"] != "disable" and default["cb_buffer_size"] != "1048576"
        assert seen == {"out/ckpt_1.dat": ("disable", default["cb_buffer_size"]),
                        "plot.dat": (default["romio_cb_write"], "1048576")}
