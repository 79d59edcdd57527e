"""iotune's one genetic algorithm, and that both of its users run it."""

from __future__ import annotations

import numpy as np
import pytest

import iotune.strategies.evolution as evolution
from iotune.strategies import SearchContext, make_strategy
from iotune.strategies.evolution import GeneticOptions, evolve

SIZES = [8] * 6


def _distance_fitness(target: tuple[int, ...]):
    seen: list[tuple[int, ...]] = []

    def fitness(population):
        seen.extend(population)
        return [-float(np.abs(np.subtract(g, target)).sum()) for g in population]

    return fitness, seen


def _random_population(rng, count=12):
    return [tuple(int(v) for v in rng.integers(8, size=len(SIZES))) for _ in range(count)]


@pytest.mark.parametrize("two_point", [False, True])
def test_evolve_finds_the_optimum_and_stops_at_the_goal(two_point) -> None:
    target = (7, 0, 3, 5, 1, 6)
    fitness, _ = _distance_fitness(target)
    rng = np.random.default_rng(1)
    options = GeneticOptions(population=12, generations=200, tournament=3, crossover=0.9,
                             two_point=two_point, mutation=0.2, step=0.7, elite=2, goal=0.0)
    result = evolve(SIZES, _random_population(rng), fitness, options, rng,
                    ordered=[True] * len(SIZES))
    assert result is not None and result.best == target and result.fitness == 0.0
    assert result.generations < 200  # stopped at the goal, not by the generation limit
    assert result.history == sorted(result.history)  # elitism: never worse
    assert len(result.history) == result.generations + 1


def test_evolve_is_deterministic_for_a_generator_seed() -> None:
    runs = []
    for _ in range(2):
        rng = np.random.default_rng(5)
        fitness, seen = _distance_fitness((1, 2, 3, 4, 5, 6))
        evolve(SIZES, _random_population(rng), fitness,
               GeneticOptions(population=12, generations=10), rng)
        runs.append(seen)
    assert runs[0] == runs[1] and len(runs[0]) == 12 * 11


def test_a_short_fitness_answer_stops_the_search() -> None:
    calls = []

    def budget(population):
        calls.append(len(population))
        return [0.0] * (len(population) if len(calls) < 3 else 2)

    rng = np.random.default_rng(0)
    result = evolve(SIZES, _random_population(rng), budget,
                    GeneticOptions(population=12, generations=50), rng)
    assert result is not None and result.generations == 1 and len(calls) == 3
    assert evolve(SIZES, _random_population(rng), lambda p: [], GeneticOptions(4, 5),
                  rng) is None


def test_patience_ends_a_search_that_stopped_improving() -> None:
    rng = np.random.default_rng(0)
    result = evolve(SIZES, _random_population(rng), lambda p: [1.0] * len(p),
                    GeneticOptions(population=12, generations=100, patience=4), rng)
    assert result is not None and result.generations == 4


def test_repair_sees_every_child_and_what_it_returns_is_evaluated() -> None:
    allowed = {(i, i, i, i, i, i) for i in range(8)}
    evaluated: list[tuple[int, ...]] = []

    def fitness(population):
        evaluated.extend(population)
        return [float(g[0]) for g in population]

    def repair(genome, rng):
        return genome if genome in allowed else (int(rng.integers(8)),) * 6

    rng = np.random.default_rng(2)
    result = evolve(SIZES, sorted(allowed)[:4], fitness,
                    GeneticOptions(population=4, generations=30, mutation=0.5), rng,
                    repair=repair)
    assert set(evaluated) <= allowed
    assert result is not None and result.best == (7,) * 6


def test_ordered_steps_stay_in_range_and_offspring_is_checked() -> None:
    rng = np.random.default_rng(3)
    options = GeneticOptions(population=2, generations=1, mutation=1.0, step=1.0)
    for _ in range(200):
        child = evolution._mutate((0, 7), [8, 8], [True, True], options, rng)
        assert 0 <= child[0] <= 2 and 5 <= child[1] <= 7
    with pytest.raises(ValueError, match="offspring must be 1 or 2, but got 3"):
        GeneticOptions(population=4, generations=1, offspring=3)
    with pytest.raises(ValueError, match=r"0 <= elite <= population must hold, but got 5"):
        GeneticOptions(population=4, generations=1, elite=5)


class _Bowl(SearchContext):
    """Write time = distance from (cb_nodes 4, stripe_count 8), no noise."""

    def key(self, settings):
        return repr(sorted(settings.items()))

    def _measure(self, settings, evaluation):
        evaluation.times.append(1.0 + abs(settings["cb_nodes"] - 4)
                                + abs(settings["stripe_count"] - 8) / 4)
        evaluation.summarise("median")


def test_the_strategy_and_the_proxy_search_both_run_evolve(monkeypatch) -> None:
    from iotune.darshan.analytic import Candidate, kernel_file
    from iotune.darshan.search import SearchOptions, search_kernels
    from iotune.darshan.signature import FEATURE_NAMES, signature

    callers = []
    real = evolution.evolve

    def spy(*args, **kwargs):
        callers.append(args[3])
        return real(*args, **kwargs)

    monkeypatch.setattr("iotune.strategies.genetic.evolve", spy)
    monkeypatch.setattr("iotune.darshan.search.evolve", spy)
    candidates = [{"cb_nodes": c, "stripe_count": s} for c in (1, 2, 4, 8) for s in (1, 4, 8)]
    context = _Bowl(candidates, budget=None)
    make_strategy("genetic", seed=1, population=8, generations=30, mutation=0.3).search(context)
    best = context.best()
    assert best is not None and best.settings == {"cb_nodes": 4, "stripe_count": 8}
    target = kernel_file(Candidate("vpic", {"particles_per_rank": 2**16, "timesteps": 2},
                                   True, 4))
    found = search_kernels(target, signature(target), np.ones(len(FEATURE_NAMES)),
                           ("vpic",), SearchOptions(seed=0))
    assert found[0].similarity >= 0.999
    assert [o.offspring for o in callers] == [1, 2] and callers[1].two_point
