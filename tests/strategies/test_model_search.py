"""The model strategy on replayed landscapes: cold start, transfer from one smaller scale,
the race among the leaders, intervals and the recommendation in the output."""

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
from iotune.config import build_config
from iotune.model.from_measurements import model_columns
from iotune.model.trust import TRUSTED_CV_ERROR, prediction_warning
from iotune.store import Store
from iotune.strategies.base import Evaluation
from iotune.strategies.coverage import space_filling
from iotune.strategies.racing import pooled_noise, ranked, shrunken_centres
from iotune.tune import tune

COUNTS = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
SIZES_MIB = [1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]


def true_time(count: float, size_mib: float, cb: str, cores: int) -> float:
    """A landscape with an interior optimum (count 8, size 8 MiB) and a categorical offset."""
    scale = cores / 16
    return scale * (1 + 4 / count + 0.06 * count + 3 / size_mib + 0.05 * size_mib
                     + (0.8 if cb == "enable" else 0.0))


def write_landscape(path: Path, *, configs: int = 120, repeats: int = 3, sigma: float = 0.05,
                    scales: tuple[int, ...] = (16,), seed: int = 0) -> Path:
    """A sparse recorded landscape: random configurations, log-normal repeats, a default row."""
    rng = np.random.default_rng(seed)
    rows = []
    for cores in scales:
        seen = set()
        while len(seen) < configs:
            seen.add((int(rng.choice(COUNTS)), int(rng.choice(SIZES_MIB)),
                      str(rng.choice(["enable", "disable"]))))
        for count, size, cb in sorted(seen):
            for _ in range(repeats):
                rows.append({"cores": cores, "stripe_count": count, "stripe_size": size * 2**20,
                             "romio_cb_write": cb, "write_time": true_time(count, size, cb, cores)
                             * float(np.exp(sigma * rng.standard_normal()))})
        for _ in range(repeats):  # the default: slower than the best by far
            rows.append({"cores": cores, "write_time": 6.0 * cores / 16
                         * float(np.exp(sigma * rng.standard_normal()))})
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def replay_config(tmp_path: Path, data: Path, seed: int = 0, **tune_options):
    return build_config({
        "kernel": {"name": "vpic"},
        "backend": {"name": "replay", "replay_data": str(data)},
        "tune": {"seed": seed, **tune_options},
        "store": str(tmp_path / f"store-{seed}.jsonl"),
    }, tmp_path)


def truths(backend: ReplayBackend, cores: int) -> dict:
    """True time (median of the recorded repeats) of each recorded configuration, by key."""
    return {key: r.median for key, r in backend.table.items() if r.cores == cores and r.settings}


def run_tune(tmp_path, data, strategy, budget, seed, cores=16, **kwargs):
    config = replay_config(tmp_path, data, seed)
    backend = ReplayBackend(config)
    result = tune(config, backend, Store(config.store), kernel="vpic", cores=cores,
                  strategy=strategy, budget=budget, fresh=True, **kwargs)
    truth = truths(backend, cores)
    best = min(truth.values())
    found = best / min(truth[e.key] for e in result.evaluations)
    return result, found


def test_cold_start_needs_no_training_and_beats_random(tmp_path):
    data = write_landscape(tmp_path / "land.csv")
    model, random = [], []
    for seed in range(5):
        result, found = run_tune(tmp_path, data, "model", 20, seed)
        assert result.budget.spent <= 20 and result.budget.total == 20
        assert len(result.evaluations) <= 16  # a fifth of the budget is kept for the race
        model.append(found)
        random.append(run_tune(tmp_path, data, "random", 20, seed)[1])
    assert statistics.median(model) >= 0.95
    assert statistics.median(model) >= statistics.median(random)
    assert min(model) >= min(random) - 0.02


