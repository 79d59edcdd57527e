"""What a tune takes from a knowledge base, and what it never takes.

A query of a knowledge base (:mod:`iotune.knowledge.query`) gives a tune
:class:`~iotune.knowledge.priors.Priors`: the noise measured on the same system for similar
workloads, and the configurations that won for them. The tune uses them to order and size
its work, never to decide:

- **Noise.** The knowledge's log spread is pooled with what this workload's runs show
  before the search (the default's two runs, earlier runs in the store), its degrees of
  freedom capped at :data:`PRIOR_DF_CAP`, and the pooled spread splits the budget
  (:meth:`iotune.strategies.racing.Budget.split`). It does not enter the race's rule: the
  rank test compares this workload's own runs, so knowledge cannot confirm a gain nor
  veto one.
- **Candidates.** A known configuration whose settings are those of a candidate of this
  tune (the same store key after normalisation, :func:`matched_candidates`) is measured
  right after the default, before the search, and races whatever its rank (``favoured``
  in :func:`~iotune.strategies.racing.race`). Known configurations outside this tune's
  space are left out and counted.
- **Warm start.** Measured before the search, they are evaluations every strategy sees:
  the portfolio's initial design counts them as taken and its model is fitted on them.

With empty priors (nothing similar known) nothing of this happens and the tune runs as
without a knowledge base.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError
from iotune.knowledge.priors import KnownCandidate, Priors
from iotune.settings.values import describe_settings, normalise_settings
from iotune.strategies.base import Configuration
from iotune.strategies.racing import Noise

#: Most degrees of freedom the knowledge's noise counts for when pooled with this
#: workload's runs: worth eight runs, so that from the default's first two runs (one
#: degree of freedom) the split follows the system's known noise, and a dozen runs of this
#: workload already outweigh it (a workload may be quieter or noisier than its neighbours).
PRIOR_DF_CAP = 8


@dataclass(frozen=True)
class KnowledgeUse:
    """What one tune took from a knowledge base: the query's ``priors``, the known
    configurations of this tune's space measured first (``raced_first``, best known
    first), how many known ones were not in the space (``outside_space``), and whether
    the knowledge's noise was pooled into the budget's split (``noise_pooled``)."""

    priors: Priors
    raced_first: tuple[Configuration, ...] = ()
    outside_space: int = 0
    noise_pooled: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The tuned file's ``knowledge:``: the query's priors and what the tune did with
        them."""
        return {**self.priors.to_dict(),
                "raced_first": [dict(c) for c in self.raced_first],
                "not_in_space": self.outside_space,
                "noise_pooled_into_split": self.noise_pooled,
                "confirms": "never: a change is recommended only when this workload's own "
                            "runs beat the default by the race's rule"}

    def summary(self) -> str:
        """One line for the result: what came from the knowledge base."""
        if self.priors.empty:
            return (f"{self.priors.base}: no similar workload on "
                    f"{self.priors.system or 'this system'}; nothing taken")
        parts = []
        if self.noise_pooled and self.priors.noise is not None:
            parts.append(f"{self.priors.noise.text()} (sized the race's share)")
        if self.raced_first:
            parts.append("raced first: " + "; ".join(describe_settings(c)
                                                       for c in self.raced_first))
        if self.outside_space:
            parts.append(f"{self.outside_space} known configuration"
                         f"{'s' if self.outside_space != 1 else ''} not in this space")
        return (f"{self.priors.base}: " + ("; ".join(parts) or "nothing usable")
                + "; the decision rests on this workload's runs")


def pooled_with_prior(own: Noise, own_source: str,
                      priors: Priors | None) -> tuple[Noise, str, bool]:
    """The noise that splits the budget: ``own`` (from this workload's runs, where
    ``own_source`` says) pooled with the knowledge's, whose degrees of freedom count at
    most :data:`PRIOR_DF_CAP`; and where it came from, and whether the knowledge's was
    used. Without a usable knowledge noise, ``own`` unchanged."""
    known = None if priors is None else priors.noise
    if known is None or not (math.isfinite(known.sigma) and known.sigma > 0):
        return own, own_source, False
    prior_df = max(1, min(known.degrees_of_freedom, PRIOR_DF_CAP))
    squares = prior_df * known.sigma**2
    df = prior_df
    if own.sigma is not None and own.df > 0:
        squares += own.df * own.sigma**2
        df += own.df
    where = (f"the knowledge base ({known.text()}, counted as {prior_df} degrees of "
             "freedom)")
    source = where if own.sigma is None else f"{own_source} and {where}"
    return Noise(math.sqrt(squares / df), df), source, True


def matched_candidates(priors: Priors | None, candidates: Sequence[Mapping[str, Any]],
                       key: Callable[[Mapping[str, Any]], str]
                       ) -> tuple[list[Configuration], int]:
    """The candidates of this tune whose key (``key``: the search context's) is that of a
    known configuration of ``priors``, in the knowledge's order, each once, and how many
    known configurations match none (settings iotune does not take count there too: a
    knowledge base may come from a newer iotune). The default (no setting) is never one."""
    if priors is None or not priors.candidates:
        return [], 0
    by_key: dict[str, Configuration] = {}
    for candidate in candidates:
        by_key.setdefault(key(candidate), dict(candidate))
    found: list[Configuration] = []
    outside = 0
    for known in priors.candidates:
        settings = _normalised(known)
        match = None if not settings else by_key.get(key(settings))
        if match is None:
            outside += 1
        elif not any(match == f for f in found):
            found.append(match)
    return found, outside


def _normalised(known: KnownCandidate) -> Configuration | None:
    try:
        return normalise_settings(known.settings)
    except ConfigError:
        return None
