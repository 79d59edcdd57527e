"""The portfolio search: proposers sharing the budget by credit, transfer from trained scales
that is checked, and its account in the tune's output (REPLAYED synthetic landscapes)."""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from iotune.backends.replay import ReplayBackend
from iotune.cli.main import cli
from iotune.config import TuneConfig, build_config
from iotune.store import Store
from iotune.strategies.portfolio import Portfolio
from iotune.strategies.proposers import Proposer, SearchState, quantile_reward
from iotune.strategies.transfer import agreement, concordance, misleads, shape_frame
from iotune.train.plan import plan_campaign
from iotune.train.run import run_campaign
from iotune.tune import tune

COUNTS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
SIZES_MIB = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]


def shape(count: float, size_mib: float, cb: str) -> float:
    """An interior optimum (count 8, size 8 MiB) and a slow level of a choice."""
    return (1 + 4 / count + 0.06 * count + 3 / size_mib + 0.05 * size_mib
            + (2.0 if cb == "enable" else 0.0))


def write_landscape(path: Path, scales: dict[int, int], *, inverted_at: int | None = None,
                    repeats: int = 2, sigma: float = 0.05, seed: int = 0) -> Path:
    """Random configurations per scale (``scales``: cores -> configurations), the time the
    same shape times the scale, except at ``inverted_at`` where fast and slow swap."""
    rng = np.random.default_rng(seed)
    rows = []
    for cores, count in scales.items():
        seen: set[tuple[int, int, str]] = set()
        while len(seen) < count:
            seen.add((int(rng.choice(COUNTS)), int(rng.choice(SIZES_MIB)),
                      str(rng.choice(["enable", "disable"]))))
        for c, s, cb in sorted(seen):
            value = shape(c, s, cb)
            value = 40.0 / value if cores == inverted_at else value
            for _ in range(repeats):
                rows.append({"cores": cores, "stripe_count": c, "stripe_size": s * 2**20,
                             "romio_cb_write": cb, "write_time": value * cores / 16
                             * float(np.exp(sigma * rng.standard_normal()))})
        rows.append({"cores": cores, "write_time": 12.0 * cores / 16})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def replay(tmp_path: Path, data: Path, seed: int, train: list[int] | None = None):
    raw: dict = {"kernel": {"name": "vpic"},
                 "backend": {"name": "replay", "replay_data": str(data)},
                 "tune": {"seed": seed}, "store": str(tmp_path / f"store-{seed}.jsonl")}
    if train:
        raw["train"] = {"scales": [{"cores": c, "design": "recorded"} for c in train]}
    config = build_config(raw, tmp_path)
    backend = ReplayBackend(config)
    if train:
        run_campaign(plan_campaign(config, backend), backend, Store(config.store))
    return config, backend


def truths(backend: ReplayBackend, cores: int) -> dict[str, float]:
    return {k: r.median for k, r in backend.table.items() if r.cores == cores and r.settings}


def test_the_portfolio_is_the_default_strategy():
    assert TuneConfig().strategy == "portfolio"
    assert Portfolio().default_budget() == 30


def test_portfolio_finds_the_optimum_of_a_smooth_landscape(tmp_path):
    data = write_landscape(tmp_path / "smooth.csv", {16: 120})
    found = {}
    for strategy in ("portfolio", "random"):
        ratios = []
        for seed in range(3):
            where = tmp_path / f"{strategy}{seed}"
            where.mkdir()
            config, backend = replay(where, data, seed)
            result = tune(config, backend, Store(config.store), kernel="vpic", cores=16,
                          budget=20, strategy=strategy, fresh=True)
            truth = truths(backend, 16)
            ratios.append(min(truth.values()) / min(truth[e.key] for e in result.evaluations))
        found[strategy] = statistics.median(ratios)
    assert found["portfolio"] >= 0.95
    assert found["portfolio"] >= found["random"]


class _Oracle(Proposer):
    """Proposes by the truth: the fastest (good) or the slowest (bad) open candidate."""

    def __init__(self, name: str, truth: dict[str, float], fastest: bool) -> None:
        super().__init__()
        self.name = name  # type: ignore[misc]
        self.truth, self.sign = truth, 1.0 if fastest else -1.0

    def propose(self, state: SearchState) -> int | None:
        values = np.array([self.sign * self.truth[state.context.key(c)]
                           for c in state.candidates])
        values[~state.open_mask()] = np.inf
        return None if np.isinf(values).all() else int(np.argmin(values))


def test_credit_moves_the_budget_to_the_proposer_whose_picks_are_fast(tmp_path):
    data = write_landscape(tmp_path / "l.csv", {16: 80})
    config, backend = replay(tmp_path, data, 0)
    truth = truths(backend, 16)

    class TwoOracles(Portfolio):
        def _proposers(self, state):
            return [_Oracle("good", truth, True), _Oracle("bad", truth, False)]

    search = TwoOracles(seed=0)
    from iotune.tune.context import MeasuringContext, MemorySink

    context = MeasuringContext(backend=backend, sink=MemorySink(), kernel="vpic", cores=16,
                               params=config.kernel.args, candidates=backend.candidates(16),
                               budget=24)
    search.search(context)
    runs = search.notes["runs"]
    assert runs["good"]["chosen"] + runs["bad"]["chosen"] == 24 - search.notes["initial"]
    assert runs["good"]["chosen"] >= 2 * runs["bad"]["chosen"]
    assert runs["good"]["credit"] > runs["bad"]["credit"]


