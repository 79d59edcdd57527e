"""Optuna's TPE sampler as a search strategy: what a user would reach for instead of iotune.

A comparison baseline, not a replacement for the model-guided search. It works on any
candidate set, dense or sparse (a replay backend's recorded configurations), because every
proposal is snapped to a real candidate.

The search space, built from the candidates:

- A numeric setting (``SETTINGS[name].numeric``: counts and byte sizes) whose every
  candidate value is a positive number is a ``FloatDistribution(log=True)`` over the
  [min, max] of those values. Float rather than ``IntDistribution(log=True)``: a proposal is
  snapped to a candidate anyway, so rounding it to an integer first adds nothing, and a
  float axis takes any positive value.
- Every other setting (choices, booleans, text, ``hint.*``, or a numeric setting that some
  candidate leaves unset) is a ``CategoricalDistribution`` over its distinct values (unset is
  the value ``None``).
- A setting with a single value among the candidates is fixed and not a parameter.

Each candidate is a point of the normalised space: a numeric setting's coordinate is
``(log v - log min) / (log max - log min)`` (in [0, 1]); a categorical setting's is its value.
The distance between two points is the sum of the absolute differences of the numeric
coordinates plus 1 for each categorical setting whose values differ.

The search runs on a minimising study:

1. Startup: the first ``startup`` configurations are random unevaluated candidates, in the
   seeded order of the ``random`` strategy with the same seed (so up to ``startup``
   evaluations the two coincide). The default, ``auto``, is ``min(10, max(3, budget // 3))``
   with a budget and 10 without one. The sampler's ``n_startup_trials`` is the same number,
   so TPE models only after them.
2. Then TPE proposes a trial over the distributions above, and the proposal is snapped to
   the nearest candidate not yet evaluated (ties: the earliest in the candidates' order);
   that candidate is evaluated, so every proposal spends one unit of budget on a real
   candidate and the search always progresses.
3. TPE learns only what was measured: the asked trial is told FAIL (TPE ignores failed
   trials) and the evaluated candidate is added to the study as a new trial with its own
   parameters, with the same distributions: COMPLETE with its statistic, or PRUNED when
   every repetition failed. TPE ranks PRUNED trials below every COMPLETE one, so it steers
   away from failing regions; snapping never picks an evaluated candidate, so a failed
   configuration is not run again.

Candidates the context had evaluated before the search are added to the study first (and
count towards ``startup``). The search stops when the budget is spent or every candidate
has been evaluated. Optuna (a dependency of iotune) is imported only when the search
starts; its log messages below warnings are silenced meanwhile.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any

import numpy as np

from iotune.errors import ConfigError
from iotune.settings.bounds import MAX_PLAN_RUNS
from iotune.strategies.base import (
    Configuration,
    Evaluation,
    SearchContext,
    Strategy,
    StrategyOption,
    register_strategy,
)
from iotune.strategies.coverage import is_numeric

AUTO = "auto"


@register_strategy
class TPE(Strategy):
    """Optuna's TPE sampler, each proposal snapped to the nearest new candidate (needs optuna)."""

    name = "tpe"
    options = (
        StrategyOption("seed", 0, "random seed (startup draws and the TPE sampler)", minimum=0),
        StrategyOption("startup", AUTO, "random candidates run before TPE proposes "
                                        "(Optuna's n_startup_trials); auto: "
                                        "min(10, max(3, budget // 3)), 10 without a budget",
                       minimum=0, maximum=MAX_PLAN_RUNS, choices=(AUTO,), integer=True),
    )

    def search(self, context: SearchContext) -> None:
        """Evaluate TPE's snapped proposals through ``context`` until the budget or space runs out.

        Sets ``notes``: ``startup`` (the number of startup trials used), ``trials`` (proposals
        asked from TPE), ``measured`` (new configurations evaluated: startup draws and
        proposals), ``snapped`` (proposals that differed from the candidate evaluated in their
        place: not a candidate, or one already evaluated) and ``study`` (the Optuna study).
        Raises ConfigError when optuna is not installed or ``startup`` is not valid.
        """
        optuna = import_optuna()
        startup = startup_trials(self.values["startup"], context.budget)
        self.notes.update(startup=startup, trials=0, measured=0, snapped=0)
        candidates = context.candidates
        if not candidates:
            return
        seed = int(self.values["seed"])
        space = CandidateSpace(candidates)
        keys = [context.key(c) for c in candidates]
        order = np.random.default_rng(seed).permutation(len(candidates)).tolist()
        with quiet(optuna):
            sampler = optuna.samplers.TPESampler(seed=seed, n_startup_trials=startup)
            study = optuna.create_study(direction="minimize", sampler=sampler)
            self.notes["study"] = study
            distributions = space.distributions(optuna)
            recorded = _record_earlier(optuna, study, space, distributions, keys,
                                        context.evaluations)
            while not context.exhausted:
                open_ = np.array([key not in context.evaluations for key in keys])
                if not open_.any():
                    break
                if recorded < startup:
                    index = next(i for i in order if open_[i])
                else:
                    trial = study.ask(fixed_distributions=distributions)
                    index, moved = space.nearest(trial.params, open_)
                    study.tell(trial, state=optuna.trial.TrialState.FAIL)
                    self.notes["trials"] += 1
                    self.notes["snapped"] += int(moved)
                done = context.evaluate([candidates[index]])
                if not done:  # the context refused: out of budget
                    break
                study.add_trial(measured_trial(optuna, space.params(index), distributions,
                                               done[0]))
                recorded += 1
                self.notes["measured"] += 1