def test_cold_start_design_is_space_filling_over_valid_candidates():
    candidates = [{"stripe_count": c, "stripe_size": s * 2**20, "romio_cb_write": w}
                  for c in COUNTS for s in SIZES_MIB for w in ("enable", "disable")]
    chosen = space_filling(candidates, 8, seed=1)
    assert len(set(chosen)) == 8
    picked = [candidates[i] for i in chosen]
    counts = sorted(p["stripe_count"] for p in picked)
    assert counts[0] <= 2 and counts[-1] >= 32  # both ends of the log range
    assert {p["romio_cb_write"] for p in picked} == {"enable", "disable"}
    assert space_filling(candidates, 8, seed=1) == chosen  # seeded
    taken = set(chosen)
    assert not taken & set(space_filling(candidates, 8, seed=2, taken=taken))


def test_default_run_at_the_target_scale_does_not_make_cores_vary():
    frame = pd.DataFrame([
        {"cores": 64, "stripe_count": 2, "stripe_size": 2**20, "write_time": 1.0},
        {"cores": 64, "stripe_count": 4, "stripe_size": 2**21, "write_time": 2.0},
        {"cores": 256, "stripe_count": None, "stripe_size": None, "write_time": 3.0},
    ])
    numeric, categorical = model_columns(["stripe_count", "stripe_size"], frame)
    assert numeric == ["stripe_count", "stripe_size"] and categorical == []


def test_trained_at_one_smaller_scale_it_tunes_at_a_larger_one(tmp_path):
    data = write_landscape(tmp_path / "two.csv", scales=(16, 64), configs=60)
    config_path = tmp_path / "iotune.yaml"
    config_path.write_text(yaml.safe_dump({
        "kernel": {"name": "vpic"},
        "backend": {"name": "replay", "replay_data": str(data)},
        "train": {"scales": [{"cores": 16, "design": "recorded", "runs": 20}]},
        "store": "store.jsonl",
    }))
    runner = CliRunner()
    out = runner.invoke(cli, ["train", "-c", str(config_path), "--no-color"])
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli, ["tune", "-c", str(config_path), "--cores", "64", "--budget", "15",
                              "-o", str(tmp_path / "tuned.yaml"), "--no-color"])
    assert out.exit_code == 0, out.output
    tuned = yaml.safe_load((tmp_path / "tuned.yaml").read_text())
    assert tuned["cores"] == 64 and tuned["provenance"] == "replayed"
    assert "cores" in tuned["model"]["params"]  # the scale is a term: trained at 16, tuned at 64
    records = Store(tmp_path / "store.jsonl").records()
    assert {r["cores"] for r in records if r["campaign"] == "train"} == {16}


def test_transfer_on_the_simulated_system(tmp_path, hopper_config):
    runner = CliRunner()
    raw = yaml.safe_load(hopper_config.read_text())
    raw["train"] = {"scales": [{"cores": 128, "design": "lhs", "runs": 24}], "seed": 1}
    hopper_config.write_text(yaml.safe_dump(raw))
    out = runner.invoke(cli, ["train", "-c", str(hopper_config), "--backend", "sim",
                              "--no-color"])
    assert out.exit_code == 0, out.output
    out = runner.invoke(cli, ["tune", "-c", str(hopper_config), "--backend", "sim", "--cores",
                              "512", "--budget", "15", "--format", "json", "--no-color"])
    assert out.exit_code == 0, out.output
    doc = yaml.safe_load(out.stdout)
    assert doc["provenance"] == "simulated" and "cores" in doc["model"]["params"]
    assert doc["best_found_speedup"]["estimate"] > 2  # the paper's space beats its default


