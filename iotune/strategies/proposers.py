"""Proposers: each names the next candidate to measure, each from its own evidence.

A proposer looks at the search so far (:class:`SearchState`) and proposes one unevaluated
candidate, or none. The portfolio (:mod:`iotune.strategies.portfolio`) asks every active
proposer, measures one proposal and credits every proposer that proposed it. They are chosen
for failure modes that differ:

- ``model``: the paper's basis as a bootstrap ensemble over everything measured (training
  scales with ``cores`` as a parameter, and this search); the candidate with the lowest
  mean log predicted time. Strong where the landscape is smooth in the settings; misled
  where it is not (a narrow optimum, a cliff).
- ``doubt``: the same ensemble's lowest bound ``mean - kappa x sd``: a candidate that might
  be fast because the members disagree about it. Finds what the mean's fit has not seen
  yet; wastes runs on corners where the members only extrapolate.
- ``transfer``: the shape of the landscape at the trained scales
  (:mod:`iotune.strategies.transfer`); the candidate predicted fastest relative to its
  scale. Only with training data at other scales, and dropped once the target's measured
  times disagree with it.
- ``tpe``: Optuna's Tree-structured Parzen Estimator over the target scale's measurements:
  no functional form at all, only densities of good and bad settings.
- ``local``: the unevaluated candidate nearest the best configuration so far (by the race's
  shrunken estimate, so a lucky draw does not pull it away): finds the narrow optimum next
  to a good run that global models smooth over.
- ``space``: the unevaluated candidate farthest from everything measured (maximin): keeps
  a part of the budget where no model looks, the only safe bet on a landscape that defeats
  every model.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from iotune.model.from_measurements import model_view
from iotune.strategies.base import Configuration, Evaluation, SearchContext
from iotune.strategies.coverage import Axes, candidate_axes, distances_to
from iotune.strategies.racing import ranked
from iotune.strategies.surrogate import Forecast, bootstrap_forecast
from iotune.strategies.transfer import (
    agreement,
    concordance,
    held_out_concordance,
    misleads,
    shape_frame,
    training_scales,
)


@dataclass
class SearchState:
    """The search as the proposers see it: the context, the candidates and their geometry."""

    context: SearchContext
    names: list[str]
    seed: int
    rng: np.random.Generator
    axes: Axes = field(init=False)
    index: dict[str, int] = field(init=False)
    keys: list[str] = field(init=False)
    sharing: dict[str, list[int]] = field(init=False)
    _ignored: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.axes = candidate_axes(self.context.candidates)
        self._reindex()

    def _reindex(self) -> None:
        """Each candidate's key, and the candidates by key: one key may stand for several
        candidates once the context ignores a setting (they are then one configuration)."""
        self.keys = [self.context.key(c) for c in self.context.candidates]
        self.index = {}
        self.sharing = {}
        for i, key in enumerate(self.keys):
            self.index.setdefault(key, i)
            self.sharing.setdefault(key, []).append(i)
        self._ignored = len(self.context.ignored)

    @property
    def candidates(self) -> list[Configuration]:
        return self.context.candidates

    def evaluated(self) -> dict[int, Evaluation]:
        """The evaluated candidates by index (every candidate an evaluation stands for)."""
        if self._ignored != len(self.context.ignored):
            self._reindex()
        return {i: e for k, e in self.context.evaluations.items()
                for i in self.sharing.get(k, ())}

    def open_mask(self) -> np.ndarray:
        """True for every candidate not evaluated yet."""
        mask = np.ones(len(self.candidates), dtype=bool)
        mask[list(self.evaluated())] = False
        return mask

    def mean_logs(self) -> dict[int, float]:
        """The mean log time of every evaluated candidate with a successful run."""
        return {i: float(np.mean(np.log(e.times))) for i, e in self.evaluated().items()
                if e.times}


class Proposer(ABC):
    """One source of proposals.

    A proposer that ``predicts`` gives a log predicted time for every candidate
    (:meth:`log_predictions`), so its skill can be judged on every measurement, not only on
    its own picks; ``prior_credit`` and ``prior_debit`` are evidence about it gathered
    before the search (pseudo-runs).
    """

    name: ClassVar[str] = ""
    predicts: ClassVar[bool] = False

    def __init__(self) -> None:
        self.active = True
        self.why_inactive = ""
        self.prior_credit = 0.0
        self.prior_debit = 0.0

    @abstractmethod
    def propose(self, state: SearchState) -> int | None:
        """The index of an unevaluated candidate to measure next, or None."""

    def observe(self, state: SearchState) -> None:  # noqa: B027 (optional hook)
        """Learn from the evaluations made since the last call."""

    def predicted(self, index: int) -> float | None:
        """This proposer's predicted time of candidate ``index``, if it predicts times."""
        return None

    def log_predictions(self) -> np.ndarray | None:
        """The log predicted time of every candidate (None: no prediction now)."""
        return None


