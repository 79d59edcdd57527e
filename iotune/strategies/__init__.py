"""Search strategies behind one interface: portfolio (the default), model-guided,
exhaustive, random, genetic, tpe.

Each built-in strategy's module registers itself when imported; importing this package
imports them all, so the registry in :mod:`iotune.strategies.base` is full wherever a
strategy is looked up by name.

The strategies sit below the config (:mod:`iotune.config`), which checks ``tune.options``
against their registry when it loads; they read a config's ``tune:`` section only through
the :class:`~iotune.strategies.base.TuneOptions` protocol, and import nothing above the
empirical model (:mod:`iotune.model`) they search with.
"""

from iotune.strategies import basic, genetic, model_guided, portfolio, tpe  # noqa: F401
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