def write_lucky_landscape(path: Path) -> Path:
    """Ten repeats per configuration; 'lucky' is slow (median 2.0 s) but once drew 0.5 s."""
    rng = np.random.default_rng(3)
    rows = []
    for count in (1, 2, 4, 8, 16, 32):
        for size in (1, 4, 16):
            centre = 1.0 if (count, size) == (4, 4) else 1.6
            times = centre * np.exp(0.15 * rng.standard_normal(10))
            if (count, size) == (32, 16):  # the lucky one
                times = np.array([0.5] + [2.0] * 9)
            rows += [{"cores": 8, "stripe_count": count, "stripe_size": size * 2**20,
                      "write_time": float(t)} for t in times]
    rows += [{"cores": 8, "write_time": float(2.2 * np.exp(0.15 * rng.standard_normal()))}
             for _ in range(10)]
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_the_race_reports_the_best_estimate_not_the_luckiest_draw(tmp_path):
    data = write_lucky_landscape(tmp_path / "lucky.csv")
    lucky = {"stripe_count": 32, "stripe_size": 16 * 2**20}
    best = {"stripe_count": 4, "stripe_size": 4 * 2**20}
    first_lucky, right = 0, 0
    for seed in range(12):
        result, _ = run_tune(tmp_path, data, "exhaustive", 30, seed, cores=8)
        evaluation = next(e for e in result.evaluations if e.settings == lucky)
        assert result.best is not None
        if evaluation.times[0] == 0.5:  # its first draw was the lucky one: raced
            first_lucky += 1
            assert len(evaluation.times) >= 2
        right += result.best.settings == best
        assert len(result.best.times) >= 3  # the winner is never a single draw
        assert result.budget.spent <= 30
    assert first_lucky >= 1  # the trap was sprung at least once
    assert right >= 10  # and the best by its median was reported nearly always


def test_one_lucky_draw_does_not_outrank_three_runs_that_agree():
    def evaluation(name, times, order):
        return Evaluation({"stripe_count": order + 1}, name, times=list(times), order=order)

    rng = np.random.default_rng(3)
    # Twenty configurations around 2 s with a log-spread of 0.2, each run three times.
    pool = [evaluation(f"c{i}", 2.0 * np.exp(0.3 * rng.standard_normal()
                                             + 0.2 * rng.standard_normal(3)), i)
            for i in range(20)]
    steady = evaluation("steady", [1.20, 1.25, 1.22], 20)
    lucky = evaluation("lucky", [1.15], 21)  # slightly faster, but a single draw
    everything = [*pool, steady, lucky]
    noise = pooled_noise(everything)
    centres = dict(zip((e.key for e in everything), shrunken_centres(everything, noise),
                       strict=True))
    assert centres["lucky"] > np.log(1.15)  # pulled towards the common mean
    assert centres["steady"] < centres["lucky"]
    order = ranked(everything)
    assert order.index(steady) < order.index(lucky)
    # With the noise unknown (nothing repeated), estimates are the plain geometric means.
    singles = [evaluation(f"s{i}", [1.0 + i], i) for i in range(4)]
    assert shrunken_centres(singles, pooled_noise(singles)) == pytest.approx(
        [np.log(1.0 + i) for i in range(4)])


def test_nothing_better_than_the_default_recommends_the_default(tmp_path):
    rng = np.random.default_rng(5)
    rows = [{"cores": 4, "stripe_count": c, "stripe_size": 2**20,
             "write_time": float(np.exp(0.3 * rng.standard_normal()))}
            for c in (1, 2, 4, 8) for _ in range(6)]
    rows += [{"cores": 4, "write_time": float(np.exp(0.3 * rng.standard_normal()))}
             for _ in range(6)]
    data = tmp_path / "flat.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({"kernel": {"name": "vpic"}, "store": "s.jsonl",
                                      "backend": {"name": "replay", "replay_data": str(data)}}))
    runner = CliRunner()
    out = runner.invoke(cli, ["tune", "-c", str(config), "--cores", "4", "--strategy",
                              "exhaustive", "--budget", "10", "-o", str(tmp_path / "t.yaml"),
                              "--no-color"])
    assert out.exit_code == 0, out.output
    tuned = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert tuned["recommendation"] in ("default", "undecided") and tuned["settings"] == {}
    # On a flat landscape either the default itself ranks first, or the best found is shown
    # with a speedup interval that reaches 1x (undecided: more runs might tell).
    if tuned["reason"] != "no configuration measured faster than the default":
        assert "confirmed faster than the default with 90% confidence" in tuned["reason"]
        assert tuned["best_found"]["settings"]  # what was found is still shown
        interval = tuned["best_found_speedup"]["interval"]  # None: too few runs for one
        assert interval is None or interval[0] <= 1.0 <= interval[1]
    assert ("the default configuration (nothing to change)" in out.stdout
            or "undecided: the default configuration stays" in out.stdout)
    applied = runner.invoke(cli, ["apply", str(tmp_path / "t.yaml")])
    assert applied.exit_code == 0
    assert applied.stdout.rstrip().endswith('iotune_run() { "$@"; }')  # launch unchanged
    assert "nothing to change" in applied.stderr


