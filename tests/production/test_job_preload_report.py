"""``iotune job finish --preload-report``: a job's I/O seconds measured inside the
application by the preload library (a real mpi4py program at 2 ranks), per file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from iotune.preload import LIBRARY_ENV, OUT_ENV, SETTINGS_ENV, build_library
from iotune.store import Store
from tests.cli_result import invoke

MIB = 1 << 20
TIMEOUT_S = 120
#: A checkpoint written collectively, then a small log written by rank 0 alone.
PROGRAM = """
import sys
import numpy as np
from mpi4py import MPI
comm = MPI.COMM_WORLD
out = sys.argv[1]
f = MPI.File.Open(comm, out + "/ckpt_0.dat", MPI.MODE_CREATE | MPI.MODE_WRONLY)
f.Write_at_all(comm.rank * (1 << 20), np.full(1 << 20, comm.rank, dtype=np.uint8))
f.Close()
if comm.rank == 0:
    f = MPI.File.Open(MPI.COMM_SELF, out + "/log.txt", MPI.MODE_CREATE | MPI.MODE_WRONLY)
    f.Write(b"done\\n")
    f.Close()
"""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The preload report of one run of PROGRAM under the library (no settings)."""
    base = tmp_path_factory.mktemp("job")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LIBRARY_ENV, str(base / "libiotune_preload.so"))
        library = build_library()
    script = base / "app.py"
    script.write_text(PROGRAM)
    out = base / "report.json"
    env = {k: v for k, v in os.environ.items() if k not in ("ROMIO_HINTS", SETTINGS_ENV)}
    env.update(LD_PRELOAD=str(library), **{OUT_ENV: str(out)})
    done = subprocess.run(["mpiexec", "-n", "2", sys.executable, str(script), str(base)],
                          env=env, capture_output=True, text=True, timeout=TIMEOUT_S,
                          check=False)
    assert done.returncode == 0, done.stderr
    return out


def _finish(store: Path, job: str, *args: str) -> dict:
    started = invoke("job", "start", "--store", str(store), "--tag", "app", "--job-id", job)
    assert started.exit_code == 0, started.output
    finished = invoke("job", "finish", "--store", str(store), "--tag", "app", "--job-id", job,
                      *args)
    assert finished.exit_code == 0, finished.output
    return Store(store).records()[-1]


@pytest.mark.mpi
def test_the_seconds_are_the_open_to_close_times_of_the_matching_files(report, tmp_path):
    files = {Path(f["path"]).name: f for f in json.loads(report.read_text())["files"]}
    assert set(files) == {"ckpt_0.dat", "log.txt"}
    ckpt, log = files["ckpt_0.dat"], files["log.txt"]
    assert ckpt["bytes_written"] == 2 * MIB and log["bytes_written"] == 5
    store = tmp_path / "prod.jsonl"
    record = _finish(store, "j0", "--preload-report", str(report), "--files", "*/ckpt_*.dat")
    assert record["status"] == "ok" and record["io_seconds"] == ckpt["open_s"] > 0
    assert record["io_source"] == {"preload_report": str(report), "pattern": "*/ckpt_*.dat",
                                   "files": 1, "opens": 1, "bytes_written": 2 * MIB,
                                   "bytes_read": 0}
    # Without --files every file counts; --seconds still works beside it.
    record = _finish(store, "j1", "--preload-report", str(report))
    assert record["io_seconds"] == pytest.approx(ckpt["open_s"] + log["open_s"])
    assert record["io_source"]["files"] == 2
    assert _finish(store, "j2", "--seconds", "2.5")["io_seconds"] == 2.5
    shown = invoke("job", "status", "--store", str(store), "--tag", "app", "--format", "json")
    assert shown.exit_code == 0 and json.loads(shown.output)["jobs"] == 3
