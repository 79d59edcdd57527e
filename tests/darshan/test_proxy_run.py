"""Rajesh et al.'s proxy, run: the signature of what the proxy kernel really did (its
system calls traced), its similarity to the application beside the predicted one."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
from darshan_helpers import IOR_HDF5, sample_log

from iotune.darshan.measured import (
    POSIX_FEATURES,
    Request,
    TracingLauncher,
    parse_strace,
    posix_counters,
)
from iotune.darshan.signature import FEATURE_NAMES, signature
from iotune.execution.launchers import LaunchRequest, make_launcher

RUN = "/scratch/iotune-ior-1/"
TRACE = f"""\
openat(AT_FDCWD</home>, "{RUN}ior.h5", O_RDWR|O_CREAT, 0644) = 7<{RUN}ior.h5>
pwrite64(7<{RUN}ior.h5>, ""..., 40, 0) = 40
pwrite64(7<{RUN}ior.h5>, ""..., 262144, 2048) = 262144
pwrite64(7<{RUN}ior.h5>, ""..., 262144, 264192) = 262144
read(3</usr/lib/python3.11/os.py>, ""..., 4096) = 4096
lseek(7<{RUN}ior.h5>, 2048, SEEK_SET) = 2048
read(7<{RUN}ior.h5>, ""..., 262144) = 262144
read(7<{RUN}ior.h5>, ""..., 262144) = 262144
pread64(7<{RUN}ior.h5>, ""..., 544, 0) = 544
fsync(7<{RUN}ior.h5>) = 0
write(9<{RUN}.iotune-owner>, ""..., 12) = 12
pwrite64(7<{RUN}ior.h5>, ""..., 8, 99) = -1 EBADF (Bad file descriptor)
"""


def test_strace_lines_become_requests_with_their_offsets():
    requests, syncs = parse_strace(TRACE, 41, RUN)
    assert [(r.op, r.offset, r.length) for r in requests if "owner" not in r.path] == [
        ("write", 0, 40), ("write", 2048, 262144), ("write", 264192, 262144),
        ("read", 2048, 262144), ("read", 264192, 262144),  # offsets from lseek and reads
        ("read", 0, 544)]
    assert {r.pid for r in requests} == {41}
    assert syncs == Counter({f"{RUN}ior.h5": 1})
    assert not any("python3.11" in r.path for r in requests)  # outside the run directory


def test_posix_counters_follow_darshans_rules():
    def req(pid, op, offset, length):
        return Request(pid, "/f", op, offset, length)

    requests = [req(1, "write", 0, 100), req(1, "write", 100, 100), req(1, "write", 500, 100),
                req(2, "write", 200, 100), req(1, "read", 0, 100), req(1, "write", 50, 1000)]
    (fc,) = posix_counters(requests, Counter({"/f": 2}), nprocs=2)
    p = fc.posix
    assert fc.ranks == 2 and p["POSIX_WRITES"] == 5 and p["POSIX_READS"] == 1
    assert p["POSIX_BYTES_WRITTEN"] == 1400 and p["POSIX_BYTES_READ"] == 100
    # rank 1's writes: 0 (first, at 0: neither), 100 (right after byte 99: both), 500
    # (past 199: sequential), 50 (behind 599: neither); rank 2's first at 200: sequential
    assert p["POSIX_CONSEC_WRITES"] == 1 and p["POSIX_SEQ_WRITES"] == 3
    assert p["POSIX_RW_SWITCHES"] == 2  # rank 1: write -> read -> write
    # Darshan's bins hold their upper bound: 100 bytes is 0_100, 1000 bytes 100_1K
    assert p["POSIX_SIZE_WRITE_0_100"] == 4 and p["POSIX_SIZE_WRITE_100_1K"] == 1
    assert p["POSIX_ACCESS1_ACCESS"] == 100 and p["POSIX_ACCESS1_COUNT"] == 5
    assert p["POSIX_FSYNCS"] == 2
    vector = dict(zip(FEATURE_NAMES, signature(fc), strict=True))
    assert vector["shared_file"] == 1.0 and vector["sync"] == 1.0 and vector["mpiio"] == 0.0


def test_the_traced_features_are_the_posix_layers():
    assert "posix_write_1M_4M" in POSIX_FEATURES and "sync" in POSIX_FEATURES
    assert not {"mpiio", "hdf5", "collective_writes", "log2_datasets",
                "mpiio_write_0_100"} & set(POSIX_FEATURES)
    assert set(POSIX_FEATURES) <= set(FEATURE_NAMES)


def test_the_tracing_launcher_wraps_the_launch():
    launcher = TracingLauncher(make_launcher("mpiexec", None), __import__("pathlib").Path("/t"),
                               "/usr/bin/strace")
    argv = launcher.argv(LaunchRequest(2, ("python", "k.py")))
    assert argv[:3] == ["/usr/bin/strace", "-f", "-ff"]
    assert argv[argv.index("--") + 1:] == ["mpiexec", "-n", "2", "python", "k.py"]
    assert "-y" in argv and argv[argv.index("-o") + 1] == "/t/t"


#: How far the measured similarity may fall from the predicted one for a matching
#: workload. The analytic model of IOR through HDF5 leaves out the fsync the kernel does
#: before it reads back (so "sync" differs) and the HDF5 metadata writes' order (so
#: consecutive and sequential shares differ a little): 0.978 predicted, 0.958 measured
#: here at 2 ranks. 0.05 is one whole differing feature of a 20-feature signature less
#: (sqrt(19/20) = 0.975), so it catches a wrong layer, size or sharing, not these.
TOLERANCE = 0.05


@pytest.mark.mpi
@pytest.mark.skipif(shutil.which("strace") is None, reason="strace is not installed")
def test_the_proxy_run_measures_a_similarity_near_the_predicted(run_cli, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    config = tmp_path / "c.yaml"
    config.write_text(f"system: {{scratch: {scratch}}}\n")
    result = run_cli("proxy", sample_log(IOR_HDF5), "-o", tmp_path / "p.yaml", "--run",
                     "-c", config, "--format", "json")
    assert result.exit_code == 0, result.output
    measured = json.loads(result.stdout)["measured"]
    assert measured["ranks"] == 2 and measured["measured_file"].endswith(".h5")
    assert measured["measured_counters"]["POSIX_WRITES"] > 0
    assert measured["measured_counters"]["POSIX_READS"] > 0  # access: both, as the log
    assert abs(measured["measured_similarity"] - measured["predicted_similarity"]) <= TOLERANCE
    assert measured["measured_similarity"] >= 0.9
    assert measured["model_similarity"] >= 1 - TOLERANCE
    assert not any(scratch.iterdir())
    text = run_cli("proxy", sample_log(IOR_HDF5), "-o", tmp_path / "p.yaml", "--force",
                   "--run", "-c", config).stdout
    assert "ran at 2 ranks (MEASURED: its POSIX requests traced)" in text
    assert "predicted 0.9" in text and "measured 0.9" in text
