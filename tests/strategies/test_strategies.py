"""Every strategy on a synthetic landscape with a known optimum, at equal budgets."""


import numpy as np
import pandas as pd
import pytest

from iotune.backends.function import FunctionBackend
from iotune.errors import ConfigError
from iotune.settings.space import Limits, SearchSpace
from iotune.strategies import make_strategy
from iotune.tune import MeasuringContext, MemorySink

SPACE = SearchSpace.from_mapping({
    "stripe_count": [1, 2, 4, 8, 16, 32, 64],
    "stripe_size": ["1MiB", "2MiB", "4MiB", "8MiB", "16MiB", "32MiB"],
    "cb_nodes": [1, 2, 4, 8, 16],
})


def landscape(c: float, s: float, a: float, cores: float) -> float:
    """A time with an interior optimum in every setting (s in MiB)."""
    return 2 + 40 / c + 0.05 * c + 6 / s + 0.04 * s + 30 / a + 0.6 * a + 0.001 * cores


def synthetic_time(settings, cores) -> float:
    return landscape(settings["stripe_count"], settings["stripe_size"] / 2**20,
                     settings["cb_nodes"], cores)


def SyntheticContext(budget, training=None) -> MeasuringContext:
    """tune's search context over the synthetic landscape at 64 ranks, in memory."""
    return MeasuringContext(backend=FunctionBackend(synthetic_time), sink=MemorySink(training),
                            kernel="vpic", cores=64, params={},
                            candidates=SPACE.configurations(64, Limits(4)), budget=budget)


def true_best():
    return min(landscape(c["stripe_count"], c["stripe_size"] / 2**20, c["cb_nodes"], 64)
               for c in SPACE.configurations(64, Limits(4)))


def training_data():
    rng = np.random.default_rng(0)
    rows = []
    for cores in (8, 16, 32):
        for c in SPACE.configurations(cores, Limits(4)):
            if rng.random() < 0.3:
                t = landscape(c["stripe_count"], c["stripe_size"] / 2**20, c["cb_nodes"], cores)
                rows.append(dict(c, cores=cores, write_time=t))
    return pd.DataFrame(rows)


@pytest.mark.parametrize("name", ["exhaustive", "random", "genetic", "model"])
def test_budget_is_respected(name):
    context = SyntheticContext(budget=12, training=training_data())
    make_strategy(name).search(context)
    assert 0 < len(context.evaluations) <= 12
    assert len(context.best_so_far) == len(context.evaluations)
    assert context.best_so_far == sorted(context.best_so_far, reverse=True)


def test_exhaustive_without_budget_finds_the_optimum():
    context = SyntheticContext(budget=None)
    make_strategy("exhaustive").search(context)
    assert context.best().statistic == pytest.approx(true_best())


def test_model_guided_finds_near_optimum_with_30_runs():
    context = SyntheticContext(budget=30, training=training_data())
    strategy = make_strategy("model", top_k=20, top_k_refit=10)
    strategy.search(context)
    assert context.best().statistic <= true_best() * 1.02
    assert strategy.notes["model"] is not None


def test_model_guided_beats_random_at_equal_budget():
    model_ctx = SyntheticContext(budget=15, training=training_data())
    make_strategy("model", top_k=10, top_k_refit=5).search(model_ctx)
    random_best = []
    for seed in range(10):
        ctx = SyntheticContext(budget=15)
        make_strategy("random", seed=seed).search(ctx)
        random_best.append(ctx.best().statistic)
    assert model_ctx.best().statistic < np.median(random_best)


def test_genetic_is_seeded():
    runs = []
    for _ in range(2):
        ctx = SyntheticContext(budget=25)
        make_strategy("genetic", seed=5, population=6).search(ctx)
        runs.append(list(ctx.evaluations))
    assert runs[0] == runs[1]


def test_unknown_strategy_and_option():
    with pytest.raises(ConfigError, match="unknown strategy 'annealing'; known strategies: "
                                          "exhaustive, genetic, model, portfolio, random, tpe"):
        make_strategy("annealing")
    with pytest.raises(ConfigError, match="unknown option"):
        make_strategy("random", temperature=3)
