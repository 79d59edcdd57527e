"""The tune spends its budget on the decision: the race goes on when the search runs out of
candidates, an undecided tune says how to continue, and the continued tune decides."""

from __future__ import annotations

import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from click.testing import CliRunner

from iotune.backends.replay import ReplayBackend
from iotune.cli.main import cli
from iotune.config import build_config
from iotune.store import Store
from iotune.tune import tune
from tests.tune.replay_config import replay_config


def _two_configurations(path: Path, gain: float = 2.0, sigma: float = 0.1,
                        repeats: int = 6) -> Path:
    """The default and two configurations, six runs each: one ``gain`` times faster."""
    rng = np.random.default_rng(4)
    rows = []
    for settings, centre in (({}, 10.0), ({"stripe_count": 4}, 10.0 / gain),
                             ({"stripe_count": 1}, 11.0)):
        rows += [{"cores": 4, **settings, "write_time": centre * float(np.exp(x))}
                 for x in rng.normal(0, sigma, repeats)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_a_space_smaller_than_the_budget_never_ends_undecided_with_budget_left(tmp_path):
    data = _two_configurations(tmp_path / "two.csv", gain=1.3, sigma=0.25)
    for seed in range(4):
        config = build_config({"kernel": {"name": "vpic"}, "tune": {"seed": seed},
                               "backend": {"name": "replay", "replay_data": str(data)},
                               "store": str(tmp_path / f"s{seed}.jsonl")}, tmp_path)
        backend = ReplayBackend(config)
        result = tune(config, backend, Store(config.store), kernel="vpic", cores=4,
                      budget=20, fresh=True)
        assert len(result.evaluations) == 2  # the search ran out of candidates early
        assert result.budget.spent <= 20
        if result.recommendation == "undecided":
            assert result.budget.spent == 20  # every run went to the decision
        else:  # decided before the budget ran out: the race stopped by itself
            assert result.choice.race_runs >= 3


def test_an_undecided_tune_prints_the_command_that_continues_and_that_one_decides(
        tmp_path, monkeypatch):
    data = _two_configurations(tmp_path / "two.csv")
    config = replay_config(tmp_path, data)
    monkeypatch.chdir(tmp_path)
    runner = CliRunner()
    first = runner.invoke(cli, ["tune", "-c", str(config), "--cores", "4", "--budget", "4",
                                "-o", "t.yaml", "--no-color"])
    assert first.exit_code == 0, first.output
    tuned = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert tuned["recommendation"] == "undecided" and tuned["settings"] == {}
    assert tuned["search"]["budget_spent"] == 4  # nothing left unspent
    budget = tuned["undecided"]["budget_to_decide"]
    assert budget > 4 and tuned["undecided"]["runs_to_decide"] == budget - 4
    assert "undecided: the default configuration stays" in first.stdout
    assert "noise" in first.stdout and "assumed before the search" in first.stdout
    line = next(x for x in first.stderr.splitlines() if "to continue" in x)
    command = shlex.split(line.split("reusing every run so far: ", 1)[1])
    assert command[:2] == ["iotune", "tune"] and command[-2:] == ["--budget", str(budget)]
    assert "--fresh" not in command
    second = runner.invoke(cli, command[1:])
    assert second.exit_code == 0, second.output
    decided = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert decided["recommendation"] == "tuned"
    assert decided["settings"] == {"stripe_count": 4}
    assert decided["search"]["reused_measurements"] >= 5  # every run of the first tune
    assert decided["search"]["budget_spent"] <= budget


def test_the_noise_known_from_the_store_sizes_the_race(tmp_path):
    data = _two_configurations(tmp_path / "two.csv", sigma=0.5)
    config = build_config({"kernel": {"name": "vpic"},
                           "backend": {"name": "replay", "replay_data": str(data)},
                           "store": str(tmp_path / "s.jsonl")}, tmp_path)
    backend = ReplayBackend(config)
    first = tune(config, backend, Store(config.store), kernel="vpic", cores=4, budget=30)
    assert first.budget.noise is not None and "the default's" in first.budget.noise_source
    # A second tune knows the spread of the first one's repeated configurations too.
    second = tune(config, backend, Store(config.store), kernel="vpic", cores=4, budget=30,
                  fresh=True)
    assert "earlier runs" in second.budget.noise_source
    assert second.budget.reserve == 15  # at a log spread near 0.5: half the budget
