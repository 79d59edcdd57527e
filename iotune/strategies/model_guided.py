"""Model-guided search: the paper's empirical model, used sequentially with its doubt.

``method: sequential`` (the default) works with or without a training campaign:

1. **Cold start.** A space-filling design over the candidates at the target scale
   (:func:`iotune.strategies.coverage.space_filling`) of ``initial`` x the budget
   configurations, rounded up, at least 3 (the fewest the model can be fitted on); half that
   when training measurements from other scales exist, since the model then already knows
   the shape of the space and the target-scale runs only have to place the scale.
2. **Sequential batches.** Fit a bootstrap ensemble of the forward selection
   (:mod:`iotune.strategies.surrogate`) on everything measured (training scales and this
   search), and evaluate the next ``batch`` configurations:

   - the first is the candidate with the lowest *lower confidence bound*
     ``mean - kappa x sd`` of the members' log predicted times: fast, or uncertain enough that
     it might be;
   - the second is the unevaluated candidate nearest to the best configuration measured so
     far (by its geometric mean; distance as in :mod:`iotune.strategies.coverage`): the
     model's smooth global terms cannot represent a narrow local optimum, and the
     neighbourhood of the incumbent is the cheapest place to find a better configuration;
   - each further one is the fastest candidate of one member drawn at random (a Thompson
     draw from the ensemble), so a batch explores the places the members disagree about
     instead of putting its runs next to each other.

   Refit after every batch, until the budget is spent. When no model can be fitted (too
   little variation), the batch is the next space-filling choice instead.

``method: paper`` is Behzad et al.'s prune/explore/refit, to the letter: fit on the
training measurements (all scales) with six selected terms plus the monotonicity completion
(the paper's ``a/s``; :data:`PAPER_TERMS`), evaluate the ``top_k`` (20) predicted fastest,
refit with them, evaluate the ``top_k_refit`` (10) best not yet evaluated, for
``refit_rounds`` (1) rounds: 30 configurations. Its default budget keeps the race of
:mod:`iotune.strategies.racing` *outside* those 30 (:meth:`ModelGuided.default_budget`),
so a tune by the paper's method evaluates what the paper did and races afterwards. It needs
a training campaign.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from iotune.errors import ConfigError, DataError
from iotune.model.fit import MAX_TERMS
from iotune.model.from_measurements import fit_for_settings, with_settings
from iotune.settings.bounds import MAX_ENSEMBLE, MAX_PLAN_RUNS, MAX_SPACE
from iotune.strategies.base import (
    Configuration,
    SearchContext,
    Strategy,
    StrategyOption,
    register_strategy,
)
from iotune.strategies.coverage import Axes, candidate_axes, distances_to, space_filling
from iotune.strategies.racing import Budget
from iotune.strategies.surrogate import (
    MIN_CONFIGURATIONS,
    Forecast,
    bootstrap_forecast,
    final_model,
)

METHODS = ("sequential", "paper")
#: Terms ``method: paper`` selects before the completion: the paper's six (eq. 5 then adds
#: ``a/s``, its seventh).
PAPER_TERMS = 6


@register_strategy
class ModelGuided(Strategy):
    """The empirical model with a bootstrap doubt: cold start, then batches by confidence bound."""

    name = "model"
    options = (
        StrategyOption("method", "sequential", "sequential (cold start, uncertainty-aware "
                                               "batches) or paper (prune/explore/refit)",
                       choices=METHODS),
        StrategyOption("initial", 0.3, "sequential: share of the budget in the cold-start "
                                       "space-filling design", minimum=0, maximum=1),
        StrategyOption("batch", 2, "sequential: configurations evaluated between refits",
                       minimum=1, maximum=MAX_SPACE),
        StrategyOption("members", 16, "sequential: bootstrap models in the ensemble",
                       minimum=1, maximum=MAX_ENSEMBLE),
        StrategyOption("kappa", 0.5, "sequential: weight of the doubt in the lower "
                                     "confidence bound (standard deviations)", minimum=0),
        StrategyOption("top_k", 20, "paper: configurations run after the first fit", minimum=1,
                       maximum=MAX_SPACE),
        StrategyOption("top_k_refit", 10, "paper: new configurations run after each refit",
                       minimum=1, maximum=MAX_SPACE),
        StrategyOption("refit_rounds", 1, "paper: refit-and-explore rounds", minimum=0,
                       maximum=MAX_PLAN_RUNS),
        StrategyOption("max_terms", "auto",
                       f"model terms at most (before monotonicity completion); auto: "
                       f"{PAPER_TERMS} for paper (the paper's six plus 1/s), {MAX_TERMS} for "
                       "sequential", minimum=1, choices=("auto",), integer=True),
        StrategyOption("seed", 0, "seed for the design, the bootstrap and cross-validation",
                       minimum=0),
    )

    def paper_evaluations(self) -> int:
        """The paper's configurations: ``top_k + refit_rounds x top_k_refit`` (30)."""
        return int(self.values["top_k"] + self.values["refit_rounds"]
                   * self.values["top_k_refit"])

    def default_budget(self) -> int:
        """``sequential``: the paper's 30 (:meth:`paper_evaluations`), race included.
        ``paper``: the fewest runs whose search share (:meth:`Budget.split`) holds all of
        :meth:`paper_evaluations`, so the race comes after and outside them (38 for 30)."""
        evaluations = self.paper_evaluations()
        if self.values["method"] != "paper":
            return evaluations
        total = evaluations
        while (Budget.split(total).search or 0) < evaluations:
            total += 1
        return total

    def max_terms(self) -> int:
        """The ``max_terms`` option, with ``auto`` resolved by the method."""
        value = self.values["max_terms"]
        if value == "auto":
            return PAPER_TERMS if self.values["method"] == "paper" else MAX_TERMS
        return int(value)

    def prepare(self, context: SearchContext) -> None:
        """ConfigError for an unknown method; DataError when ``paper`` has no training data."""
        method = self.values["method"]
        if method not in METHODS:
            raise ConfigError(f"--option method: {method!r} is not one of {', '.join(METHODS)}")
        if method == "paper" and not _has_rows(context.training_frame(),
                                               _setting_names(context.candidates)):
            raise DataError(f"--option method=paper: no training data for kernel "
                            f"'{context.kernel}' in the store; run 'iotune "
                            "train -c CONFIG' first, or use the default method=sequential, "
                            "which starts cold")

    def search(self, context: SearchContext) -> None:
        self.prepare(context)
        method = self.values["method"]
        self.notes["rounds"] = []
        if method == "paper":
            self._paper(context)
        else:
            self._sequential(context)

    # ------------------------------------------------------------------ sequential

    def _sequential(self, context: SearchContext) -> None:
        candidates = context.candidates
        if not candidates:
            return
        budget = context.remaining if context.remaining is not None else len(candidates)
        names = _setting_names(candidates)
        trained = _has_rows(context.training_frame(), names)
        share = float(self.values["initial"]) / (2 if trained else 1)
        initial = min(budget, max(MIN_CONFIGURATIONS, math.ceil(share * budget)))
        seed = int(self.values["seed"])
        rng = np.random.default_rng(seed)
        index = {context.key(c): i for i, c in enumerate(candidates)}
        axes = candidate_axes(candidates)
        design = space_filling(candidates, initial, seed, taken=_done(context, index))
        context.evaluate([candidates[i] for i in design])
        self.notes["initial"] = len(design)
        round_no = 0
        while not context.exhausted:
            done = _done(context, index)
            if len(done) >= len(candidates):
                return
            frame = context.training_frame()
            forecast = None if frame is None else bootstrap_forecast(
                frame, context.candidate_frame(), names, members=int(self.values["members"]),
                max_terms=self.max_terms(), seed=seed + 1000 * (round_no + 1),
                target=context.target)
            size = min(int(self.values["batch"]), context.remaining or len(candidates))
            if forecast is None:
                chosen = space_filling(candidates, size, seed + round_no + 1, taken=done)
                how = "space-filling (no model yet)"
            else:
                chosen = _batch(forecast, done, size, float(self.values["kappa"]), rng,
                                _nearest_to_incumbent(context, axes, index, done))
                how = f"bound and ensemble draws ({forecast.members} members)"
            evaluations = context.evaluate([candidates[i] for i in chosen])
            if forecast is not None:
                for evaluation in evaluations:
                    evaluation.predicted = float(forecast.time[index[evaluation.key]])
                self.notes["predictions"] = forecast.time
            self.notes["rounds"].append({"round": round_no, "evaluated": len(evaluations),
                                         "chosen_by": how})
            round_no += 1
            if not evaluations:
                return
        self._final_model(context, names)

    def _final_model(self, context: SearchContext, names: list[str]) -> None:
        """The single model on everything measured (:func:`final_model`), if any."""
        model = final_model(context.training_frame(), names, self.max_terms(),
                            int(self.values["seed"]), context.target)
        if model is not None:
            self.notes["model"] = model

    # ------------------------------------------------------------------ paper

    def _paper(self, context: SearchContext) -> None:
        names = _setting_names(context.candidates)
        frame = context.training_frame()
        todo = self.values["top_k"]
        for round_no in range(self.values["refit_rounds"] + 1):
            assert frame is not None  # a context with training data keeps it
            model = fit_for_settings(frame, names, self.max_terms(),
                                     self.values["seed"], target=context.target, aggregate=True)
            predictions = model.predict(context.candidate_frame(), unseen_levels="shared")
            order = np.argsort(predictions, kind="stable")
            chosen: list[Configuration] = []
            for i in order:
                candidate = context.candidates[int(i)]
                if context.key(candidate) not in context.evaluations:
                    chosen.append(candidate)
                if len(chosen) == todo:
                    break
            for evaluation in context.evaluate(chosen):
                evaluation.predicted = float(predictions[context.candidates.index(
                    evaluation.settings)])
            self.notes["model"] = model
            self.notes["rounds"].append({"round": round_no, "evaluated": len(chosen),
                                         "formula": model.formula()})
            self.notes["predictions"] = predictions
            if context.exhausted:
                return
            todo = self.values["top_k_refit"]
            frame = context.training_frame()