def _lowest(values: np.ndarray, allowed: np.ndarray) -> int | None:
    if not allowed.any():
        return None
    return int(np.argmin(np.where(allowed, values, np.inf)))


class ModelProposer(Proposer):
    """The bootstrap ensemble of the paper's model; its fastest mean prediction."""

    name = "model"
    predicts = True

    def __init__(self, *, members: int, max_terms: int) -> None:
        super().__init__()
        self.members, self.max_terms = members, max_terms
        self.forecast: Forecast | None = None
        self._fitted_at = -1

    def refresh(self, state: SearchState) -> None:
        """Refit the ensemble when something was measured since the last fit."""
        count = len(state.context.evaluations)
        if count == self._fitted_at:
            return
        self._fitted_at = count
        frame = state.context.training_frame()
        self.forecast = None if frame is None else bootstrap_forecast(
            frame, state.context.candidate_frame(), state.names, members=self.members,
            max_terms=self.max_terms, seed=state.seed + 1000 * (count + 1),
            target=state.context.target)

    def propose(self, state: SearchState) -> int | None:
        self.refresh(state)
        if self.forecast is None:
            return None
        return _lowest(self.forecast.log_mean, state.open_mask())

    def predicted(self, index: int) -> float | None:
        return None if self.forecast is None else float(self.forecast.time[index])

    def log_predictions(self) -> np.ndarray | None:
        return None if self.forecast is None else self.forecast.log_mean


class DoubtProposer(Proposer):
    """The same ensemble's lowest bound ``mean - kappa x sd``: where it might be fast."""

    name = "doubt"

    def __init__(self, model: ModelProposer, kappa: float) -> None:
        super().__init__()
        self.model, self.kappa = model, kappa

    def propose(self, state: SearchState) -> int | None:
        self.model.refresh(state)
        forecast = self.model.forecast
        if forecast is None:
            return None
        return _lowest(forecast.log_mean - self.kappa * forecast.log_sd, state.open_mask())


class TransferProposer(Proposer):
    """The shape of the trained scales' landscape; dropped when the target disagrees."""

    name = "transfer"
    predicts = True

    def __init__(self, state: SearchState, *, members: int, max_terms: int) -> None:
        super().__init__()
        self.scales: list[int] = []
        self.held_out: list[float] = []
        self.rho: float | None = None
        self.forecast: Forecast | None = None
        context = state.context
        frame = context.training_frame()
        if frame is not None:
            frame = model_view(frame, state.names, context.target)
        cores = int(context.candidate_frame()["cores"].iloc[0]) if state.candidates else 0
        self.scales = training_scales(frame, state.names, cores)
        if frame is not None and self.scales:
            self.forecast = bootstrap_forecast(
                shape_frame(frame, state.names, cores, context.target),
                context.candidate_frame(), state.names, members=members,
                max_terms=max_terms, seed=state.seed + 7, target=context.target)
        if self.forecast is None:
            self.active = False
            self.why_inactive = ("no training data at other scales" if not self.scales else
                                 "the training scales support no model")
            return
        assert frame is not None
        self.held_out = held_out_concordance(frame, state.names, cores, context.target,
                                             members=members, max_terms=max_terms,
                                             seed=state.seed + 11)
        self.prior_credit = sum(self.held_out)
        self.prior_debit = len(self.held_out) - self.prior_credit

    def propose(self, state: SearchState) -> int | None:
        if self.forecast is None:
            return None
        return _lowest(self.forecast.log_mean, state.open_mask())

    def observe(self, state: SearchState) -> None:
        if self.forecast is None or not self.active:
            return
        measured = state.mean_logs()
        order = sorted(measured)
        self.rho = agreement([float(self.forecast.log_mean[i]) for i in order],
                             [measured[i] for i in order])
        if misleads(self.rho):
            self.active = False
            self.why_inactive = (f"the target scale's measured order disagrees with the "
                                 f"trained scales' (rank correlation {self.rho:.2f} over "
                                 f"{len(order)} configurations)")

    def log_predictions(self) -> np.ndarray | None:
        return None if self.forecast is None else self.forecast.log_mean


