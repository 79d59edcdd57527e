"""The ``tpe`` strategy (Optuna's TPE sampler) on synthetic landscapes, dense and sparse."""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

import iotune.strategies.tpe  # noqa: F401  (registers "tpe" until the built-ins import it)
from iotune.backends.function import FunctionBackend
from iotune.errors import ConfigError
from iotune.settings.space import Limits, SearchSpace
from iotune.strategies import make_strategy
from iotune.strategies.base import Configuration
from iotune.strategies.tpe import CandidateSpace, setting_choices, startup_trials
from iotune.tune import MeasuringContext, MemorySink

optuna = pytest.importorskip("optuna")
TrialState = optuna.trial.TrialState

SPACE = SearchSpace.from_mapping({
    "stripe_count": [1, 2, 4, 8, 16, 32, 64],
    "stripe_size": ["1MiB", "2MiB", "4MiB", "8MiB", "16MiB", "32MiB"],
    "cb_nodes": [1, 2, 4, 8, 16],
})
FULL = SPACE.configurations(64, Limits(4))
CB_WRITE_PENALTY = {"enable": 0.0, "automatic": 1.0, "disable": 3.0}


def landscape(c: float, s: float, a: float) -> float:
    """The time of test_strategies' landscape at 64 cores: an interior optimum everywhere."""
    return 2 + 40 / c + 0.05 * c + 6 / s + 0.04 * s + 30 / a + 0.6 * a + 0.064


def sparse_time(settings: Mapping[str, Any]) -> float:
    """A smooth bowl in log2 of each numeric setting plus a penalty per romio_cb_write value.

    Optimum: 16 stripes of 4 MiB, a 16 MiB collective buffer, romio_cb_write enabled.
    """
    count = math.log2(settings["stripe_count"]) - 4
    size = math.log2(settings["stripe_size"]) - 22
    buffer = math.log2(settings["cb_buffer_size"]) - 24
    return (1 + 0.5 * count**2 + 0.3 * size**2 + 0.2 * buffer**2
            + CB_WRITE_PENALTY[settings["romio_cb_write"]])


def time_of(settings: Mapping[str, Any]) -> float:
    if "cb_buffer_size" in settings:
        return sparse_time(settings)
    return landscape(settings["stripe_count"], settings["stripe_size"] / 2**20,
                     settings["cb_nodes"])


def sparse_candidates(n: int = 60, seed: int = 0) -> list[Configuration]:
    """``n`` distinct random configurations of a 23,232-point grid: almost no TPE proposal
    (a continuous point in three log-scaled settings) is one of them."""
    rng = np.random.default_rng(seed)
    out: dict[str, Configuration] = {}
    while len(out) < n:
        settings = {"stripe_count": int(rng.integers(1, 65)),
                    "stripe_size": 2 ** int(rng.integers(16, 27)),
                    "cb_buffer_size": 2 ** int(rng.integers(20, 31)),
                    "romio_cb_write": str(rng.choice(list(CB_WRITE_PENALTY)))}
        out.setdefault(repr(sorted(settings.items())), settings)
    return list(out.values())


SPARSE = sparse_candidates()


class SyntheticContext(MeasuringContext):
    """tune's search context over the landscape, in memory; ``fails`` lists configurations
    whose runs fail; ``measured`` the keys measured, in order."""

    def __init__(self, budget: int | None, candidates: Sequence[Configuration] = FULL,
                 fails: Sequence[Configuration] = ()) -> None:
        failing = {repr(sorted(c.items())) for c in fails}

        def time(settings: Mapping[str, Any], cores: int) -> float | None:
            return None if repr(sorted(settings.items())) in failing else time_of(settings)

        super().__init__(backend=FunctionBackend(time), sink=MemorySink(), kernel="vpic",
                         cores=64, params={}, candidates=candidates, budget=budget)

    @property
    def measured(self) -> list[str]:
        assert isinstance(self.backend, FunctionBackend)
        return [r.key for r in self.backend.requests]


def best_time(candidates: Sequence[Configuration] = FULL) -> float:
    return min(time_of(c) for c in candidates)


def best_found(name: str, seed: int, budget: int,
               candidates: Sequence[Configuration] = FULL) -> float:
    context = SyntheticContext(budget=budget, candidates=candidates)
    make_strategy(name, seed=seed).search(context)
    best = context.best()
    assert best is not None and best.statistic is not None
    return best.statistic


def test_budget_is_respected_and_nothing_is_measured_twice():
    context = SyntheticContext(budget=12)
    strategy = make_strategy("tpe", seed=3, startup=5)
    strategy.search(context)
    assert len(context.evaluations) == 12
    assert len(context.measured) == len(set(context.measured)) == 12
    assert context.best_so_far == sorted(context.best_so_far, reverse=True)
    notes = strategy.notes
    assert notes["measured"] == 12 and notes["startup"] == 5
    assert notes["trials"] == 12 - 5
    assert len(notes["study"].get_trials(states=(TrialState.COMPLETE,))) == 12


