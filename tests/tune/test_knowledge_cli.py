"""``iotune tune --knowledge`` with a base built by ``iotune knowledge build``: the tune
asks it about the replayed CSV's sidecar, prints what it contributed and writes it in the
tuned file; the flag beats ``tune.knowledge``, which beats ``IOTUNE_KNOWLEDGE``, and
``none`` switches it off."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from tests.cli_result import invoke, isolate

SIDECAR = ("system: testbox\nfile_system: lustre\nlayer: hdf5\noperation: write\n"
           "ranks: 4\nranks_per_node: 4\nfiles: 1\ndatasets: 8\nbytes_per_rank: 1048576\n")


def _landscape(path: Path, fast: float, seed: int) -> Path:
    """Default, stripe_count 2 and stripe_count 4 (``fast`` times faster), five runs each,
    with its sidecar."""
    rng = np.random.default_rng(seed)
    rows = []
    for settings, centre in (({}, 10.0), ({"stripe_count": 2}, 10.1),
                             ({"stripe_count": 4}, 10.0 / fast)):
        rows += [{"cores": 4, **settings, "write_time": centre * float(np.exp(x))}
                 for x in rng.normal(0, 0.05, 5)]
    pd.DataFrame(rows).to_csv(path, index=False)
    path.with_name(path.stem + ".workload.yaml").write_text(SIDECAR)
    return path


@pytest.fixture()
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    isolate(monkeypatch, tmp_path / "xdg")
    known = tmp_path / "known"
    known.mkdir()
    for i in range(3):
        _landscape(known / f"w{i}.csv", 2.0, i)
    built = invoke("knowledge", "build", str(known), "-o", "site.kb")
    assert built.exit_code == 0, built.output
    _landscape(tmp_path / "mine.csv", 2.0, 9)
    (tmp_path / "iotune.yaml").write_text(yaml.safe_dump({
        "kernel": {"name": "vpic"}, "store": "s.jsonl",
        "backend": {"name": "replay", "replay_data": "mine.csv"}}))
    return tmp_path


def _tune(*extra: str) -> tuple[str, dict]:
    out = invoke("tune", "-c", "iotune.yaml", "--cores", "4", "--budget", "6", "--fresh",
                 "--no-color", "-o", "t.yaml", "--force", *extra)
    assert out.exit_code == 0, out.output
    return out.output, yaml.safe_load(Path("t.yaml").read_text())


def test_a_tune_takes_the_sidecars_workload_to_the_base_and_says_what_it_took(here):
    output, tuned = _tune("--knowledge", "site.kb")
    assert "iotune: knowledge site.kb" in output
    assert "stripe_count=4 won 1 of 1" in output  # three files of one workload
    assert "knowledge" in output.split("Tuned vpic", 1)[1]  # the summary's line
    known = tuned["knowledge"]
    assert known["system"] == "testbox/lustre" and known["similar_workloads"] == 1
    assert known["raced_first"] == [{"stripe_count": 4}]
    assert tuned["recommendation"] == "tuned"
    assert tuned["settings"] == {"stripe_count": 4}


def test_the_flag_beats_the_config_which_beats_the_environment(here, monkeypatch):
    monkeypatch.setenv("IOTUNE_KNOWLEDGE", str(here / "site.kb"))
    _, tuned = _tune()
    assert tuned["knowledge"]["base"].startswith("site.kb")  # the site-wide default
    config = yaml.safe_load(Path("iotune.yaml").read_text())
    config["tune"] = {"knowledge": "none"}
    Path("iotune.yaml").write_text(yaml.safe_dump(config))
    _, tuned = _tune()
    assert "knowledge" not in tuned  # the config's none beats the environment
    _, tuned = _tune("--knowledge", "site.kb")
    assert "knowledge" in tuned  # the flag beats the config
    monkeypatch.delenv("IOTUNE_KNOWLEDGE")
    config["tune"] = {"knowledge": "site.kb"}
    Path("iotune.yaml").write_text(yaml.safe_dump(config))
    _, tuned = _tune("--knowledge", "none")
    assert "knowledge" not in tuned  # and none on the command line beats the config


def test_a_base_of_another_system_changes_nothing(here):
    other = here / "other"
    other.mkdir()
    _landscape(other / "o.csv", 2.0, 1)
    (other / "o.workload.yaml").write_text(SIDECAR.replace("testbox", "elsewhere"))
    assert invoke("knowledge", "build", str(other), "-o", "other.kb").exit_code == 0
    output, tuned = _tune("--knowledge", "other.kb")
    assert "no similar workload on testbox/lustre" in output
    _, cold = _tune("--knowledge", "none")
    assert tuned["knowledge"]["similar_workloads"] == 0
    assert [tuned[k] for k in ("recommendation", "settings", "default")] == \
        [cold[k] for k in ("recommendation", "settings", "default")]
    assert tuned["search"]["runs"] == cold["search"]["runs"]