class TPEProposer(Proposer):
    """Optuna's TPE over the target scale's measurements, snapped to a candidate."""

    name = "tpe"

    #: Trials TPE needs before it models instead of drawing at random (Optuna's minimum
    #: for a split into good and bad trials is small; three is the fewest with a middle).
    STARTUP = 3

    def __init__(self, state: SearchState) -> None:
        from iotune.strategies.tpe import CandidateSpace, import_optuna, quiet

        super().__init__()
        self.optuna = import_optuna()
        self.space = CandidateSpace(state.candidates)
        self._quiet = quiet
        with quiet(self.optuna):
            sampler = self.optuna.samplers.TPESampler(seed=state.seed,
                                                      n_startup_trials=self.STARTUP)
            self.study = self.optuna.create_study(direction="minimize", sampler=sampler)
        self.distributions = self.space.distributions(self.optuna)
        self.told: set[int] = set()

    def observe(self, state: SearchState) -> None:
        from iotune.strategies.tpe import measured_trial

        new = sorted(((e.order, i, e) for i, e in state.evaluated().items()
                      if i not in self.told), key=lambda item: item[0])
        with self._quiet(self.optuna):
            for _, i, evaluation in new:
                self.study.add_trial(measured_trial(self.optuna, self.space.params(i),
                                                    self.distributions, evaluation))
                self.told.add(i)

    def propose(self, state: SearchState) -> int | None:
        """TPE's proposal; None until the target scale has ``STARTUP`` measurements (before,
        TPE would only draw at random, which is the ``space`` proposer's part)."""
        allowed = state.open_mask()
        self.observe(state)
        if not allowed.any() or len(self.told) < self.STARTUP:
            return None
        with self._quiet(self.optuna):
            trial = self.study.ask(fixed_distributions=self.distributions)
            index, _ = self.space.nearest(trial.params, allowed)
            self.study.tell(trial, state=self.optuna.trial.TrialState.FAIL)
        return index


class LocalProposer(Proposer):
    """The unevaluated candidate nearest the best configuration so far."""

    name = "local"

    def propose(self, state: SearchState) -> int | None:
        evaluated = state.evaluated()
        allowed = state.open_mask()
        leaders = ranked(evaluated.values())
        if not leaders or not allowed.any():
            return None
        best = state.index[leaders[0].key]
        d = distances_to(state.axes, state.axes.numeric[best], state.axes.levels[best])
        return _lowest(d, allowed)


class SpaceProposer(Proposer):
    """The unevaluated candidate farthest from every evaluated one (ties: seeded draw)."""

    name = "space"

    def propose(self, state: SearchState) -> int | None:
        allowed = state.open_mask()
        if not allowed.any():
            return None
        evaluated = list(state.evaluated())
        nearest = np.full(len(allowed), np.inf)
        for i in evaluated:
            nearest = np.minimum(nearest, distances_to(state.axes, state.axes.numeric[i],
                                                       state.axes.levels[i]))
        score = np.where(allowed, nearest, -np.inf)
        best = np.flatnonzero(score >= score.max() - 1e-12)
        return int(state.rng.choice(best))


def skill_reward(predictions: np.ndarray, state: SearchState, index: int) -> float | None:
    """How well ``predictions`` (log times, made before candidate ``index`` was measured)
    order its measurement against every other measured candidate (see
    :func:`iotune.strategies.transfer.concordance`); None (no evidence) when it failed or
    is the first measured."""
    measured = state.mean_logs()
    if index not in measured or len(measured) < 2:
        return None
    keys = list(measured)
    return concordance([float(predictions[k]) for k in keys], [measured[k] for k in keys],
                       keys.index(index))


def quantile_reward(state: SearchState, index: int) -> float | None:
    """How good candidate ``index``'s measurement is among the target scale's: the share of
    the other measured candidates that are slower (0 for a failed run; None, no evidence,
    when it is the first measured)."""
    measured = state.mean_logs()
    if index not in measured:
        return 0.0
    others = [v for i, v in measured.items() if i != index]
    failed = sum(1 for i, e in state.evaluated().items() if i != index and not e.times)
    if not others and not failed:
        return None
    slower = sum(v > measured[index] for v in others) + 0.5 * sum(
        math.isclose(v, measured[index]) for v in others) + failed
    return float(slower / (len(others) + failed))


def describe(proposers: Sequence[Proposer]) -> dict[str, Any]:
    """Which proposers took part, and why any did not."""
    return {p.name: ("active" if p.active else f"inactive: {p.why_inactive}")
            for p in proposers}