def test_same_seed_same_search_other_seed_other_search():
    orders = []
    for seed in (7, 7, 8):
        context = SyntheticContext(budget=25)
        make_strategy("tpe", seed=seed).search(context)
        orders.append(context.measured)
    assert orders[0] == orders[1]
    assert orders[0] != orders[2]


def test_finds_near_optimum_at_moderate_budget():
    found = [best_found("tpe", seed, 30) / best_time() for seed in range(5)]
    assert max(found) <= 1.03, found


def test_beats_random_at_equal_budget():
    def median_best(name: str) -> float:
        return float(np.median([best_found(name, seed, 20) for seed in range(6)]))

    assert median_best("tpe") < median_best("random")


def test_without_budget_every_candidate_once_then_stops():
    context = SyntheticContext(budget=None)
    make_strategy("tpe", seed=1).search(context)
    assert sorted(context.measured) == sorted(context.key(c) for c in FULL)
    best = context.best()
    assert best is not None and best.statistic == pytest.approx(best_time())


def test_failed_measurements_are_pruned_and_never_best():
    failing = [c for c in FULL if c["cb_nodes"] in (4, 8)]  # around the optimum a* = 7
    context = SyntheticContext(budget=30, fails=failing)
    strategy = make_strategy("tpe", seed=0)
    strategy.search(context)
    best = context.best()
    assert best is not None and best.settings["cb_nodes"] not in (4, 8)
    failed = [e for e in context.evaluations.values() if e.statistic is None]
    assert failed  # some were tried, recorded as pruned, and the search went on
    assert len(context.evaluations) == 30
    pruned = strategy.notes["study"].get_trials(states=(TrialState.PRUNED,))
    assert sorted(t.params["cb_nodes"] for t in pruned) == sorted(
        float(e.settings["cb_nodes"]) for e in failed)


def test_sparse_search_differs_from_random_and_is_at_least_as_good():
    tpe, random = [], []
    for seed in range(10):
        runs = {}
        for name in ("tpe", "random"):
            context = SyntheticContext(budget=25, candidates=SPARSE)
            make_strategy(name, seed=seed).search(context)
            best = context.best()
            assert best is not None and best.statistic is not None
            runs[name] = (context.measured, best.statistic)
        startup = startup_trials("auto", 25)
        assert runs["tpe"][0][:startup] == runs["random"][0][:startup]
        assert runs["tpe"][0] != runs["random"][0]
        tpe.append(runs["tpe"][1])
        random.append(runs["random"][1])
    assert np.median(tpe) <= np.median(random), (tpe, random)
    assert np.median(tpe) == pytest.approx(best_time(SPARSE))


def test_sparse_every_evaluation_is_a_new_candidate():
    context = SyntheticContext(budget=30, candidates=SPARSE)
    strategy = make_strategy("tpe", seed=5)
    strategy.search(context)
    valid = {context.key(c) for c in SPARSE}
    assert set(context.measured) <= valid
    assert len(context.measured) == len(set(context.measured)) == 30
    notes = strategy.notes
    assert notes["measured"] == 30 == notes["startup"] + notes["trials"]
    assert notes["snapped"] == notes["trials"] > 0  # continuous proposals: never a candidate


@pytest.mark.parametrize("budget", [1, 2, 7, 25, 59, 60])
def test_sparse_budget_is_spent_exactly(budget):
    context = SyntheticContext(budget=budget, candidates=SPARSE)
    make_strategy("tpe", seed=1).search(context)
    assert len(context.measured) == len(context.evaluations) == budget


def test_sparse_more_budget_than_candidates_runs_each_once():
    context = SyntheticContext(budget=100, candidates=SPARSE[:20])
    make_strategy("tpe", seed=2, startup=3).search(context)
    assert sorted(context.measured) == sorted(context.key(c) for c in SPARSE[:20])


def test_sparse_failures_do_not_stop_it_and_are_not_run_again():
    failing = [c for c in SPARSE if c["romio_cb_write"] == "enable"
               or c["stripe_count"] < 8]  # the best region, and the most of the space
    context = SyntheticContext(budget=40, candidates=SPARSE, fails=failing)
    strategy = make_strategy("tpe", seed=3, startup=4)
    strategy.search(context)
    assert len(context.measured) == len(set(context.measured)) == 40
    failed = {e.key for e in context.evaluations.values() if e.statistic is None}
    assert failed and failed <= {context.key(c) for c in failing}
    trials = strategy.notes["study"].get_trials(states=(TrialState.COMPLETE, TrialState.PRUNED))
    states = {context.measured[i]: t.state for i, t in enumerate(trials)}
    assert {k for k, state in states.items() if state == TrialState.PRUNED} == failed


