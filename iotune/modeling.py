"""The bridge between measurements and the empirical model: which columns it is fitted on.

Numeric settings of the search space (counts and byte sizes) are the model's parameters;
choice, boolean and text settings enter as categorical columns (indicator terms, never
ordinal numbers); ``cores`` is added when the training data spans several scales, so the
model can be trained at small scales and asked about a larger one, as in the paper.
Settings with a single value in the data carry no information and are left out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from iotune.errors import DataError
from iotune.settings import SETTINGS
from iotune.space import SearchSpace

if TYPE_CHECKING:
    import pandas as pd

    from iotune.model import Model

TARGET = "write_time"


def model_columns(space: SearchSpace, frame: pd.DataFrame) -> tuple[list[str], list[str]]:
    """``(numeric params, categorical params)`` to fit on, from the space and the data."""
    numeric, categorical = [], []
    for name in space.names:
        if name not in frame.columns or frame[name].nunique(dropna=True) < 2:
            continue
        setting = SETTINGS.get(name)
        if setting is not None and setting.numeric:
            numeric.append(name)
        else:
            categorical.append(name)
    if "cores" in frame.columns and frame["cores"].nunique() > 1:
        numeric.append("cores")
    return numeric, categorical


def prepare(frame: pd.DataFrame, columns: list[str]) -> pd.DataFrame:
    """Rows with every model column known (a default run has no settings) and a time."""
    needed = [*columns, TARGET]
    usable = frame.dropna(subset=[c for c in needed if c in frame.columns]).copy()
    for name in columns:
        if usable[name].dtype == bool or usable[name].dtype == object:
            usable[name] = usable[name].astype(str)
    return usable


def fit_for_space(frame: pd.DataFrame, space: SearchSpace, max_terms: int,
                  seed: int = 0) -> Model:
    """Fit the paper's model of write time on ``frame`` over ``space``'s settings.

    ``max_terms`` is lowered to what the number of distinct configurations can support.
    Raises DataError when the data cannot support any model.
    """
    from iotune.model import fit_model

    numeric, categorical = model_columns(space, frame)
    if not numeric:
        raise DataError("no numeric setting varies in the training data; the model needs at "
                        "least one (add values to the space and train again)")
    data = prepare(frame, numeric + categorical)
    configurations = len(data.drop_duplicates(subset=numeric + categorical))
    terms = max(1, min(max_terms, configurations - 1, len(data) - 1))
    if len(data) < 3:
        raise DataError(f"only {len(data)} usable training measurement(s); the model needs at "
                        "least 3 (run 'iotune train' first)")
    actionable = [n for n in numeric if n != "cores"]
    return fit_model(data, numeric, TARGET, max_terms=terms,
                     actionable=actionable, categorical=categorical, seed=seed)