def startup_trials(value: Any, budget: int | None) -> int:
    """The number of random startup trials the ``startup`` option stands for.

    ``auto`` (or None) is ``min(10, max(3, budget // 3))`` with a budget, 10 without one;
    otherwise ``value`` must be a non-negative integer (ConfigError otherwise).
    """
    if value is None or value == AUTO:
        return 10 if budget is None else min(10, max(3, budget // 3))
    try:
        number = int(value)
    except (TypeError, ValueError):
        number = -1
    if isinstance(value, bool | float) or number < 0:
        raise ConfigError(f"strategy tpe: startup must be a non-negative integer or 'auto', "
                          f"but got {value!r}")
    return number


class CandidateSpace:
    """The candidates as points of TPE's search space (see the module docstring).

    ``numeric`` maps each numeric parameter to its (min, max) among the candidates,
    ``categorical`` each categorical parameter to its distinct values; settings with a single
    value are in neither.
    """

    def __init__(self, candidates: Sequence[Configuration]) -> None:
        self.candidates = list(candidates)
        varying = {n: v for n, v in setting_choices(candidates).items() if len(v) > 1}
        self.numeric = {n: (float(min(v)), float(max(v)))
                        for n, v in varying.items() if is_numeric(n, v)}
        self.categorical = {n: v for n, v in varying.items() if n not in self.numeric}
        self._codes = {n: {value: i for i, value in enumerate(v)}
                       for n, v in self.categorical.items()}
        rows = [self._point(c) for c in self.candidates]
        self.coordinates = np.array([r[0] for r in rows], dtype=float).reshape(
            len(rows), len(self.numeric))
        self.codes = np.array([r[1] for r in rows], dtype=int).reshape(
            len(rows), len(self.categorical))

    def distributions(self, optuna: ModuleType) -> dict[str, Any]:
        """The Optuna distribution of each parameter."""
        dist = optuna.distributions
        out: dict[str, Any] = {n: dist.FloatDistribution(lo, hi, log=True)
                               for n, (lo, hi) in self.numeric.items()}
        out.update({n: dist.CategoricalDistribution(tuple(v))
                    for n, v in self.categorical.items()})
        return out

    def params(self, index: int) -> dict[str, Any]:
        """Candidate ``index``'s value of each parameter, as its distribution takes it."""
        settings = self.candidates[index]
        out: dict[str, Any] = {n: float(settings[n]) for n in self.numeric}
        out.update({n: _plain(settings.get(n)) for n in self.categorical})
        return out

    def nearest(self, params: Mapping[str, Any], allowed: np.ndarray) -> tuple[int, bool]:
        """The index of the ``allowed`` candidate nearest to ``params``, and whether it differs.

        ``allowed`` is a boolean mask over the candidates with at least one True; of equally
        near candidates the earliest wins.
        """
        coordinates, codes = self._point(params)
        distance = (np.abs(self.coordinates - np.array(coordinates, dtype=float)).sum(axis=1)
                    + (self.codes != np.array(codes, dtype=int)).sum(axis=1))
        distance[~allowed] = np.inf
        index = int(np.argmin(distance))
        return index, bool(distance[index] > 0)

    def _point(self, settings: Mapping[str, Any]) -> tuple[list[float], list[int]]:
        coordinates = [_unit_log(float(settings[n]), lo, hi)
                       for n, (lo, hi) in self.numeric.items()]
        codes = [self._codes[n][_plain(settings.get(n))] for n in self.categorical]
        return coordinates, codes


def measured_trial(optuna: ModuleType, params: dict[str, Any], distributions: dict[str, Any],
                   evaluation: Evaluation) -> Any:
    """A finished trial of ``params``: COMPLETE with the statistic, PRUNED if none (failed)."""
    if evaluation.statistic is None:
        return optuna.trial.create_trial(params=params, distributions=distributions,
                                         state=optuna.trial.TrialState.PRUNED)
    return optuna.trial.create_trial(params=params, distributions=distributions,
                                     value=float(evaluation.statistic))


def _record_earlier(optuna: ModuleType, study: Any, space: CandidateSpace,
                    distributions: dict[str, Any], keys: Sequence[str],
                    evaluations: Mapping[str, Evaluation]) -> int:
    """Add the candidates evaluated before the search to ``study``, in evaluation order.

    Returns how many were added (one per distinct key).
    """
    first: dict[str, int] = {}
    for index, key in enumerate(keys):
        if key in evaluations:
            first.setdefault(key, index)
    for key, index in sorted(first.items(), key=lambda item: evaluations[item[0]].order):
        study.add_trial(measured_trial(optuna, space.params(index), distributions,
                                       evaluations[key]))
    return len(first)


def import_optuna() -> ModuleType:
    """The optuna module; ConfigError saying how to install it when it is missing."""
    try:
        import optuna
    except ImportError:
        raise ConfigError("--strategy tpe: needs optuna (pip install optuna)") from None
    return optuna


@contextmanager
def quiet(optuna: ModuleType) -> Iterator[None]:
    """Optuna logs warnings and errors only, and no experimental-feature warnings, inside."""
    level = optuna.logging.get_verbosity()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            yield
    finally:
        optuna.logging.set_verbosity(level)


def setting_choices(candidates: Sequence[Configuration]) -> dict[str, list[Any]]:
    """Each setting's distinct values among ``candidates``, in order of first appearance.

    ``None`` is a choice of a setting that some candidates leave unset.
    """
    names = list(dict.fromkeys(n for c in candidates for n in c))
    return {n: list(dict.fromkeys(_plain(c.get(n)) for c in candidates)) for n in names}


def _unit_log(value: float, low: float, high: float) -> float:
    return (math.log(value) - math.log(low)) / (math.log(high) - math.log(low))


def _plain(value: Any) -> Any:
    """Numpy scalars as Python ones (Optuna's categorical choices must be plain)."""
    return value.item() if isinstance(value, np.generic) else value
