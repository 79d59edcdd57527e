"""``iotune job start --knowledge KB --workload FILE``: without a tuned file, the
configurations that won for similar workloads on the system are the campaign's
candidates, under the rule's risk bound like a tuned file's."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iotune.production.jobs import DEFAULT, config_name, read_campaign
from iotune.store import Store
from tests.cli_result import invoke, isolate

SIDECAR = "system: testbox\nfile_system: lustre\noperation: write\nranks: 4\n"
FAST = {"stripe_count": 4}


@pytest.fixture()
def base(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    isolate(monkeypatch, tmp_path / "xdg")
    rng = np.random.default_rng(3)
    rows = [{"cores": 4, **s, "write_time": c * float(np.exp(x))}
            for s, c in (({}, 10.0), (FAST, 5.0)) for x in rng.normal(0, 0.05, 4)]
    pd.DataFrame(rows).to_csv(tmp_path / "w.csv", index=False)
    (tmp_path / "w.workload.yaml").write_text(SIDECAR)
    assert invoke("knowledge", "build", "w.csv", "-o", "site.kb").exit_code == 0
    (tmp_path / "app.yaml").write_text(SIDECAR)
    return tmp_path


def _start(job: str, workload: str = "app.yaml"):
    return invoke("job", "start", "--store", "prod.jsonl", "--tag", "app", "--job-id", job,
                  "--knowledge", "site.kb", "--workload", workload, "--format", "romio")


def _finish(job: str, seconds: float) -> None:
    assert invoke("job", "finish", "--store", "prod.jsonl", "--tag", "app", "--job-id", job,
                  "--seconds", str(seconds)).exit_code == 0


def test_the_bases_candidate_is_tried_after_the_baseline_and_kept_out_once_slower(base):
    for i in range(3):  # the baseline runs the default whatever the base knows
        out = _start(f"j{i}")
        assert out.exit_code == 0, out.output
        assert "knowledge site.kb" in out.output and "default (baseline" in out.output
        _finish(f"j{i}", 10.0 + i * 0.1)
    out = _start("j3")
    assert "challenger" in out.output, out.output
    campaign = read_campaign(Store(base / "prod.jsonl"), "app")
    name = config_name(FAST)
    assert campaign.candidates == [name]
    assert campaign.settings[name] == FAST
    assert campaign.sources[name].startswith("knowledge site.kb")
    assert name not in campaign.priors  # no prior: only the campaign's jobs weigh in
    _finish("j3", 30.0)  # in truth three times slower here: the risk bound holds it back
    out = _start("j4")
    assert campaign.jobs[-1].config == name
    assert read_campaign(Store(base / "prod.jsonl"), "app").jobs[-1].config == DEFAULT
    assert "held back" in invoke("job", "status", "--store", "prod.jsonl",
                                 "--tag", "app").output


def test_a_base_that_knows_nothing_similar_leaves_every_job_on_the_default(base):
    (base / "other.yaml").write_text(SIDECAR.replace("testbox", "elsewhere"))
    for i in range(5):
        out = _start(f"j{i}", "other.yaml")
        assert out.exit_code == 0, out.output
        assert "no similar workload" in out.output and "no candidate" in out.output
        _finish(f"j{i}", 10.0)
    assert {j.config for j in read_campaign(Store(base / "prod.jsonl"), "app").jobs} == \
        {DEFAULT}
