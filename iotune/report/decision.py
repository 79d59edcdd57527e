"""What a scale's tune runs recommend, decided as ``iotune tune`` decides.

The report reads runs from the store, not a tune's result, so it decides again from the
same runs with the same rules (:mod:`iotune.strategies.racing`): each configuration's
estimate is the race's shrunken one with its interval, the best found is the first by it,
and the recommendation is ``tuned`` (confirmed faster), ``default`` or ``undecided``, with
the race's reason. A tuned file of the same backend and scale (``report --tuned``) says
what its tune recommended, which wins: the tune also knew which settings took effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from iotune.report.data import ConfigResult, ScaleTune
from iotune.strategies.base import Evaluation
from iotune.strategies.racing import (
    Choice,
    Estimate,
    Speedup,
    pooled_noise,
    race,
    ranked_estimates,
    speedup_interval,
)


@dataclass(frozen=True)
class ScaleDecision:
    """A scale's recommendation, its reason, the best found and every configuration's
    estimate (by position in ``ranked``, best first; the default among them)."""

    recommendation: str
    reason: str
    best: ConfigResult | None
    #: The best found's speedup over the default as shown: an estimate of the ratio of
    #: their typical times with its interval (``racing.speedup_interval``; None when the
    #: best found is the default). The recommendation is the race's test's, not read here.
    speedup: Speedup | None
    ranked: list[tuple[ConfigResult, Estimate]]
    #: Where the recommendation comes from: the tuned file, or these runs.
    source: str

    def estimate(self, config: ConfigResult) -> Estimate | None:
        """``config``'s estimate (the very object, as ranked); None when it is not ranked."""
        return self._estimates.get(id(config))

    @cached_property
    def _estimates(self) -> dict[int, Estimate]:
        """Each ranked configuration's estimate by ``id`` (the first, were one ranked
        twice): built once, since a figure asks for it several times per bar."""
        out: dict[int, Estimate] = {}
        for config, found in self.ranked:
            out.setdefault(id(config), found)
        return out


def decide(tune: ScaleTune, tuned: Mapping[str, Any] | None = None) -> ScaleDecision:
    """The decision of ``tune``'s runs (see the module docstring); ``tuned`` is a tuned
    file's document, used when it is of this scale."""
    configs = [*([tune.default] if tune.default else []), *tune.configs]
    evaluations = [Evaluation(dict(c.settings), str(i), times=list(c.times), order=i)
                   for i, c in enumerate(configs)]
    by_key = {e.key: c for e, c in zip(evaluations, configs, strict=True)}
    if tune.default is None or not evaluations:
        return ScaleDecision("undecided", "no run of the default configuration at this "
                             "scale to compare with", tune.best, None,
                             _ranked(evaluations, by_key, None), "these runs")
    default, pool = evaluations[0], evaluations[1:]
    choice = race(default, lambda: pool, lambda _: False, 0)
    ranked = _ranked(evaluations, by_key, choice)
    best = None if choice.best is None else by_key[choice.best.key]
    shown = (None if choice.best is None or choice.best is default
             else speedup_interval(default, choice.best, choice.noise, evaluations))
    if tuned is not None and tuned.get("cores") == tune.cores and tuned.get("recommendation"):
        return ScaleDecision(str(tuned["recommendation"]), str(tuned.get("reason") or ""),
                             best, shown, ranked, "the tuned file")
    return ScaleDecision(choice.outcome, choice.reason, best, shown, ranked, "these runs")


def _ranked(evaluations: list[Evaluation], by_key: Mapping[str, ConfigResult],
            choice: Choice | None) -> list[tuple[ConfigResult, Estimate]]:
    noise = choice.noise if choice is not None else pooled_noise(evaluations)
    default = None if choice is None else choice.default
    return [(by_key[e.key], f) for e, f in ranked_estimates(evaluations, noise, default)]
