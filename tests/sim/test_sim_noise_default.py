"""Noise is on by default (level 1) for the sim backend; ``--noise 0`` is deterministic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from iotune.cli.main import cli
from iotune.config import BackendConfig, build_config
from iotune.store import Store

RUN = ["run", "--backend", "sim", "--system", "hopper", "--kernel", "vpic", "--cores", "512",
       "--set", "stripe_count=64", "--reps", "4"]


def run_sim(tmp_path: Path, name: str, *extra: str) -> list[dict[str, Any]]:
    store = tmp_path / f"{name}.jsonl"
    result = CliRunner().invoke(cli, [*RUN, "--store", str(store), *extra])
    assert result.exit_code == 0, result.output
    return list(Store(store).records())


def test_config_default_noise_is_one(tmp_path: Path) -> None:
    assert BackendConfig().noise == 1.0
    assert build_config({"backend": {"name": "sim"}}, tmp_path).backend.noise == 1.0
    assert build_config({"backend": {"name": "sim", "noise": 0}}, tmp_path).backend.noise == 0


def test_cli_sim_is_noisy_by_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    records = run_sim(tmp_path, "noisy")
    totals = [r["result"]["times_s"]["total"] for r in records]
    assert all(r["result"]["noise"] == 1.0 for r in records)
    assert {r["state"] for r in records} <= {"idle", "busy"}
    assert len(set(totals)) == len(totals) == 4
    assert totals != [r["result"]["model_time_s"] for r in records]


def test_cli_noise_zero_is_deterministic(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    first = run_sim(tmp_path, "a", "--noise", "0")
    again = run_sim(tmp_path, "b", "--noise", "0")
    totals = [r["result"]["times_s"]["total"] for r in first]
    assert totals == [r["result"]["times_s"]["total"] for r in again]
    assert len(set(totals)) == 1
    assert all(r["state"] == "none" and r["result"]["noise"] == 0 for r in first)
    assert totals[0] == pytest.approx(first[0]["result"]["model_time_s"])


def test_json_output_names_the_noise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, [*RUN[:-2], "--no-store", "--format", "json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout[result.stdout.index("{"):result.stdout.rindex("}") + 1])
    assert record["result"]["noise"] == 1.0 and record["provenance"] == "simulated"
