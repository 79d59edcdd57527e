"""The genetic search for a proxy configuration, and the proxy file."""

from __future__ import annotations

import hashlib
import random

import numpy as np
import pytest
import yaml
from darshan_helpers import IOR_FPP, IOR_HDF5, VPIC, cached_classes, cached_log, sample_log

from iotune.darshan.analytic import Candidate, kernel_file
from iotune.darshan.proxy import load_proxy, read_proxy
from iotune.darshan.search import SearchOptions, rank_bytes, search_kernels
from iotune.darshan.signature import FEATURE_NAMES, feature_mask, signature, unobservable
from iotune.errors import ConfigError

MiB = 2**20
NO_MASK = np.ones(len(FEATURE_NAMES))


def _search(log_name: str, **options):
    log = cached_log(log_name)
    target = cached_classes(log_name)[0]
    mask = feature_mask(list(unobservable(log.lib_version)))
    return search_kernels(target.representative, target.vector, mask, ("ior", "vpic"),
                          SearchOptions(**options))


def test_search_recovers_the_ior_hdf5_run():
    best = _search(IOR_HDF5)[0]
    args = best.candidate.args
    assert best.kernel == "ior" and best.similarity >= 0.99
    assert (args["api"], args["transfer_size"], args["file_per_process"]) == \
        ("hdf5", MiB // 4, False)
    # IOR read the data back: a timed read (access both) or verify's read-back look alike.
    assert rank_bytes(best.candidate) == MiB
    assert args["verify"] or args.get("access") == "both"
    assert best.candidate.ranks == 4
    assert best.similarity >= best.genetic_similarity


def test_search_recovers_the_file_per_process_run():
    best = _search(IOR_FPP)[0]
    args = best.candidate.args
    assert best.kernel == "ior" and best.similarity >= 0.999
    assert (args["api"], args["transfer_size"], args["file_per_process"]) == \
        ("posix", 4 * MiB, True)
    assert rank_bytes(best.candidate) == 256 * MiB and best.candidate.ranks == 2048


def test_vpic_log_is_best_mimicked_by_vpic():
    results = _search(VPIC)
    assert [r.kernel for r in results] == ["vpic", "ior"]
    assert results[0].candidate.collective and results[0].similarity >= 0.99


def test_search_is_deterministic_for_a_seed_and_respects_the_byte_cap():
    first, again = _search(IOR_HDF5, seed=3), _search(IOR_HDF5, seed=3)
    assert [(r.candidate.key(), r.similarity) for r in first] == \
        [(r.candidate.key(), r.similarity) for r in again]
    capped = _search(IOR_FPP, max_bytes_per_rank=16 * MiB)[0]
    assert rank_bytes(capped.candidate) <= 16 * MiB
    assert capped.similarity < _search(IOR_FPP)[0].similarity


@pytest.mark.parametrize("seed", range(4))
def test_search_finds_the_signature_of_a_random_kernel_configuration(seed):
    rng = random.Random(seed)
    kernel = rng.choice(["ior", "vpic"])
    if kernel == "ior":
        transfer = 2 ** rng.randrange(10, 24)
        args = {"api": rng.choice(["posix", "mpiio", "hdf5"]), "transfer_size": transfer,
                "block_size": transfer * 2 ** rng.randrange(0, 6),
                "segments": 2 ** rng.randrange(0, 5),
                "file_per_process": rng.random() < 0.5, "verify": rng.random() < 0.5,
                "fsync": rng.random() < 0.5}
        collective = args["api"] != "posix" and rng.random() < 0.5
    else:
        args = {"particles_per_rank": 2 ** rng.randrange(10, 22),
                "timesteps": rng.randrange(1, 5), "verify": rng.random() < 0.5,
                "fsync": rng.random() < 0.5}
        collective = rng.random() < 0.5
    truth = Candidate(kernel, args, collective, 2 ** rng.randrange(1, 8))
    target = kernel_file(truth)
    results = search_kernels(target, signature(target), NO_MASK, ("ior", "vpic"),
                             SearchOptions(seed=seed))
    assert results[0].similarity >= 0.999, (truth, results[0].candidate)


def test_proxy_command_writes_a_loadable_proxy(run_cli, tmp_path):
    log = sample_log(IOR_HDF5)
    out = tmp_path / "proxy.yaml"
    result = run_cli("proxy", log, "-o", out, "--format", "json")
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(out.read_text())
    assert doc["schema_version"] == 1 and doc["kernel"] == "ior"
    assert doc["source_sha256"] == hashlib.sha256(log.read_bytes()).hexdigest()
    assert doc["source_log"] == str(log) and doc["ranks"] == 4
    assert doc["similarity"] >= 0.99
    kernel, params = load_proxy(out)
    assert kernel == "ior" and params["api"] == "hdf5" and params["transfer_size"] == MiB // 4
    assert read_proxy(out).settings == {}
    assert "similarity" in result.stdout and "iotune:" in result.stderr


def test_proxy_of_vpic_log_fixes_the_collective_setting_only_when_not_default(run_cli,
                                                                             tmp_path):
    out = tmp_path / "vpic.yaml"
    result = run_cli("proxy", sample_log(VPIC), "-o", out, "--kernel", "ior")
    assert result.exit_code == 0, result.output
    proxy = read_proxy(out)
    assert proxy.kernel == "ior" and proxy.settings == {"collective": True}
    assert "hdf5" in yaml.safe_load(out.read_text())["ignored_features"]


def _write(tmp_path, doc) -> str:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return str(path)


@pytest.mark.parametrize(("doc", "message"), [
    ({"schema_version": 2, "kernel": "ior", "args": {}}, "schema_version 2 is not supported"),
    ({"schema_version": 1, "kernel": "hacc", "args": {}}, "kernel 'hacc' is not a proxy kernel"),
    ({"schema_version": 1, "kernel": "ior", "args": [1]}, "args must be a mapping"),
    ({"schema_version": 1, "kernel": "ior", "args": {"segments": 0}},
     r"args\.segments: 0 is not a positive integer"),
    ({"schema_version": 1, "kernel": "ior", "args": {"stripes": 4}},
     r"args\.stripes: unknown argument of kernel 'ior'"),
    ({"schema_version": 1, "kernel": "vpic", "args": {}, "ranks": 0},
     "ranks 0 is not a positive integer"),
    ("- just\n- a list\n", "expected a mapping with kernel and args"),
    ("kernel: [unclosed\n", "malformed YAML"),
])
def test_bad_proxy_files_are_one_line_config_errors(tmp_path, doc, message):
    path = _write(tmp_path, doc)
    with pytest.raises(ConfigError, match=message) as caught:
        load_proxy(path)
    assert str(caught.value).startswith(path) and "\n" not in str(caught.value)


def test_missing_proxy_file(tmp_path):
    with pytest.raises(ConfigError, match=r"none\.yaml: proxy file not found"):
        load_proxy(tmp_path / "none.yaml")


def test_proxy_byte_cap_option_is_validated(run_cli, tmp_path):
    result = run_cli("proxy", sample_log(IOR_HDF5), "-o", tmp_path / "p.yaml",
                     "--max-bytes-per-rank", "lots")
    assert result.exit_code == 2
    assert result.stderr.strip().startswith("iotune: error: --max-bytes-per-rank: 'lots'")
    result = run_cli("proxy", sample_log(IOR_HDF5), "-o", tmp_path / "p.yaml",
                     "--ignore-feature", "colour")
    assert result.exit_code == 2 and "unknown feature 'colour'" in result.stderr


def test_proxy_paths_are_told_from_kernel_names(tmp_path):
    from iotune.darshan import is_proxy_path

    assert is_proxy_path("proxy.yaml") and is_proxy_path("app.yml")
    plain = tmp_path / "proxyfile"
    plain.write_text("schema_version: 1\n")
    assert is_proxy_path(str(plain))
    assert not is_proxy_path("vpic") and not is_proxy_path("ior")
