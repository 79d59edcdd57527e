"""Proxies that say how good they are, and every command that takes a proxy file."""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from click.testing import CliRunner
from darshan_helpers import IOR_HDF5, MACSIO, sample_log

from iotune.cli.main import cli
from iotune.darshan import kernel_of
from iotune.darshan.proxy import MIN_SIMILARITY, UNMATCHED_SHOWN, mismatches, read_proxy
from iotune.darshan.signature import FEATURE_INDEX, FEATURE_NAMES
from iotune.darshan.similarity import pairwise_gaps, pairwise_similarity
from iotune.errors import ConfigError
from iotune.store import Store

NO_MASK = np.ones(len(FEATURE_NAMES))


def _vector(**features: float) -> np.ndarray:
    out = np.zeros(len(FEATURE_NAMES))
    for name, value in features.items():
        out[FEATURE_INDEX[name]] = value
    return out


def test_gaps_are_shares_of_the_normalised_differences() -> None:
    a = _vector(write_share=0.5, read_share=0.5, log2_write_size=20.0, log2_rank_bytes=16.0)
    b = _vector(write_share=1.0, log2_write_size=10.0, log2_rank_bytes=16.0)
    shares = pairwise_gaps(a, b)
    # Normalised differences: write_share 0.5, read_share 1, log2_write_size 0.5.
    total = 0.25 + 1.0 + 0.25
    assert shares[FEATURE_INDEX["read_share"]] == pytest.approx(1.0 / total)
    assert shares[FEATURE_INDEX["write_share"]] == pytest.approx(0.25 / total)
    assert shares[FEATURE_INDEX["log2_write_size"]] == pytest.approx(0.25 / total)
    assert shares[FEATURE_INDEX["log2_rank_bytes"]] == 0.0
    assert shares.sum() == pytest.approx(1.0)
    assert not pairwise_gaps(a, a).any()
    assert pairwise_similarity(a, b) < 1.0


def test_a_read_only_file_against_a_write_proxy_names_the_read_write_features() -> None:
    log = _vector(read_share=1.0, posix_read_1K_10K=1.0, log2_read_size=13.0,
                  log2_rank_bytes=20.0, sequential_reads=1.0)
    proxy = _vector(write_share=1.0, posix_write_1K_10K=1.0, log2_write_size=13.0,
                    log2_rank_bytes=20.0, sequential_writes=1.0)
    found = mismatches(log, proxy, NO_MASK)
    assert len(found) == UNMATCHED_SHOWN
    assert {m.feature for m in found} <= {"read_share", "posix_read_1K_10K", "log2_read_size",
                                           "sequential_reads", "write_share",
                                           "posix_write_1K_10K", "log2_write_size",
                                           "sequential_writes"}
    assert "log2_rank_bytes" not in {m.feature for m in mismatches(log, proxy, NO_MASK, 99)}
    first = found[0]
    assert (first.log, first.proxy) in ((1.0, 0.0), (0.0, 1.0))
    assert sum(m.gap_share for m in mismatches(log, proxy, NO_MASK, 99)) == pytest.approx(1.0)


def test_a_negligible_difference_is_not_named() -> None:
    log = _vector(hdf5=1.0, write_share=1.0, log2_rank_bytes=20.0)
    proxy = _vector(write_share=1.0, log2_rank_bytes=19.9)
    assert pairwise_gaps(log, proxy)[FEATURE_INDEX["log2_rank_bytes"]] > 0
    assert [m.feature for m in mismatches(log, proxy, NO_MASK)] == ["hdf5"]


def test_masked_features_are_never_named() -> None:
    log, proxy = _vector(hdf5=1.0, write_share=1.0), _vector(write_share=1.0)
    assert [m.feature for m in mismatches(log, proxy, NO_MASK)] == ["hdf5"]
    mask = NO_MASK.copy()
    mask[FEATURE_INDEX["hdf5"]] = 0.0
    assert mismatches(log, proxy, mask) == []


