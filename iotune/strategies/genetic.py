"""A genetic algorithm over the search space: the H5Tuner baseline of Behzad et al.

Individuals are candidate configurations, each setting a gene whose values are the
setting's values among the candidates. The algorithm is iotune's one genetic algorithm
(:func:`iotune.strategies.evolution.evolve`) with this strategy's options: the best individual goes
on unchanged (elitism), parents are picked by binary tournament and mixed by uniform
crossover into one child with probability ``crossover``, and each setting is reset to a
random allowed value with probability ``mutation``. A child that breaks a rule of the
space (e.g. too many aggregators at this scale) is replaced by a random valid candidate.
Evaluations are cached by the context, so revisiting a configuration costs no budget.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iotune.settings.bounds import MAX_PLAN_RUNS, MAX_SPACE
from iotune.strategies.base import (
    Configuration,
    SearchContext,
    Strategy,
    StrategyOption,
    register_strategy,
)
from iotune.strategies.evolution import GeneticOptions, Genome, evolve


@register_strategy
class Genetic(Strategy):
    """Genetic algorithm (population, tournament selection, crossover, mutation)."""

    name = "genetic"
    options = (
        StrategyOption("population", 10, "individuals per generation", minimum=2,
                       maximum=MAX_SPACE),
        StrategyOption("generations", 15, "generations at most (the first one included)",
                       minimum=1, maximum=MAX_PLAN_RUNS),
        StrategyOption("mutation", 0.15, "probability of mutating each setting", minimum=0,
                       maximum=1),
        StrategyOption("crossover", 0.8, "probability of crossing two parents", minimum=0,
                       maximum=1),
        StrategyOption("seed", 0, "random seed", minimum=0),
    )

    def search(self, context: SearchContext) -> None:
        rng = np.random.default_rng(self.values["seed"])
        candidates = context.candidates
        if not candidates or self.values["generations"] < 1:
            return
        # A setting some candidates leave unset is a gene whose values include None (unset).
        names = list(dict.fromkeys(n for c in candidates for n in c))
        choices: dict[str, list[Any]] = {
            n: sorted({c.get(n) for c in candidates}, key=str) for n in names}
        index = {n: {v: i for i, v in enumerate(vals)} for n, vals in choices.items()}
        genomes = [tuple(index[n][c.get(n)] for n in names) for c in candidates]
        valid = set(genomes)

        def decode(genome: Genome) -> Configuration:
            return {n: choices[n][i] for n, i in zip(names, genome, strict=True)
                    if choices[n][i] is not None}

        def fitness(population: list[Genome]) -> list[float]:
            evaluations = context.evaluate([decode(g) for g in population])
            # A failed run is the worst fitness; fewer values stop the search (budget).
            return [-e.statistic if e.statistic is not None else -np.inf for e in evaluations]

        def repair(genome: Genome, rng: np.random.Generator) -> Genome:
            return genome if genome in valid else genomes[int(rng.integers(len(genomes)))]

        size = min(self.values["population"], len(candidates))
        start = rng.choice(len(candidates), size=size, replace=False)
        options = GeneticOptions(population=size,
                                 generations=self.values["generations"] - 1,
                                 tournament=2, crossover=self.values["crossover"],
                                 offspring=1,
                                 mutation=self.values["mutation"], elite=1)
        evolve([len(choices[n]) for n in names], [genomes[int(i)] for i in start], fitness,
               options, rng, repair=repair)
