"""The empirical performance model of the paper's section 2.

``fit_model`` selects terms ``prod_i x_i^p_i`` (``p_i in {-1, 0, 1}``) greedily by the
relative error of eq. 4, with coefficients by least squares (eq. 2), and completes a basis
that is monotone in an actionable parameter; ``Model.predict`` evaluates it;
``save_model`` / ``load_model`` keep it in a human-readable YAML file, whose plain data
``model_to_dict`` gives.
"""

from __future__ import annotations

from iotune.model.fit import fit_model
from iotune.model.io import SCHEMA_VERSION, load_model, model_to_dict, save_model
from iotune.model.model import Completion, FitSettings, FitStats, Model, Step
from iotune.model.terms import Term

__all__ = [
    "SCHEMA_VERSION",
    "Completion",
    "FitSettings",
    "FitStats",
    "Model",
    "Step",
    "Term",
    "fit_model",
    "load_model",
    "model_to_dict",
    "save_model",
]
