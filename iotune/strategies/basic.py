"""Exhaustive and random search: the baselines every other strategy must beat."""

from __future__ import annotations

import numpy as np

from iotune.strategies.base import SearchContext, Strategy, StrategyOption, register_strategy


@register_strategy
class Exhaustive(Strategy):
    """Every candidate in the order of the space, until the budget runs out."""

    name = "exhaustive"

    def search(self, context: SearchContext) -> None:
        context.evaluate(context.candidates)


@register_strategy
class RandomSearch(Strategy):
    """Candidates in a seeded random order, until the budget runs out."""

    name = "random"
    options = (StrategyOption("seed", 0, "random seed", minimum=0),)

    def search(self, context: SearchContext) -> None:
        order = np.random.default_rng(self.values["seed"]).permutation(len(context.candidates))
        context.evaluate([context.candidates[i] for i in order])