def test_study_learns_the_snapped_candidates_not_the_proposals():
    context = SyntheticContext(budget=20, candidates=SPARSE)
    strategy = make_strategy("tpe", seed=4)
    strategy.search(context)
    study = strategy.notes["study"]
    complete = study.get_trials(states=(TrialState.COMPLETE,))
    asked = study.get_trials(states=(TrialState.FAIL,))
    assert len(complete) == 20 and len(asked) == strategy.notes["trials"] > 0
    space = CandidateSpace(SPARSE)
    by_key = {context.key(c): i for i, c in enumerate(SPARSE)}
    for trial, key in zip(complete, context.measured, strict=True):
        assert trial.params == space.params(by_key[key])
        assert trial.value == pytest.approx(context.evaluations[key].statistic)
    candidate_params = [space.params(i) for i in range(len(SPARSE))]
    assert all(t.params not in candidate_params for t in asked)
    distributions = space.distributions(optuna)
    assert all(t.distributions == distributions for t in complete + asked)


def test_candidate_space_kinds():
    candidates = [
        {"stripe_count": 1, "stripe_size": 2**20, "romio_cb_write": "enable",
         "hint.ind_wr_buffer_size": 4, "cb_nodes": 2, "cb_buffer_size": 2**24},
        {"stripe_count": 64, "stripe_size": 2**20, "romio_cb_write": "disable",
         "hint.ind_wr_buffer_size": 8, "cb_nodes": None, "cb_buffer_size": 2**26},
    ]
    space = CandidateSpace(candidates)
    assert space.numeric == {"stripe_count": (1.0, 64.0), "cb_buffer_size": (2.0**24, 2.0**26)}
    assert space.categorical == {"romio_cb_write": ["enable", "disable"],
                                 "hint.ind_wr_buffer_size": [4, 8], "cb_nodes": [2, None]}
    distributions = space.distributions(optuna)
    assert distributions["stripe_count"] == optuna.distributions.FloatDistribution(
        1.0, 64.0, log=True)
    assert "stripe_size" not in distributions  # one value: fixed


def test_nearest_is_log_scaled_counts_categorical_mismatches_and_breaks_ties_early():
    candidates = [{"stripe_count": 1, "romio_cb_write": "enable"},
                  {"stripe_count": 64, "romio_cb_write": "disable"},
                  {"stripe_count": 8, "romio_cb_write": "disable"},
                  {"stripe_count": 64, "romio_cb_write": "enable"}]
    space = CandidateSpace(candidates)
    every = np.ones(4, dtype=bool)
    # log scale: 8 is halfway between 1 and 64, nearer than a categorical mismatch (1)
    assert space.nearest({"stripe_count": 1.0, "romio_cb_write": "disable"}, every) == (2, True)
    # equally near (0.5 each): the earliest wins
    assert space.nearest({"stripe_count": 8.0, "romio_cb_write": "enable"}, every) == (0, True)
    assert space.nearest({"stripe_count": 64.0, "romio_cb_write": "enable"}, every) == (3, False)
    allowed = np.array([False, True, True, False])
    assert space.nearest({"stripe_count": 64.0, "romio_cb_write": "enable"}, allowed) == (1, True)


def test_startup_scales_with_the_budget():
    assert [startup_trials("auto", b) for b in (1, 9, 12, 25, 30, 100)] == [3, 3, 4, 8, 10, 10]
    assert startup_trials("auto", None) == startup_trials(None, None) == 10
    assert startup_trials(5, 25) == startup_trials("5", 25) == 5
    assert startup_trials(0, 25) == 0
    context = SyntheticContext(budget=12)
    strategy = make_strategy("tpe")
    strategy.search(context)
    assert strategy.notes["startup"] == 4 and strategy.notes["trials"] == 8


@pytest.mark.parametrize("value", [-1, "many", 2.5, True])
def test_bad_startup_is_a_config_error_before_the_search(value):
    with pytest.raises(ConfigError, match=r"--option startup: .* is not an integer in "
                                          r"\[0, 1000000\] or 'auto'"):
        make_strategy("tpe", startup=value)


def test_single_candidate_and_fixed_settings():
    context = SyntheticContext(budget=5, candidates=FULL[:1])
    make_strategy("tpe").search(context)
    assert len(context.evaluations) == 1


def test_setting_choices_keep_first_appearance_and_unset():
    choices = setting_choices([{"a": 2, "b": "x"}, {"a": 1}, {"a": np.int64(2), "b": "y"}])
    assert choices == {"a": [2, 1], "b": ["x", None, "y"]}
    assert all(type(v) is int for v in choices["a"])


def test_optuna_is_quiet_and_its_verbosity_restored(capfd):
    before = optuna.logging.get_verbosity()
    make_strategy("tpe", seed=4).search(SyntheticContext(budget=15))
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert optuna.logging.get_verbosity() == before


def test_missing_optuna_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # makes `import optuna` fail
    with pytest.raises(ConfigError, match=r"--strategy tpe: needs optuna \(pip install "
                                          r"optuna\)"):
        make_strategy("tpe").search(SyntheticContext(budget=5))


def test_unknown_option():
    with pytest.raises(ConfigError, match="strategy tpe: unknown option"):
        make_strategy("tpe", population=4)
