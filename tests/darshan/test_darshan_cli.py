"""``iotune profile`` and ``iotune match`` on the sample logs, and one-line errors everywhere."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import yaml
from darshan_helpers import IOR_FPP, IOR_HDF5, MACSIO, NO_POSIX, VPIC, cached_log, sample_log


def test_profile_table_shows_the_io_summary(run_cli):
    result = run_cli("profile", sample_log(IOR_HDF5))
    assert result.exit_code == 0, result.output
    out = result.stdout
    for text in ("ranks", "4 MiB in 23 writes", "1 shared, 0 per-process",
                 "writes 0 collective, 23 independent", "1 datasets", "100K_1M:16",
                 "Signature classes", "test123.h5", "log2_common_access"):
        assert text in out, text


def test_profile_json_matches_the_log(run_cli):
    result = run_cli("profile", sample_log(IOR_FPP), "--format", "json")
    assert result.exit_code == 0
    data = json.loads(result.stdout)
    posix = cached_log(IOR_FPP).counters["POSIX"]
    assert data["job"]["nprocs"] == 2048
    assert data["totals"]["bytes_written"] == posix["POSIX_BYTES_WRITTEN"].sum()
    assert data["totals"]["per_process_files"] == 2048 and data["totals"]["shared_files"] == 0
    assert data["request_sizes"]["posix_write"]["1M_4M"] == posix["POSIX_SIZE_WRITE_1M_4M"].sum()
    assert [c["files"] for c in data["classes"]] == [2048]


def test_profile_yaml_has_classes_with_features(run_cli):
    result = run_cli("profile", sample_log(MACSIO), "--format", "yaml")
    data = yaml.safe_load(result.stdout)
    assert data["hdf5"]["datasets"] == 1 and data["mpiio"]["collective_writes"] > 0
    assert data["classes"][0]["features"]["hdf5"] == 1.0


def test_match_ranks_vpic_first_for_the_vpic_log(run_cli):
    result = run_cli("match", sample_log(VPIC), "--format", "json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    ranking = data["ranking"]
    assert ranking[0]["kernel"] == "vpic-collective"
    assert [r["rank"] for r in ranking] == list(range(1, len(ranking) + 1))
    assert [r["pairwise"] for r in ranking] == sorted((r["pairwise"] for r in ranking),
                                                      reverse=True)
    assert set(data["ignored_features"]) == {"hdf5", "hdf5_collective", "log2_datasets"}


def test_match_ranks_hdf5_ior_first_for_the_ior_hdf5_log(run_cli):
    result = run_cli("match", sample_log(IOR_HDF5))
    assert result.exit_code == 0
    first = result.stdout.splitlines()[3].split()
    assert first[:2] == ["1", "ior-hdf5-shared"]


def test_match_can_compare_logs_of_kernel_runs(run_cli):
    result = run_cli("match", sample_log(IOR_HDF5), "--kernel-log", sample_log(IOR_HDF5),
                     "--kernel-log", sample_log(IOR_FPP), "--format", "json")
    ranking = json.loads(result.stdout)["ranking"]
    assert ranking[0]["kernel"] == "ior_hdf5_example" and ranking[0]["pairwise"] == 1.0
    names = [r["kernel"] for r in ranking]
    assert names.index("sample-badost") > names.index("ior-hdf5-shared")


@pytest.mark.parametrize(("command", "what"), [
    ("profile", "Darshan log"), ("match", "Darshan log"), ("proxy", "Darshan log"),
    ("phases", "Darshan log or DXT trace"), ("characterize", "Darshan log or DXT trace")])
def test_every_command_gives_one_line_for_a_missing_log(run_cli, tmp_path, command, what):
    extra = ["-o", tmp_path / "out.yaml"] if command in ("proxy", "characterize") else []
    missing = tmp_path / "absent.darshan"
    result = run_cli(command, missing, *extra)
    assert result.exit_code == 3
    assert result.stderr == f"iotune: error: {missing}: no such file (expected a {what})\n"
    assert not (tmp_path / "out.yaml").exists()


@pytest.mark.parametrize("command", ["profile", "match", "proxy"])
def test_not_a_darshan_log_and_missing_modules(run_cli, tmp_path, command):
    bogus = tmp_path / "notes.darshan"
    bogus.write_text("not binary at all\n")
    extra = ["-o", tmp_path / "p.yaml"] if command == "proxy" else []
    result = run_cli(command, bogus, *extra)
    assert result.exit_code == 3
    assert result.stderr == (f"iotune: error: {bogus}: not a Darshan log (no Darshan 3.x "
                             "header: version string and magic number)\n")
    result = run_cli(command, sample_log(NO_POSIX), *extra)
    assert result.exit_code == 3
    assert "no POSIX or MPI-IO or H5F or H5D records" in result.stderr
    assert "(modules in this log: LUSTRE, STDIO)" in result.stderr
    assert not (tmp_path / "p.yaml").exists()


def test_bad_class_index(run_cli):
    result = run_cli("match", sample_log(IOR_HDF5), "--class", "5")
    assert result.exit_code == 3
    assert result.stderr.strip().endswith("class 5 does not exist; the log has classes 0..0")


def test_the_driver_never_imports_pydarshan_mpi4py_or_h5py():
    code = (
        "import sys\n"
        "from click.testing import CliRunner\n"
        "from iotune.cli.darshan_commands import COMMANDS\n"
        "from iotune.cli.main import IotuneGroup\n"
        "g = IotuneGroup('iotune')\n"
        "[g.add_command(c) for c in COMMANDS]\n"
        f"r = CliRunner().invoke(g, ['profile', {str(sample_log(IOR_HDF5))!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        f"r = CliRunner().invoke(g, ['phases', {str(sample_log(IOR_HDF5))!r}])\n"
        "assert r.exit_code == 0, r.output\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & {'darshan', 'mpi4py', 'h5py'})\n"
        "print('LOADED', bad)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "LOADED []" in out.stdout
