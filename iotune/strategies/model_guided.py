"""The paper's model-guided search: prune with the model, explore, refit, explore again.

1. Fit the empirical model on the training measurements (all scales) and predict every
   candidate at the target scale; evaluate the ``top_k`` predicted fastest.
2. Refit with those measurements added; evaluate the new model's ``top_k_refit`` best that
   were not yet evaluated. Repeat for ``refit_rounds`` rounds.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from iotune.errors import DataError
from iotune.modeling import fit_for_space
from iotune.strategies.base import SearchContext, Strategy, StrategyOption, register_strategy


@register_strategy
class ModelGuided(Strategy):
    """Prune with the empirical model, explore the top k, refit, explore the new top k'."""

    name = "model"
    options = (
        StrategyOption("top_k", 20, "configurations run after the first fit"),
        StrategyOption("top_k_refit", 10, "new configurations run after each refit"),
        StrategyOption("refit_rounds", 1, "refit-and-explore rounds"),
        StrategyOption("max_terms", 7, "model terms at most (before monotonicity completion)"),
        StrategyOption("seed", 0, "seed for cross-validation folds"),
    )

    def search(self, context: SearchContext) -> None:
        space = getattr(context, "space", None)
        frame = context.training_frame()
        if frame is None or frame.empty or space is None:
            raise DataError("no training data for this kernel in the store; run "
                            "'iotune train -c CONFIG' first (or use --strategy random)")
        self.notes["rounds"] = []
        todo = self.values["top_k"]
        for round_no in range(self.values["refit_rounds"] + 1):
            assert frame is not None  # a context with training data keeps it
            model = fit_for_space(frame, space, self.values["max_terms"], self.values["seed"])
            predictions = model.predict(context.candidate_frame())
            order = np.argsort(predictions, kind="stable")
            chosen: list[dict[str, Any]] = []
            for i in order:
                candidate = context.candidates[int(i)]
                if context.key(candidate) not in context.evaluations:
                    chosen.append(candidate)
                if len(chosen) == todo:
                    break
            for evaluation in context.evaluate(chosen):
                index = context.candidates.index(evaluation.settings)
                evaluation.predicted = float(predictions[index])
            self.notes["model"] = model
            self.notes["rounds"].append({"round": round_no, "evaluated": len(chosen),
                                         "formula": model.formula()})
            self.notes["predictions"] = predictions
            if context.exhausted:
                return
            todo = self.values["top_k_refit"]
            frame = context.training_frame()