def test_output_shows_intervals_repetitions_and_the_speedup_interval(tmp_path):
    data = write_landscape(tmp_path / "land.csv", sigma=0.1)
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({"kernel": {"name": "vpic"}, "store": "s.jsonl",
                                      "backend": {"name": "replay", "replay_data": str(data)}}))
    out = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "16", "--budget", "20",
                                   "-o", str(tmp_path / "t.yaml"), "--no-color"])
    assert out.exit_code == 0, out.output
    tuned = yaml.safe_load((tmp_path / "t.yaml").read_text())
    assert tuned["recommendation"] == "tuned" and tuned["settings"]
    measured, default = tuned["measured"], tuned["default"]
    # the race (4 runs at budget 20) repeated the winner
    assert measured["repetitions"] >= 2 and tuned["search"]["race_runs"] > 0
    low, high = measured["interval_s"]
    assert low < measured["estimate_s"] < high
    assert default["interval_s"][0] < default["estimate_s"] < default["interval_s"][1]
    s_low, s_high = tuned["best_found_speedup"]["interval"]
    assert 1 < s_low < tuned["speedup"] < s_high
    assert tuned["confidence"] == 0.9 and tuned["noise"]["degrees_of_freedom"] > 0
    assert "90% interval" in out.stdout and "its speedup" in out.stdout
    assert "cross-validated RMS relative error" in out.stdout  # beside the predictions


def test_a_poor_model_is_flagged_in_one_line(tmp_path):
    assert prediction_warning(TRUSTED_CV_ERROR / 2) is None
    assert "not to be trusted" in (prediction_warning(TRUSTED_CV_ERROR * 3) or "")
    assert "ranking only" in (prediction_warning(None) or "")
    rng = np.random.default_rng(9)
    rows = [{"cores": 4, "stripe_count": c, "stripe_size": s * 2**20,
             "write_time": float(np.exp(1.2 * rng.standard_normal()))}  # pure noise
            for c in (1, 2, 4, 8, 16) for s in (1, 2, 4, 8)]
    rows.append({"cores": 4, "write_time": 1.0})
    data = tmp_path / "noise.csv"
    pd.DataFrame(rows).to_csv(data, index=False)
    config = tmp_path / "iotune.yaml"
    config.write_text(yaml.safe_dump({"kernel": {"name": "vpic"}, "store": "s.jsonl",
                                      "backend": {"name": "replay", "replay_data": str(data)}}))
    out = CliRunner().invoke(cli, ["tune", "-c", str(config), "--cores", "4", "--budget", "15",
                                   "--no-color"])
    assert out.exit_code == 0, out.output
    warnings = [line for line in out.stderr.splitlines() if "warning: model:" in line]
    assert len(warnings) == 1 and "not to be trusted" in warnings[0]


@pytest.mark.parametrize("method", ["sequential", "paper"])
def test_both_methods_spend_the_budget_they_are_given(tmp_path, method):
    data = write_landscape(tmp_path / "land.csv", scales=(16, 64), configs=40)
    config = replay_config(tmp_path, data)
    backend = ReplayBackend(config)
    store = Store(config.store)
    if method == "paper":  # the paper's method needs training data: a few runs at 16 ranks
        from iotune.backends import RunRequest

        for settings in backend.candidates(16)[:12]:
            store.append({"campaign": "train", **backend.measure(
                RunRequest("vpic", 16, settings, config.kernel.args))})
    result = tune(config, backend, store, kernel="vpic", cores=64, budget=12, fresh=True,
                  strategy="model",
                  strategy_options={"method": method, "top_k": 6, "top_k_refit": 3})
    assert result.budget.spent <= 12 and len(result.evaluations) <= 10
    assert result.best is not None


