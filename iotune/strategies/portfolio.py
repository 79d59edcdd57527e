"""The portfolio: the model and proposers that fail differently share one budget.

No single search method is safe on every real landscape: on the measured ones, a model of
smooth terms misses narrow optima, TPE collapses on some, blind search wastes its runs on
others, and a user cannot know in advance which shape their system has. The portfolio (the
ensemble idea of OPRAEL, CLUSTER'23) runs the proposers of
:mod:`iotune.strategies.proposers` side by side and lets the evidence decide which one
spends each next run:

1. **Start.** With training data at other scales, the first run is the ``transfer``
   proposer's pick (the trained scales' shape says where the fast configurations are), so
   the first runs are already better than blind ones. Without, a space-filling design of
   ``initial`` x the budget configurations (rounded up, at least 3: the fewest the model
   can be fitted on) gives every proposer something to learn from.
2. **Each next run.** Every active proposer names an unevaluated candidate. Each proposer
   has a Beta(``prior`` + credit, ``prior`` + debit) belief about how good its proposals
   are; the one with the highest mean plus one standard deviation of it (optimism where
   little is known, :func:`optimistic_score`) wins, and its candidate is measured. The
   model takes every other run regardless while its ranking skill is better than chance
   (credit above debit). Every proposer that named the same candidate shares the outcome.
3. **Credit.** A measured proposal earns its *quantile* among the target scale's measured
   configurations (the share of them that are slower; a failure earns 0) as credit and
   the rest as debit. So a proposer whose picks land among the fast configurations is asked
   more often, one whose picks are mediocre less, and none is ever shut out: on a landscape
   that defeats the model the budget drifts to the others within a few runs, and on one
   the model reads well it keeps most of it.
4. **Transfer checked.** After every run the ``transfer`` proposer compares its predicted
   order with the target's measured order (rank correlation); when the training scales
   mislead it leaves the portfolio, and the output says so.

The model stays the heart of it: it is fitted on everything measured, its final fit is the
one the report shows, and its predictions are the ones recorded against each evaluation.
``docs/strategies.md`` explains every constant.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from iotune.model.fit import MAX_TERMS
from iotune.settings.bounds import MAX_ENSEMBLE
from iotune.strategies.base import SearchContext, Strategy, StrategyOption, register_strategy
from iotune.strategies.coverage import space_filling
from iotune.strategies.proposers import (
    DoubtProposer,
    LocalProposer,
    ModelProposer,
    Proposer,
    SearchState,
    SpaceProposer,
    TPEProposer,
    TransferProposer,
    describe,
    quantile_reward,
    skill_reward,
)
from iotune.strategies.surrogate import MIN_CONFIGURATIONS, final_model


@register_strategy
class Portfolio(Strategy):
    """The model and five proposers that fail differently, sharing the budget."""

    name = "portfolio"
    options = (
        StrategyOption("initial", 0.2, "share of the budget in the cold-start space-filling "
                                       "design (without training data at other scales)",
                       minimum=0, maximum=1),
        StrategyOption("prior", 1.0, "Beta prior of every proposer's credit and debit "
                                     "(larger: slower to favour one)", minimum=0, above=True),
        StrategyOption("members", 16, "bootstrap models in the model's ensemble", minimum=1,
                       maximum=MAX_ENSEMBLE),
        StrategyOption("kappa", 0.5, "weight of the model's doubt in the doubt proposer's "
                                     "lower confidence bound (standard deviations)", minimum=0),
        StrategyOption("max_terms", MAX_TERMS,
                       "model terms at most (before monotonicity completion)", minimum=1),
        StrategyOption("seed", 0, "seed of the design, the draws and the bootstrap", minimum=0),
    )

    def default_budget(self) -> int:
        """30 runs, the paper's budget (its ``top_k + top_k_refit``)."""
        return 30

    def search(self, context: SearchContext) -> None:
        """Measure proposals until the budget or the candidates run out.

        Sets ``notes``: ``proposers`` (which took part, and why any did not), ``runs`` (per
        proposer: runs it chose, credit earned), ``initial`` (the cold-start design's size),
        ``transfer`` (the trained scales and the measured rank correlation) and ``model``
        (the model on everything measured, for the report).
        """
        candidates = context.candidates
        if not candidates:
            return
        seed = int(self.values["seed"])
        names = list(dict.fromkeys(n for c in candidates for n in c))
        state = SearchState(context, names, seed, np.random.default_rng(seed))
        proposers = self._proposers(state)
        credit = {p.name: [p.prior_credit, p.prior_debit] for p in proposers}
        chosen_by = {p.name: 0 for p in proposers}
        transfer = next((p for p in proposers if isinstance(p, TransferProposer)), None)
        leads = transfer if transfer is not None and transfer.active else None
        budget = context.remaining if context.remaining is not None else len(candidates)
        self.notes["initial"] = 0
        if leads is None:
            share = float(self.values["initial"])
            size = min(budget, max(MIN_CONFIGURATIONS, math.ceil(share * budget)))
            design = space_filling(candidates, size, seed, taken=set(state.evaluated()))
            context.evaluate([candidates[i] for i in design])
            self.notes["initial"] = len(design)
        prior = float(self.values["prior"])
        model = next((p for p in proposers if isinstance(p, ModelProposer)), None)
        last = ""
        while not context.exhausted and state.open_mask().any():
            for proposer in proposers:
                if proposer.active:
                    proposer.observe(state)
            asked = {p.name: p.propose(state) for p in proposers if p.active}
            proposals = {n: i for n, i in asked.items() if i is not None}
            if not proposals:
                break
            if leads is not None and leads.name in proposals:
                pick = leads.name  # the first run follows the trained scales
            elif (model is not None and model.name in proposals and last != model.name
                  and credit[model.name][0] > credit[model.name][1]):
                pick = model.name  # the heart: every other run while it ranks better than chance
            else:
                scores = {n: optimistic_score(credit[n][0], credit[n][1], prior)
                          for n in proposals}
                pick = max(scores, key=lambda n: scores[n])
            leads, last = None, pick
            index = proposals[pick]
            before = {p.name: p.log_predictions() for p in proposers if p.active and p.predicts}
            done = context.evaluate([candidates[index]])
            if not done:
                break
            if model is not None:
                done[0].predicted = model.predicted(index)
            chosen_by[pick] += 1
            for name, reward in _rewards(state, index, proposals, before).items():
                credit[name][0] += reward
                credit[name][1] += 1.0 - reward
        for proposer in proposers:
            proposer.observe(state)
        self.notes["proposers"] = describe(proposers)
        self.notes["runs"] = {n: {"chosen": chosen_by[n], "credit": round(c[0], 2),
                                  "debit": round(c[1], 2)} for n, c in credit.items()}
        if transfer is not None:
            self.notes["transfer"] = {"scales": transfer.scales,
                                      "rank_correlation": transfer.rho}
        self._final_model(context, names)

    def _proposers(self, state: SearchState) -> list[Proposer]:
        """The proposers, in the order ties between them are broken."""
        members, terms = int(self.values["members"]), int(self.values["max_terms"])
        model = ModelProposer(members=members, max_terms=terms)
        return [
            TransferProposer(state, members=members, max_terms=terms),
            model,
            DoubtProposer(model, float(self.values["kappa"])),
            TPEProposer(state),
            LocalProposer(),
            SpaceProposer(),
        ]

    def _final_model(self, context: SearchContext, names: list[str]) -> None:
        """The single model on everything measured (:func:`final_model`), if any."""
        model = final_model(context.training_frame(), names, int(self.values["max_terms"]),
                            int(self.values["seed"]), context.target)
        if model is not None:
            self.notes["model"] = model


