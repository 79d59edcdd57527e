"""Tuning at one scale: the search context, the run of a tune, and its result.

* :mod:`~iotune.tune.context`: the search context over a backend and a sink (store or
  memory) that every strategy searches through;
* :mod:`~iotune.tune.run`: :func:`tune`, the baseline, the search and the race;
* :mod:`~iotune.tune.result`: :class:`TuneResult` and the tuned YAML document.
"""

from iotune.tune.context import MeasuringContext, MemorySink, Sink, StoreSink
from iotune.tune.result import TuneResult, model_summary
from iotune.tune.run import search_budget, tune

__all__ = ["MeasuringContext", "MemorySink", "Sink", "StoreSink", "TuneResult",
           "model_summary", "search_budget", "tune"]
