"""Settings that some configurations leave unset, as values of their own.

A configuration that leaves a setting unset runs with the library's default, which is a
legitimate value whose number iotune does not know (ROMIO picks ``cb_nodes`` from the node
count, the file system picks a default stripe). So an unset setting is never a missing
number:

- a *categorical* column's unset rows get the level :data:`UNSET`;
- a *numeric* parameter's unset rows get a stand-in value (the median of its set values,
  positive, so ``x`` and ``1/x`` stay defined) and the indicator column ``<name>:set``
  (levels ``yes`` and ``no``). A term of the parameter is then a constant on the unset
  rows, and the per-level offset ``[<name>:set=no]`` the fit may choose says how the
  library's default compares, whatever the stand-in.

A fitted model keeps the encoding (``Model.unset``) and applies it to what it predicts; a
parameter no training row left unset is predicted at its stand-in when a row leaves it
unset (the fit had no offset to learn for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

# pandas is imported where it is used: a command that needs no table starts without it.
if TYPE_CHECKING:
    import pandas as pd

#: The level of a categorical column where a configuration leaves the setting unset.
UNSET = "unset"
#: Suffix of the indicator column telling set from unset rows of a numeric parameter.
SET_SUFFIX = ":set"

#: ``(column, stand-in)``: a numeric parameter and its stand-in, or a categorical column
#: and None.
Encoding = tuple[tuple[str, float | None], ...]


def indicator_column(param: str) -> str:
    return param + SET_SUFFIX


def unset_encoding(frame: pd.DataFrame, numeric: Sequence[str],
                   categorical: Sequence[str]) -> Encoding:
    """The encoding of ``frame``'s setting columns: every numeric parameter (``cores``
    aside: a run always has a scale) with its stand-in, every categorical column with
    None. A column every row sets is encoded too, so a model fitted before any unset row was
    measured still predicts one (at its stand-in, without the indicator's offset)."""
    import pandas as pd

    out: list[tuple[str, float | None]] = []
    for column in numeric:
        values = pd.to_numeric(frame[column], errors="coerce").dropna()
        if column != "cores" and len(values):
            out.append((column, float(np.median(values.to_numpy(dtype=float)))))
    out += [(column, None) for column in categorical]
    return tuple(out)


def indicators(encoding: Encoding, frame: pd.DataFrame) -> list[str]:
    """The indicator columns to fit on: those of the numeric parameters ``frame`` leaves
    unset on some rows and sets on others."""
    return [indicator_column(column) for column, stand_in in encoding
            if stand_in is not None and frame[column].isna().any()
            and frame[column].notna().any()]


def apply_unset(frame: pd.DataFrame, encoding: Encoding) -> pd.DataFrame:
    """``frame`` with the encoding applied (a copy; ``frame`` itself if there is nothing to
    apply). A column the frame lacks counts as unset on every row."""
    import pandas as pd

    if not encoding:
        return frame
    # Built as one frame: a bootstrap applies this to every member's rows and candidates,
    # and setting columns one by one costs pandas a block insert each.
    encoded: dict[str, Any] = {}
    for column, stand_in in encoding:
        present = (frame[column] if column in frame.columns
                   else pd.Series(np.nan, index=frame.index))
        unset = present.isna().to_numpy()
        if stand_in is None:
            encoded[column] = present.astype(object).where(~unset, UNSET)
        else:
            encoded[indicator_column(column)] = np.where(unset, "no", "yes")
            encoded[column] = pd.to_numeric(present, errors="coerce").fillna(stand_in)
    order = [*frame.columns, *(c for c in encoded if c not in frame.columns)]
    return pd.DataFrame({c: encoded[c] if c in encoded else frame[c] for c in order},
                        index=frame.index)
