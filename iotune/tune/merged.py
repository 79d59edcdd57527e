"""Several configurations that ran identically, as one evaluation (see
:mod:`iotune.tune.identical`, which finds them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from iotune.strategies.base import Evaluation


@dataclass
class Merged(Evaluation):
    """Several configurations with the same settings in effect, as one evaluation: the
    settings, key and order of the first measured, the runs of all. ``members`` are the
    configurations merged, the first measured first."""

    members: list[Evaluation] = field(default_factory=list)


def members(evaluation: Evaluation) -> list[Evaluation]:
    """The configurations ``evaluation`` stands for: its members when merged, else itself."""
    return list(evaluation.members) if isinstance(evaluation, Merged) else [evaluation]