def test_a_poor_proxy_warns_and_records_what_it_could_not_match(run_cli, tmp_path) -> None:
    out = tmp_path / "macsio.yaml"
    result = run_cli("proxy", sample_log(MACSIO), "-o", out, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(out.read_text())
    assert doc["similarity"] < MIN_SIMILARITY and doc["min_similarity"] == MIN_SIMILARITY
    named = [m["feature"] for m in doc["unmatched"]]
    assert len(named) == UNMATCHED_SHOWN and all(name in FEATURE_INDEX for name in named)
    assert all(0 < m["gap_share"] <= 1 for m in doc["unmatched"])
    warning = [line for line in result.stderr.splitlines() if "warning" in line]
    assert len(warning) == 1
    assert f"similarity {doc['similarity']:.4f} is below {MIN_SIMILARITY:g}" in warning[0]
    assert all(name in warning[0] for name in named)
    assert json.loads(result.stdout)["warning"] in warning[0]
    proxy = read_proxy(out)
    assert proxy.warning() is not None and [m.feature for m in proxy.unmatched] == named


def test_a_good_proxy_does_not_warn_and_the_threshold_is_an_option(run_cli, tmp_path) -> None:
    good = run_cli("proxy", sample_log(IOR_HDF5), "-o", tmp_path / "ior.yaml")
    assert good.exit_code == 0 and "warning" not in good.stderr
    assert read_proxy(tmp_path / "ior.yaml").warning() is None
    lenient = run_cli("proxy", sample_log(MACSIO), "-o", tmp_path / "m.yaml",
                      "--min-similarity", "0.5")
    assert lenient.exit_code == 0 and "warning" not in lenient.stderr
    assert yaml.safe_load((tmp_path / "m.yaml").read_text())["min_similarity"] == 0.5
    bad = run_cli("proxy", sample_log(IOR_HDF5), "-o", tmp_path / "x.yaml",
                  "--min-similarity", "1.5")
    assert bad.exit_code == 2 and "--min-similarity" in bad.output


def _proxy_file(tmp_path, **extra) -> str:
    doc = {"schema_version": 1, "kernel": "ior",
           "args": {"api": "mpiio", "transfer_size": 4096, "block_size": 16384,
                    "segments": 2, "file_per_process": False},
           "settings": {"collective": True}, "ranks": 2, **extra}
    path = tmp_path / "proxy.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


@pytest.mark.parametrize(("extra", "message"), [
    ({"min_similarity": "high"}, "min_similarity 'high' is not a number from -1 to 1"),
    ({"similarity": 2}, "similarity 2 is not a number from -1 to 1"),
    ({"unmatched": {"a": 1}}, "unmatched must be a list of"),
    ({"unmatched": [{"feature": "x"}]}, r"unmatched\[0\] must be a list of"),
])
def test_bad_quality_keys_are_one_line_errors(tmp_path, extra, message) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        read_proxy(_proxy_file(tmp_path, **extra))
    assert "\n" not in str(caught.value)


def test_kernel_of_resolves_proxy_files_and_passes_names_through(tmp_path) -> None:
    assert kernel_of(_proxy_file(tmp_path)) == "ior"
    assert kernel_of("vpic") == "vpic"
    with pytest.raises(ConfigError, match="proxy file not found"):
        kernel_of(str(tmp_path / "none.yaml"))


def _invoke(*args: str):
    result = CliRunner().invoke(cli, list(args))
    assert "Traceback" not in result.output, result.output
    return result


def test_run_dry_run_of_a_proxy_uses_its_args_settings_and_ranks(write_config, tmp_path) -> None:
    config = str(write_config())
    proxy = _proxy_file(tmp_path, similarity=0.5, min_similarity=0.95,
                        unmatched=[{"feature": "read_share", "log": 1.0, "proxy": 0.0,
                                    "gap_share": 0.6}])
    result = _invoke("run", "-c", config, "--kernel", proxy, "--dry-run")
    assert result.exit_code == 0, result.output
    line = result.stdout
    assert line.startswith("mpiexec -n 2 ") and "ior.py --api mpiio" in line
    assert all(arg in line for arg in ("--transfer-size 4096 ", "--block-size 16384 ",
                                       "--segments 2 "))
    assert "--collective yes" in line
    assert "warning" in result.stderr and "read_share (log 1, proxy 0" in result.stderr
    overridden = _invoke("run", "-c", config, "--kernel", proxy, "--cores", "4",
                         "--set", "collective=false", "--dry-run")
    assert overridden.exit_code == 0, overridden.output
    assert overridden.stdout.startswith("mpiexec -n 4 ")
    assert "--collective no" in overridden.stdout


def test_run_without_cores_or_a_proxy_is_a_one_line_error(write_config) -> None:
    result = _invoke("run", "-c", str(write_config()), "--kernel", "ior", "--dry-run")
    assert result.exit_code != 0
    assert "--cores: missing" in result.output


@pytest.mark.mpi
def test_run_measures_a_proxy_for_real(write_config, tmp_path) -> None:
    config = str(write_config())
    result = _invoke("run", "-c", config, "--kernel", _proxy_file(tmp_path), "--format",
                     "json")
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert record["status"] == "ok" and record["kernel"] == "ior" and record["cores"] == 2
    assert record["settings"]["collective"] is True
    assert record["result"]["bytes_written"] == 2 * 2 * 16384
    assert [r["id"] for r in Store(tmp_path / "store.jsonl").records()] == [record["id"]]
