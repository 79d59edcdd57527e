"""Search strategies behind one interface: model-guided, exhaustive, random, genetic, tpe."""

from iotune.strategies.base import (
    Evaluation,
    SearchContext,
    Strategy,
    known_strategies,
    make_strategy,
    strategy_help,
)

__all__ = ["Evaluation", "SearchContext", "Strategy", "known_strategies", "make_strategy",
           "strategy_help"]
