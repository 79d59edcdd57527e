"""``benchmarks/real_landscapes.py`` on a tiny synthetic landscape written here: its budget
rule, its noise variants, a cross-scale tune that really trains first, and its figures."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from iotune.store import Store
from iotune.store.index import StoreIndex
from tests.benchmarks.bench_modules import load_benchmark
from tests.benchmarks.synthetic import write_landscape

lib = load_benchmark("landscapes_lib")
bench = load_benchmark("real_landscapes")

@pytest.fixture
def landscape_csv(tmp_path: Path) -> Path:
    return write_landscape(tmp_path)


def test_budget_rule_names_the_readme_budgets_and_derives_the_others():
    assert lib.budget_rule("ior_64ranks", [64], 258) == 30
    assert lib.budget_rule("btio300_2to16", [2, 4, 8, 16], 13) == 5
    assert lib.budget_rule("unknown", [64], 258) == 30
    assert lib.budget_rule("unknown", [16, 32, 64], 19) == 8
    assert lib.budget_rule("unknown", [2, 4, 8, 16], 13) == 5
    assert lib.budget_rule("unknown", [2, 4], 200) == 30
    assert lib.budget_rule("unknown", [2, 4], 2) == 3


def test_a_cross_scale_landscape_trains_below_its_largest_scale(landscape_csv):
    land = lib.describe(landscape_csv)
    assert (land.target, land.train_scales) == (4, (2,))
    assert (land.configurations, land.repeats, land.budget) == (12, 6, 5)  # 0.4 x 12


def test_noise_variants_keep_every_median_and_stretch_the_log_spread(landscape_csv,
                                                                      tmp_path):
    land = lib.describe(landscape_csv)
    variants = lib.noise_variants(land, (2.0, 4.0), tmp_path)
    assert [v.name for v in variants] == ["synth_noise2x", "synth_noise4x"]
    assert all(v.budget == land.budget and v.train_scales == (2,) for v in variants)
    before = lib.open_backend(landscape_csv).table
    for variant in variants:
        after = lib.open_backend(variant.path).table
        assert after.keys() == before.keys()
        for key, recorded in before.items():
            assert after[key].median == pytest.approx(recorded.median, rel=1e-12)
            if len(recorded.times) > 1:
                assert np.std(np.log(after[key].times)) == pytest.approx(
                    variant.noise * np.std(np.log(recorded.times)), rel=1e-9)
    # Even counts: the median is the mean of the middle two, which the stretch alone moves.
    times = np.array([1.0, 1.1, 1.3, 2.0])
    assert np.median(lib.stretch(times, 4.0)) == pytest.approx(np.median(times), rel=1e-14)


def test_same_scale_landscapes_with_few_repeats_get_no_variant(landscape_csv, tmp_path):
    frame = pd.read_csv(landscape_csv)
    single = tmp_path / "single.csv"
    frame[frame["cores"] == 2].to_csv(single, index=False)  # 3 repeats, one scale
    land = lib.describe(single)
    assert (land.train_scales, land.budget) == ((), 30)
    assert lib.noise_variants(land, (2.0,), tmp_path) == []


def test_a_covering_budget_finds_the_best_after_training_at_the_small_scale(landscape_csv,
                                                                           tmp_path):
    land = lib.describe(landscape_csv)
    work = tmp_path / "work"
    work.mkdir()
    outcome = lib.judged_tune(lib.Job(land, "random", budget=20, seed=0), work)
    recorded = lib.open_backend(landscape_csv).recorded(4)
    assert len(outcome.evaluated) == 12  # 20 - a race reserve of 4 covers every one
    assert outcome.found == 1.0
    assert outcome.best == min(outcome.evaluated) == min(r.median for r in recorded
                                                         if r.settings)
    assert outcome.trained == 12
    index = StoreIndex(Store(work / "store.jsonl"))
    trained = index.select(campaign="train")
    assert len(trained) == 12 and {m.cores for m in trained} == {2}
    assert {m.cores for m in index.select(campaign="tune")} == {4}


def test_two_strategies_over_two_seeds_give_consistent_figures(landscape_csv):
    land = lib.describe(landscape_csv)
    jobs = bench.make_jobs([land], ["random", "model"], None, 2, {})
    outcomes = bench.run_jobs(jobs, 1, lambda message: None)
    summaries = bench.summarise(outcomes)
    assert [(s.strategy, s.budget, s.seeds) for s in summaries] == [("model", 5, 2),
                                                                     ("random", 5, 2)]
    for s in summaries:
        mine = [o for o in outcomes if o.strategy == s.strategy]
        found = [o.found for o in mine]
        assert 0 < s.found_p10 <= s.found_median <= 1.0
        assert s.found_p10 == pytest.approx(min(found) + 0.1 * (max(found) - min(found)))
        assert all(len(o.evaluated) <= 4 and o.runs <= 6 and o.trained == 12 for o in mine)
        assert all(o.chosen == o.best / o.recommended for o in mine)
    checks = bench.verdicts(summaries, [land], "model")
    assert checks and all(c.passed is not None for c in checks)
    assert any("found median model" in c.text and "> random" in c.text for c in checks)


def test_figures_of_hand_made_outcomes():
    def outcome(evaluated, recommended, default_recommended):
        return lib.Outcome("l", "s", 10, 0, best=1.0, default=2.0, evaluated=evaluated,
                           recommended=recommended, recommend_default=default_recommended,
                           runs=len(evaluated) + 1, trained=0)

    outcomes = [
        outcome((3.0, 1.04, 1.5), 1.04, False),  # within 5% at run 2, a 10% gain taken
        outcome((3.0, 2.5), 2.0, True),          # no 10% gain evaluated: not a miss
        outcome((1.7, 1.2), 2.0, True),          # a 10% gain evaluated, default kept: missed
        outcome((2.1,), 2.1, False),             # recommended change 5% slower than default
    ]
    assert [o.runs_to_within for o in outcomes] == [2.0, math.inf, math.inf, math.inf]
    (s,) = bench.summarise(outcomes)
    found = [1 / 1.04, 1 / 2.5, 1 / 1.2, 1 / 2.1]
    assert s.found_median == pytest.approx(np.median(found))
    assert s.found_p10 == pytest.approx(np.percentile(found, 10))
    assert s.chosen_median == pytest.approx(np.median([1 / 1.04, 0.5, 0.5, 1 / 2.1]))
    assert (s.within, s.slower, s.missed, s.chances) == (0.25, 0.25, 1, 2)
    assert s.row()["to5"] == ">10" and s.row()["missed"] == "0.50 (1/2)"


def test_options_name_their_strategy_or_mean_the_default_one():
    assert bench.parse_options(["model.kappa=1.0", "initial=0.4"], "model") == {
        "model": {"kappa": 1.0, "initial": 0.4}}
    with pytest.raises(ValueError, match="unknown option"):
        bench.parse_options(["random.kappa=1"], "model")
