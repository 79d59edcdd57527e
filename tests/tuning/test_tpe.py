"""The ``tpe`` strategy (Optuna's TPE sampler) on the synthetic landscape of test_strategies."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pytest

import iotune.strategies.tpe  # noqa: F401  (registers "tpe" until the built-ins import it)
from iotune.errors import ConfigError
from iotune.space import Limits, SearchSpace
from iotune.strategies import SearchContext, make_strategy
from iotune.strategies.base import Configuration, Evaluation
from iotune.strategies.tpe import frozen, setting_choices

pytest.importorskip("optuna")

SPACE = SearchSpace.from_mapping({
    "stripe_count": [1, 2, 4, 8, 16, 32, 64],
    "stripe_size": ["1MiB", "2MiB", "4MiB", "8MiB", "16MiB", "32MiB"],
    "cb_nodes": [1, 2, 4, 8, 16],
})
FULL = SPACE.configurations(64, Limits(4))


def landscape(c: float, s: float, a: float) -> float:
    """The time of test_strategies' landscape at 64 cores: an interior optimum everywhere."""
    return 2 + 40 / c + 0.05 * c + 6 / s + 0.04 * s + 30 / a + 0.6 * a + 0.064


def time_of(settings: Mapping[str, Any]) -> float:
    return landscape(settings["stripe_count"], settings["stripe_size"] / 2**20,
                     settings["cb_nodes"])


class SyntheticContext(SearchContext):
    """Measures the landscape exactly; ``fails`` lists configurations whose runs fail."""

    def __init__(self, budget: int | None, candidates: Sequence[Configuration] = FULL,
                 fails: Sequence[Configuration] = ()) -> None:
        super().__init__(candidates, budget)
        self.fails = {self.key(c) for c in fails}
        self.measured: list[str] = []

    def key(self, settings: Mapping[str, Any]) -> str:
        return repr(sorted(settings.items()))

    def _measure(self, settings: Configuration, evaluation: Evaluation) -> None:
        self.measured.append(evaluation.key)
        if evaluation.key in self.fails:
            evaluation.failures.append("simulated failure")
        else:
            evaluation.times.append(time_of(settings))
        evaluation.summarise("median")


def best_time(candidates: Sequence[Configuration] = FULL) -> float:
    return min(time_of(c) for c in candidates)


def test_budget_is_respected_and_nothing_is_measured_twice():
    context = SyntheticContext(budget=12)
    strategy = make_strategy("tpe", seed=3, startup=5)
    strategy.search(context)
    assert len(context.evaluations) == 12
    assert len(context.measured) == len(set(context.measured)) == 12
    assert context.best_so_far == sorted(context.best_so_far, reverse=True)
    assert strategy.notes["measured"] == 12
    assert strategy.notes["trials"] == 12 + strategy.notes["invalid"] + strategy.notes["repeats"]


def test_same_seed_same_search_other_seed_other_search():
    orders = []
    for seed in (7, 7, 8):
        context = SyntheticContext(budget=25)
        make_strategy("tpe", seed=seed).search(context)
        orders.append(context.measured)
    assert orders[0] == orders[1]
    assert orders[0] != orders[2]


def test_finds_near_optimum_at_moderate_budget():
    found = []
    for seed in range(5):
        context = SyntheticContext(budget=30)
        make_strategy("tpe", seed=seed).search(context)
        best = context.best()
        assert best is not None and best.statistic is not None
        found.append(best.statistic / best_time())
    assert max(found) <= 1.03, found


def test_beats_random_at_equal_budget():
    def median_best(name: str) -> float:
        values = []
        for seed in range(6):
            context = SyntheticContext(budget=20)
            make_strategy(name, seed=seed).search(context)
            best = context.best()
            assert best is not None and best.statistic is not None
            values.append(best.statistic)
        return float(np.median(values))

    assert median_best("tpe") < median_best("random")


def test_without_budget_every_candidate_once_then_stops():
    context = SyntheticContext(budget=None)
    make_strategy("tpe", seed=1, max_invalid=3).search(context)
    assert sorted(context.measured) == sorted(context.key(c) for c in FULL)
    best = context.best()
    assert best is not None and best.statistic == pytest.approx(best_time())


def test_invalid_proposals_cost_nothing_and_random_fallback_keeps_going():
    rng = np.random.default_rng(0)
    keep = rng.random(len(FULL)) < 0.35  # a sparse subset: most proposals are not candidates
    candidates = [c for c, k in zip(FULL, keep, strict=True) if k]
    context = SyntheticContext(budget=40, candidates=candidates)
    strategy = make_strategy("tpe", seed=2, startup=5, max_invalid=4)
    strategy.search(context)
    valid = {context.key(c) for c in candidates}
    assert len(context.measured) == 40
    assert set(context.measured) <= valid
    assert strategy.notes["invalid"] > 0
    assert strategy.notes["fallbacks"] > 0
    pruned = [t for t in strategy.notes["study"].trials if t.state.name == "PRUNED"]
    assert len(pruned) == strategy.notes["invalid"]


def test_failed_measurements_are_pruned_and_never_best():
    failing = [c for c in FULL if c["cb_nodes"] in (4, 8)]  # around the optimum a* = 7
    context = SyntheticContext(budget=30, fails=failing)
    make_strategy("tpe", seed=0).search(context)
    best = context.best()
    assert best is not None and best.settings["cb_nodes"] not in (4, 8)
    failed = [e for e in context.evaluations.values() if e.statistic is None]
    assert failed  # some were tried, told as pruned, and the search went on
    assert len(context.evaluations) == 30


def test_single_candidate_and_fixed_settings():
    context = SyntheticContext(budget=5, candidates=FULL[:1])
    make_strategy("tpe").search(context)
    assert len(context.evaluations) == 1


def test_setting_choices_keep_first_appearance_and_unset():
    choices = setting_choices([{"a": 2, "b": "x"}, {"a": 1}, {"a": np.int64(2), "b": "y"}])
    assert choices == {"a": [2, 1], "b": ["x", None, "y"]}
    assert all(type(v) is int for v in choices["a"])
    assert frozen({"b": None, "a": 1}) == frozen({"a": 1})


def test_optuna_is_quiet_and_its_verbosity_restored(capfd):
    import optuna

    before = optuna.logging.get_verbosity()
    make_strategy("tpe", seed=4).search(SyntheticContext(budget=15))
    out, err = capfd.readouterr()
    assert out == "" and err == ""
    assert optuna.logging.get_verbosity() == before


def test_missing_optuna_is_a_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "optuna", None)  # makes `import optuna` fail
    with pytest.raises(ConfigError, match=r"--strategy tpe: needs optuna \(pip install "
                                          r"'iotune\[tpe\]'\)"):
        make_strategy("tpe").search(SyntheticContext(budget=5))


def test_unknown_option():
    with pytest.raises(ConfigError, match="strategy tpe: unknown option"):
        make_strategy("tpe", population=4)
