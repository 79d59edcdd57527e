"""Monotonicity completion (the paper's seventh term ``a/s``).

Rule. On positive values, ``x`` and ``1/x`` are both monotone, in opposite directions.
Collect the terms that contain parameter ``x_i`` (within one level combination of the
categorical columns: the shared terms plus that combination's indicator terms). If they all
have the same exponent sign for ``x_i``, the model is ``x_i * g(rest) + h(rest)`` (or
``g(rest) / x_i + h(rest)``), which is monotone in ``x_i`` whatever the signs of the
coefficients, so it can never put an optimum inside the range of ``x_i``. If both signs
occur, ``A x_i + B / x_i`` has an interior minimum for ``A, B > 0``. So "monotone-only"
means exactly: ``x_i`` occurs, and always with one exponent sign.

For every actionable parameter that is monotone-only, the candidate that best solves
eq. 4 among those active in that level combination whose exponent for ``x_i`` has the
opposite sign is added, whatever its gain, unless the fit is already exact to rounding.
A parameter that occurs in no term is left alone: the data gave no reason to model it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from iotune.model.categorical import CategoricalSpec, level_combinations
from iotune.model.selection import GreedySelector, Pick
from iotune.model.terms import Indicator

COMPLETED = "completed"
NO_CANDIDATE = "monotone, no candidate left"
MONOTONE = "monotone (completion off)"
EXACT = "monotone (fit already exact)"
NOT_MONOTONE = "not monotone"
ABSENT = "absent"


@dataclass(frozen=True)
class CompletionNote:
    """What completion found for one actionable parameter in one level combination.

    ``index`` is the candidate added (status ``completed``), else ``None``.
    """

    parameter: str
    status: str
    index: int | None = None
    where: dict[str, str] = field(default_factory=dict)


def active_masks(blocks: np.ndarray, families: Sequence[Indicator],
                 specs: Sequence[CategoricalSpec]) -> list[tuple[dict[str, str], np.ndarray]]:
    """For each level combination, which candidates apply to its rows.

    ``blocks[c]`` is 0 for a shared candidate and ``b >= 1`` for one multiplied by the
    indicator ``families[b - 1]``.
    """
    out = []
    for combo in level_combinations(specs):
        wanted = [0] + [b for b, (column, level) in enumerate(families, start=1)
                        if combo[column] == level]
        out.append((combo, np.isin(blocks, wanted)))
    return out


def signs_of(selected: Sequence[int], exponents: np.ndarray, active: np.ndarray,
             param: int) -> set[int]:
    """The exponent signs of ``param`` among the selected candidates that are active."""
    chosen = [c for c in selected if active[c]]
    return {int(np.sign(e)) for e in exponents[chosen, param] if e != 0}


def complete(selector: GreedySelector, exponents: np.ndarray, blocks: np.ndarray,
             families: Sequence[Indicator], specs: Sequence[CategoricalSpec],
             params: Sequence[str], actionable: Sequence[str], enabled: bool,
             ) -> tuple[list[Pick], list[CompletionNote]]:
    """Apply the completion rule (when ``enabled``) and report every actionable parameter.

    ``exponents[c]`` is candidate ``c``'s exponent vector. Once the fit is exact to
    rounding nothing more is added: the data show the monotonicity is real, and an added
    term would get a coefficient of rounding noise. Returns the added picks (in order) and
    one note per actionable numeric parameter and level combination.
    """
    monotone = MONOTONE if not enabled else EXACT
    picks: list[Pick] = []
    notes: list[CompletionNote] = []
    combos = active_masks(blocks, families, specs)
    for name in actionable:
        if name not in params:
            continue  # a categorical column: monotonicity does not apply
        i = list(params).index(name)
        outcome: dict[int, tuple[str, int | None]] = {}
        while enabled and not selector.is_exact:
            pending = [k for k, (_, active) in enumerate(combos) if k not in outcome
                       and len(signs_of(selector.selected, exponents, active, i)) == 1]
            if not pending:
                break
            k = pending[0]
            active = combos[k][1]
            (sign,) = signs_of(selector.selected, exponents, active, i)
            scores = selector.scores(active & (exponents[:, i] == -sign))
            best = int(np.argmin(scores))
            if not np.isfinite(scores[best]):
                outcome[k] = (NO_CANDIDATE, None)
                continue
            picks.append(Pick(best, selector.add(best), by_completion=True))
            outcome[k] = (COMPLETED, best)
        for k, (combo, active) in enumerate(combos):
            if k in outcome:
                status, index = outcome[k]
            else:
                signs = signs_of(selector.selected, exponents, active, i)
                status = {0: ABSENT, 1: monotone, 2: NOT_MONOTONE}[len(signs)]
                index = None
            notes.append(CompletionNote(name, status, index, combo))
    return picks, notes
