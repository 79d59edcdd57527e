"""A genetic algorithm over the search space: the H5Tuner baseline of Behzad et al.

Individuals are candidate configurations. Each generation keeps the best individual
(elitism), picks parents by binary tournament, mixes them by uniform crossover with
probability ``crossover``, and resets each setting to a random allowed value with
probability ``mutation``. A child that breaks a rule of the space (e.g. too many aggregators
at this scale) is replaced by a random valid candidate. Evaluations are cached by the
context, so revisiting a configuration costs no budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iotune.strategies.base import (
    Configuration,
    SearchContext,
    Strategy,
    StrategyOption,
    register_strategy,
)


@register_strategy
class Genetic(Strategy):
    """Genetic algorithm (population, tournament selection, crossover, mutation)."""

    name = "genetic"
    options = (
        StrategyOption("population", 10, "individuals per generation"),
        StrategyOption("generations", 15, "generations at most"),
        StrategyOption("mutation", 0.15, "probability of mutating each setting"),
        StrategyOption("crossover", 0.8, "probability of crossing two parents"),
        StrategyOption("seed", 0, "random seed"),
    )

    def search(self, context: SearchContext) -> None:
        rng = np.random.default_rng(self.values["seed"])
        candidates = context.candidates
        if not candidates:
            return
        names = list(candidates[0])
        choices = {n: sorted({c[n] for c in candidates}, key=str) for n in names}
        valid = {context.key(c) for c in candidates}
        size = min(self.values["population"], len(candidates))
        start = rng.choice(len(candidates), size=size, replace=False)
        population = [candidates[i] for i in start]
        for _ in range(self.values["generations"]):
            scores = self._fitness(context, population)
            if context.exhausted or scores is None:
                return
            elite = population[int(np.argmin(scores))]
            children: list[Configuration] = [elite]
            while len(children) < size:
                a = self._tournament(population, scores, rng)
                b = self._tournament(population, scores, rng)
                crossing = rng.random() < self.values["crossover"]
                child = self._cross(a, b, rng) if crossing else dict(a)
                child = self._mutate(child, choices, rng)
                if context.key(child) not in valid:
                    child = candidates[int(rng.integers(len(candidates)))]
                children.append(child)
            population = children

    @staticmethod
    def _fitness(context: SearchContext, population: list[Configuration]) -> list[float] | None:
        evaluations = context.evaluate(population)
        if len(evaluations) < len(population):
            return None  # budget ran out mid-generation
        return [e.statistic if e.statistic is not None else float("inf") for e in evaluations]

    @staticmethod
    def _tournament(population: list[Configuration], scores: list[float],
                    rng: np.random.Generator) -> Configuration:
        i, j = rng.integers(len(population), size=2)
        return population[i] if scores[i] <= scores[j] else population[j]

    @staticmethod
    def _cross(a: Configuration, b: Configuration, rng: np.random.Generator) -> Configuration:
        return {n: (a[n] if rng.random() < 0.5 else b[n]) for n in a}

    def _mutate(self, child: Configuration, choices: dict[str, list[Any]],
                rng: np.random.Generator) -> Configuration:
        out = dict(child)
        for name, values in choices.items():
            if rng.random() < self.values["mutation"]:
                out[name] = values[int(rng.integers(len(values)))]
        return out