def _nearest_to_incumbent(context: SearchContext, axes: Axes, index: dict[str, int],
                          done: set[int]) -> int | None:
    """The unevaluated candidate nearest to the best configuration measured so far."""
    ranked = [e for e in context.evaluations.values() if e.times and e.key in index]
    if not ranked or len(done) >= len(index):
        return None
    best = index[min(ranked, key=lambda e: float(np.mean(np.log(e.times)))).key]
    d = distances_to(axes, axes.numeric[best], axes.levels[best])
    d[list(done)] = np.inf
    return int(np.argmin(d))


def _batch(forecast: Forecast, done: set[int], size: int, kappa: float,
           rng: np.random.Generator, local: int | None = None) -> list[int]:
    """The lowest-bound candidate, the ``local`` one (if any), then fastest-of-a-random-member
    candidates; none of them ``done``."""
    blocked = np.zeros(len(forecast.log_mean), dtype=bool)
    blocked[list(done)] = True
    bound = np.where(blocked, np.inf, forecast.log_mean - kappa * forecast.log_sd)
    chosen = [int(np.argmin(bound))]
    blocked[chosen[0]] = True
    if size > 1 and local is not None and not blocked[local]:
        chosen.append(local)
        blocked[local] = True
    while len(chosen) < size and not blocked.all():
        draw = np.where(blocked, np.inf, forecast.member_logs[rng.integers(forecast.members)])
        pick = int(np.argmin(draw))
        chosen.append(pick)
        blocked[pick] = True
    return chosen


def _setting_names(candidates: list[Configuration]) -> list[str]:
    return list(dict.fromkeys(n for c in candidates for n in c))


def _has_rows(frame: Any, names: list[str]) -> bool:
    return frame is not None and not frame.empty and not with_settings(frame, names).empty


def _done(context: SearchContext, index: dict[str, int]) -> set[int]:
    return {index[k] for k in context.evaluations if k in index}
