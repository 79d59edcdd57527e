"""The production-jobs rule on simulated jobs: the risk bound, first trials, the cap,
settling, and the default kept when nothing is better."""

from __future__ import annotations

import math

import numpy as np

from iotune.production.rule import (
    DRIFT_EVERY,
    EXPLORE_SHARE,
    RISK,
    TOP_TRIALS,
    Run,
    assess,
    choose,
)


def _campaign(truth: dict[str, float], sigma: float, jobs: int, seed: int,
              candidates: list[str] | None = None) -> list[Run]:
    """``jobs`` jobs through the rule, each drawing a log-normal time around its
    configuration's true time; also checks the risk bound at every choice."""
    rng = np.random.default_rng(seed)
    ranked = candidates if candidates is not None else [c for c in truth if c != "default"]
    runs: list[Run] = []
    for _ in range(jobs):
        choice = choose(runs, "default", ranked)
        before = assess(runs, "default", ranked).estimates.get(choice.config)
        if before is not None and before.runs and choice.config != "default":
            assert before.p_slower is not None and before.p_slower <= RISK, choice
        seconds = truth[choice.config] * math.exp(sigma * rng.standard_normal())
        runs.append(Run(choice.config, choice.role, seconds))
    return runs


def test_a_much_slower_configuration_is_not_run_again_after_its_first_run() -> None:
    for seed in range(10):
        runs = _campaign({"default": 10.0, "slow": 20.0}, 0.1, 40, seed)
        assert [r.config for r in runs].count("slow") == 1
        assert assess(runs, "default", ["slow"]).recommendation == "default"


def test_settles_on_a_clear_gain_then_exploits_with_drift_checks() -> None:
    for seed in range(10):
        runs = _campaign({"default": 10.0, "fast": 6.0}, 0.1, 40, seed)
        state = assess(runs, "default", ["fast"])
        assert state.settled == "fast"
        roles = [r.role for r in runs]
        first = roles.index("best")
        assert first < 12
        assert all(role in ("best", "drift") for role in roles[first:])
        drifts = [i + 1 for i, role in enumerate(roles) if role == "drift"]
        assert drifts and all(job % DRIFT_EVERY == 0 for job in drifts)
        assert all(runs[i - 1].config == "default" for i in drifts)


def test_picks_the_best_of_two_gains() -> None:
    for seed in range(10):
        runs = _campaign({"default": 10.0, "good": 7.0, "better": 4.0}, 0.1, 40, seed)
        assert assess(runs, "default", ["good", "better"]).recommendation == "better"


def test_keeps_the_default_when_nothing_is_better() -> None:
    for seed in range(10):
        runs = _campaign({"default": 10.0, "same": 10.2, "worse": 10.6}, 0.08, 40, seed)
        state = assess(runs, "default", ["same", "worse"])
        assert state.recommendation == "default"


def test_a_held_back_candidate_that_looks_slower_settles_on_the_default() -> None:
    runs = [Run("default", "baseline", s) for s in (10.0, 10.5, 9.5)]
    runs.append(Run("slow", "challenger", 16.0))
    state = assess(runs, "default", ["slow"])
    assert state.held_back == ["slow"]
    assert state.settled == "default"
    assert choose(runs, "default", ["slow"]).config == "default"


def test_first_trials_go_only_to_the_top_ranked_candidates() -> None:
    truth = {"default": 10.0, **{f"c{i}": 10.0 for i in range(6)}}
    ranked = [f"c{i}" for i in range(6)]
    for seed in range(5):
        runs = _campaign(truth, 0.05, 40, seed, ranked)
        tried = {r.config for r in runs} - {"default"}
        assert tried <= set(ranked[:TOP_TRIALS])
        assert tried  # equal configurations are within the risk bound: some were tried


def test_exploring_jobs_stay_under_the_cap_at_every_point() -> None:
    truth = {"default": 10.0, "a": 9.8, "b": 9.9}
    for seed in range(5):
        runs = _campaign(truth, 0.2, 40, seed)
        for n in range(1, len(runs) + 1):
            explored = sum(1 for r in runs[:n] if r.role == "challenger")
            assert explored <= EXPLORE_SHARE * n


def test_a_running_first_trial_blocks_a_second_one_of_the_same_configuration() -> None:
    runs = [Run("default", "baseline", s) for s in (10.0, 10.5, 9.5)]
    first = choose(runs, "default", ["x"])
    assert (first.config, first.role) == ("x", "challenger")
    runs.append(Run("x", "challenger", pending=True))
    assert choose(runs, "default", ["x"]).config == "default"


def test_killed_and_failed_jobs_count_as_jobs_not_as_times() -> None:
    runs = [Run("default", "baseline", 10.0), Run("default", "baseline", None),
            Run("default", "baseline", 11.0)]
    state = assess(runs, "default", ["x"])
    assert state.jobs == 3
    assert state.estimates["default"].runs == 2