def test_quantile_reward_is_the_share_of_slower_configurations(tmp_path):
    data = write_landscape(tmp_path / "l.csv", {16: 10})
    config, backend = replay(tmp_path, data, 0)
    from iotune.tune.context import MeasuringContext, MemorySink

    context = MeasuringContext(backend=backend, sink=MemorySink(), kernel="vpic", cores=16,
                               params=config.kernel.args, candidates=backend.candidates(16),
                               budget=None)
    context.evaluate(context.candidates[:5])
    state = SearchState(context, ["stripe_count", "stripe_size", "romio_cb_write"], 0,
                        np.random.default_rng(0))
    logs = state.mean_logs()
    fastest = min(logs, key=lambda i: logs[i])
    slowest = max(logs, key=lambda i: logs[i])
    assert quantile_reward(state, fastest) == 1.0
    assert quantile_reward(state, slowest) == 0.0


def test_shape_frame_divides_each_scale_by_its_geometric_mean():
    frame = pd.DataFrame({"cores": [2, 2, 4, 4, 8], "stripe_count": [1, 4, 1, 4, 2],
                          "write_time": [1.0, 4.0, 10.0, 40.0, 3.0]})
    shaped = shape_frame(frame, ["stripe_count"], cores=8)
    assert list(shaped["cores"]) == [8, 8, 8, 8]
    assert shaped["write_time"].tolist() == pytest.approx([0.5, 2.0, 0.5, 2.0])


def test_agreement_needs_enough_pairs_and_flags_an_inverted_order():
    assert agreement([1, 2, 3, 4, 5], [1, 2, 3, 4, 5]) is None  # too few to judge
    assert agreement([1, 2, 3, 4, 5, 6], [1, 2, 3, 4, 5, 6]) == pytest.approx(1.0)
    assert misleads(agreement([1, 2, 3, 4, 5, 6], [6, 5, 4, 3, 2, 1]))
    assert not misleads(agreement([1, 2, 3, 4, 5, 6], [1, 3, 2, 4, 6, 5]))


def test_concordance_counts_the_pairs_put_in_order():
    assert concordance([1, 2, 3, 4], [10, 20, 30, 40], new=3) == 1.0
    assert concordance([4, 3, 2, 1], [10, 20, 30, 40], new=0) == 0.0
    assert concordance([1, 3, 2], [10, 20, 30], new=2) == 0.5
    assert concordance([1], [10], new=0) == 0.5


def test_transfer_makes_the_first_runs_better_than_blind_ones(tmp_path):
    data = write_landscape(tmp_path / "x.csv", {16: 30, 32: 30, 64: 20})
    first: dict[str, list[float]] = {"portfolio": [], "random": []}
    for seed in range(4):
        for strategy in first:
            where = tmp_path / f"{strategy}{seed}"
            where.mkdir()
            config, backend = replay(where, data, seed, train=[16, 32])
            result = tune(config, backend, Store(config.store), kernel="vpic", cores=64,
                          budget=5, strategy=strategy, fresh=True)
            truth = truths(backend, 64)
            order = sorted(truth.values())
            opening = min(truth[e.key] for e in result.evaluations if e.order <= 2)
            first[strategy].append(order.index(opening) / len(order))
            if strategy == "portfolio":
                assert result.allocation["transfer"]["scales"] == [16, 32]
                assert result.allocation["proposers"]["transfer"] == "active"
    assert statistics.median(first["portfolio"]) <= 0.15
    assert statistics.median(first["portfolio"]) < statistics.median(first["random"])


def test_transfer_is_dropped_when_the_target_scale_disagrees(tmp_path):
    data = write_landscape(tmp_path / "x.csv", {16: 30, 32: 30, 64: 40}, inverted_at=64)
    config, backend = replay(tmp_path, data, 0, train=[16, 32])
    result = tune(config, backend, Store(config.store), kernel="vpic", cores=64, budget=20,
                  strategy="portfolio", fresh=True)
    status = result.allocation["proposers"]["transfer"]
    assert status.startswith("inactive: the target scale's measured order disagrees")
    assert result.allocation["transfer"]["rank_correlation"] <= 0
    assert result.allocation["runs"]["transfer"]["chosen"] < 8


def test_tune_output_accounts_for_the_allocation(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    data = write_landscape(tmp_path / "l.csv", {16: 40})
    out = tmp_path / "tuned.yaml"
    result = CliRunner().invoke(cli, ["tune", "--backend", "replay", "--replay-data", str(data),
                                      "--kernel", "vpic", "--cores", "16", "--budget", "12",
                                      "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "strategy portfolio" in result.output
    line = next(x for x in result.output.splitlines() if x.startswith("runs by proposer"))
    assert "design 3; transfer 0 (inactive: no training data at other scales); model " in line
    tuned = yaml.safe_load(out.read_text())
    allocation = tuned["search"]["allocation"]
    assert tuned["search"]["strategy"] == "portfolio"
    assert set(allocation["proposers"]) == {"transfer", "model", "doubt", "tpe", "local",
                                           "space"}
    assert allocation["proposers"]["transfer"] == "inactive: no training data at other scales"
    chosen = sum(r["chosen"] for r in allocation["runs"].values())
    assert chosen + allocation["initial_design"] == tuned["search"]["configurations"]


def test_allocation_text_keeps_the_runs_of_a_proposer_that_left():
    from iotune.strategies.portfolio import allocation_text

    text = allocation_text({
        "initial_design": 0,
        "proposers": {"transfer": "inactive: the target disagrees", "model": "active"},
        "runs": {"transfer": {"chosen": 3, "credit": 1.0, "debit": 3.0},
                 "model": {"chosen": 5, "credit": 3.0, "debit": 1.0}}})
    assert text == ("transfer 3 (mean credit 0.25; inactive: the target disagrees); "
                    "model 5 (mean credit 0.75)")