def _rewards(state: SearchState, index: int, proposals: dict[str, int],
             predictions: dict[str, np.ndarray | None]) -> dict[str, float]:
    """What measuring candidate ``index`` earns each proposer: a predicting proposer its
    ranking skill on it, whoever picked it; any other proposer that named it the quantile of
    its measurement. Proposers without evidence from this run earn nothing."""
    out: dict[str, float | None] = {name: skill_reward(p, state, index)
                                    for name, p in predictions.items() if p is not None}
    reward = quantile_reward(state, index)
    out.update({name: reward for name, proposed in proposals.items()
                if proposed == index and name not in out})
    return {name: value for name, value in out.items() if value is not None}


def optimistic_score(credit: float, debit: float, prior: float) -> float:
    """The mean of the Beta(``prior`` + credit, ``prior`` + debit) belief about a
    proposer's reward plus one standard deviation: optimism where little is known."""
    a, b = prior + credit, prior + debit
    return a / (a + b) + math.sqrt(a * b / ((a + b) ** 2 * (a + b + 1)))


def allocation_text(allocation: dict[str, Any]) -> str:
    """The allocation of a tune's result in one line: per proposer the runs it chose and the
    mean credit it earned (0.5 is chance; see the module docstring), and why any sat out
    or left."""
    runs = allocation.get("runs") or {}
    parts = []
    for name, status in (allocation.get("proposers") or {}).items():
        got = runs.get(name, {})
        total = got.get("credit", 0.0) + got.get("debit", 0.0)
        quality = f"mean credit {got['credit'] / total:.2f}" if total else ""
        notes = [x for x in (quality, "" if status == "active" else status) if x]
        parts.append(f"{name} {got.get('chosen', 0)}"
                     + (f" ({'; '.join(notes)})" if notes else ""))
    design = allocation.get("initial_design") or 0
    return (f"design {design}; " if design else "") + "; ".join(parts)