def test_an_unconfirmed_gain_says_how_many_runs_would_confirm_it():
    from iotune.strategies.racing import Noise, runs_to_confirm, speedup

    noise = Noise(0.5, 200)
    # 2 (1.645 x 0.5 / log 1.6)^2 / (3 / pi) = 6.4 (the rank test's efficiency): seven
    assert runs_to_confirm(1.6, noise) == 7
    # half the spread, a quarter the runs (1.6), but the rank test needs three of each
    assert runs_to_confirm(1.6, Noise(0.25, 200)) == 3
    assert runs_to_confirm(0.9, noise) is None and runs_to_confirm(1.6, Noise(None, 0)) is None
    default = Evaluation({}, "d", times=[1.2, 2.1])
    best = Evaluation({"stripe_count": 4}, "b", times=[1.0])
    gain = speedup(default, best, noise)
    assert gain is not None and not gain.confident
    from iotune.strategies.racing import _choose

    choice = _choose(default, [best], 0)
    assert choice.recommend_default and choice.outcome == "undecided"
    # 2 (1.645 x 0.396 / log 1.587)^2 / (3 / pi) = 4.1: five of each
    assert choice.runs_to_decide == (5 - 2) + (5 - 1)  # what each of the two still needs
    assert "about 7 more runs of it and of the default would decide" in choice.reason


def test_replays_of_a_configuration_recorded_once_say_nothing_about_the_spread():
    from iotune.store.records import Measurement

    def replayed(time: float, recorded: int) -> Measurement:
        return Measurement.from_record({
            "kernel": "vpic", "cores": 4, "backend": "replay", "status": "ok",
            "result": {"replayed": True, "recorded_repeats": recorded,
                       "times_s": {"total": time}}})

    once = Evaluation({"stripe_count": 1}, "a", times=[2.0, 2.0],
                      measurements=[replayed(2.0, 1), replayed(2.0, 1)])
    assert not once.measurements[0].shows_spread
    assert pooled_noise([once]).sigma is None  # unknown, not zero
    twice = Evaluation({"stripe_count": 2}, "b", times=[1.0, 1.5],
                       measurements=[replayed(1.0, 2), replayed(1.5, 2)])
    noise = pooled_noise([once, twice])
    assert noise.df == 1 and noise.sigma == pytest.approx(abs(np.log(1.5)) / np.sqrt(2))


def test_the_papers_method_evaluates_its_30_and_races_after_them(tmp_path):
    """method=paper at its default budget: 20 predicted, refit, 10 more (30 configurations),
    then the race in runs of its own; the model has six selected terms plus completion."""
    from iotune.backends import RunRequest
    from iotune.strategies.base import make_strategy

    assert make_strategy("model", method="paper").default_budget() == 37
    assert make_strategy("model").default_budget() == 30  # sequential: race included
    assert make_strategy("model", method="paper").max_terms() == 6
    assert make_strategy("model").max_terms() == 7
    assert make_strategy("model", method="paper", max_terms=4).max_terms() == 4
    data = write_landscape(tmp_path / "land.csv", scales=(16, 64), configs=60)
    config = replay_config(tmp_path, data)
    backend = ReplayBackend(config)
    store = Store(config.store)
    for settings in backend.candidates(16)[:40]:
        store.append({"campaign": "train", **backend.measure(
            RunRequest("vpic", 16, settings, config.kernel.args))})
    result = tune(config, backend, store, kernel="vpic", cores=64, fresh=True,
                  strategy="model", strategy_options={"method": "paper"})
    assert len(result.evaluations) == 30
    # the paper's 30 come first whatever the race keeps; the race gets every run left
    assert result.budget.total == 37 and result.budget.reserve <= 37 - 30
    race = result.choice.race_runs
    assert race > 0 and result.budget.spent == 30 + race <= 37
    # the race's runs: repeats of the leaders and of the default (its baseline is free)
    repeats = sum(len(e.times) for e in result.evaluations) - 30
    assert repeats + len(result.default.times) - 1 == race
    model = result.model
    assert model is not None and model.settings is not None
    assert model.settings.max_terms == 6
    assert sum(not step.by_completion for step in model.steps) <= 6
