"""The production-jobs rule on simulated jobs: the risk bound, first trials, the cap,
settling, and the default kept when nothing is better."""

from __future__ import annotations

import math

import numpy as np

from iotune.production.rule import (
    CONFIDENCE,
    DRIFT_EVERY,
    EXPLORE_SHARE,
    RACE_CONFIDENCE,
    RACE_RUNS,
    RISK,
    TOP_TRIALS,
    Prior,
    Run,
    assess,
    choose,
    race_confirms,
    share_short_of,
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


def test_each_configuration_has_one_place() -> None:
    runs = [Run("default", "baseline", s) for s in (10.0, 10.5, 9.5)]
    runs += [Run("slow", "challenger", 16.0), Run("gone", "challenger", 9.0)]
    state = assess(runs, "default", ["slow", "fresh"])
    assert [state.place(c) for c in ("default", "fresh", "slow", "gone")] == [
        "default", "admissible", "held back", "not a candidate"]


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


def _jobs(config: str, role: str, seconds: list[float]) -> list[Run]:
    return [Run(config, role, s) for s in seconds]


def test_the_race_s_rank_test_settles_a_consistent_gain_the_t_model_does_not_confirm() -> None:
    # A 6% gain: each of the candidate's runs is faster than the default's run of the same
    # rank, but the spread of log times (0.08) keeps the t model's probability below 99%.
    default, fast = [0.728, 0.783, 0.854], [0.701, 0.739, 0.825]
    runs = _jobs("default", "baseline", default * 6) + _jobs("fast", "challenger", fast * 6)
    state = assess(runs, "default", ["fast"])
    assert (state.estimates["fast"].p_faster or 0.0) < CONFIDENCE
    assert race_confirms([math.log(s) for s in fast * 6], [math.log(s) for s in default * 6])
    assert state.settled == "fast"
    assert state.confidence == RACE_CONFIDENCE
    assert choose(runs, "default", ["fast"]).config == "fast"


def test_the_race_s_rule_waits_for_its_runs_and_needs_a_faster_median() -> None:
    default, fast = [0.728, 0.783, 0.854], [0.701, 0.739, 0.825]
    short = RACE_RUNS // 3
    runs = (_jobs("default", "baseline", default * short)
            + _jobs("fast", "challenger", fast * short))
    assert assess(runs, "default", ["fast"]).settled is None
    logs = [math.log(s) for s in default * 6]
    assert not race_confirms(logs, logs)
    # Most pairs favour the candidate, but its median run is the default's: no gain for a
    # typical job.
    assert not race_confirms([math.log(s) for s in [0.7, 0.783, 0.784] * 6],
                             [math.log(s) for s in [0.782, 0.783, 0.9] * 6])


def test_a_held_back_candidate_plausibly_faster_than_the_leader_keeps_it_from_settling() -> None:
    baseline = _jobs("default", "baseline", [0.856, 0.966, 0.994])
    leader = _jobs("lead", "challenger", [0.751, 0.775, 0.809] * 3)
    more = _jobs("default", "default", [0.856, 0.966, 0.994])
    # One run 10% faster than the default: out by the risk bound under this noise, but it
    # may yet be well faster than the leader.
    runs = [*baseline, Run("rival", "challenger", 0.87), *leader, *more]
    state = assess(runs, "default", ["rival", "lead"])
    assert state.held_back == ["rival"]
    assert (state.estimates["lead"].p_faster or 0.0) >= CONFIDENCE
    assert state.settled is None
    assert "rival" in state.needed
    # A rival whose one run was far slower is no reason to wait.
    runs = [*baseline, Run("rival", "challenger", 1.6), *leader, *more]
    assert assess(runs, "default", ["rival", "lead"]).settled == "lead"


def _first_run_as_slow_as_the_default() -> list[Run]:
    base = [Run("default", "baseline", t) for t in (10.0, 10.4, 9.7, 14.0, 10.1)]
    return [*base, Run("x", "challenger", 10.2)]


def test_a_tunes_estimate_keeps_one_unlucky_run_from_settling_the_risk_alone() -> None:
    runs = _first_run_as_slow_as_the_default()
    alone = assess(runs, "default", ["x"])
    assert alone.held_back == ["x"] and alone.estimates["x"].p_slower > 0.2
    # The tune measured it 1.7x faster, 90% interval 1.3-2.2x: with that, one run at the
    # default's time leaves it well inside the risk bound, and the next job may run it.
    tuned = Prior.from_speedup(1.7, 1.3, 2.2)
    assert tuned is not None
    state = assess(runs, "default", ["x"], {"x": tuned})
    assert state.admissible == ["x"] and state.estimates["x"].p_slower < RISK / 5
    assert choose(runs, "default", ["x"], {"x": tuned}).config == "x"
    # Settling still rests on the production runs alone: one run settles nothing.
    assert state.settled is None and state.estimates["x"].p_faster == alone.estimates["x"].p_faster


def test_a_tune_that_found_it_slower_holds_it_back_more() -> None:
    runs = _first_run_as_slow_as_the_default()
    slower = Prior.from_speedup(0.8, 0.6, 1.0)
    assert slower is not None and slower.log_ratio > 0
    state = assess(runs, "default", ["x"], {"x": slower})
    assert state.estimates["x"].p_slower > assess(runs, "default", ["x"]).estimates["x"].p_slower


def test_a_prior_takes_the_wider_side_of_a_lopsided_interval() -> None:
    prior = Prior.from_speedup(1.743, 0.7, 1.941)
    assert prior is not None
    assert math.isclose(prior.log_ratio, -math.log(1.743))
    assert math.isclose(prior.sd, math.log(1.743 / 0.7) / 1.6448536, rel_tol=1e-6)
    for bad in ((1.5, 1.6, 2.0), (1.5, 0.0, 2.0), (1.5, 1.0, math.inf), (1.5, 1.5, 1.5)):
        assert Prior.from_speedup(*bad) is None


def test_a_running_first_trial_has_its_own_place_and_the_waiting_job_says_why() -> None:
    runs = [Run("default", "baseline", s) for s in (10.0, 10.5, 9.5)]
    runs.append(Run("x", "challenger", pending=True))
    state = assess(runs, "default", ["x"])
    assert state.running_trials == ["x"] and state.place("x") == "first trial running"
    assert state.needed == "the result of the running first trial of x"
    waiting = choose(runs, "default", ["x"])
    assert waiting.reason == "waiting for the result of the running first trial of x"
    # a lost job (neither pending nor a time) releases the trial
    lost = [*runs[:3], Run("x", "challenger")]
    assert choose(lost, "default", ["x"]).reason == "first trial of a top-ranked candidate"


def test_a_probability_short_of_the_bound_is_shown_short_of_it() -> None:
    assert share_short_of(0.9899, 0.99) == "98.99%"
    assert share_short_of(0.986, 0.99) == "98.6%"
    assert share_short_of(0.42, 0.99) == "42%"
    assert share_short_of(0.999999 * 0.99, 0.99) == "< 99%"
    for p in np.linspace(0.0, 0.98999, 2000):
        shown = share_short_of(float(p), 0.99)
        assert shown.startswith("<") or float(shown.rstrip("%")) < 99.0
