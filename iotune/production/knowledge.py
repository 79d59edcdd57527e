"""A production campaign's candidates from a knowledge base (``job start --knowledge``).

When no tuned file is given, the configurations that won for similar workloads on the same
system (:class:`~iotune.knowledge.priors.Priors`, best known first) are the campaign's
candidates. They are offered as a tuned file's measured alternatives are: without a
:class:`~iotune.production.rule.Prior`, so the rule's risk bound, its first-trial limit and
its exploration cap treat them exactly as it treats a tuned file's candidates, and only
the campaign's own jobs settle on one. What a base says of other workloads never weighs in
a candidate's probability of being slower.
"""

from __future__ import annotations

from typing import Any

from iotune.errors import ConfigError
from iotune.knowledge.priors import KnownCandidate, Priors
from iotune.settings.values import normalise_settings


def knowledge_candidates(priors: Priors) -> tuple[list[dict[str, Any]], list[str], int]:
    """The configurations ``priors`` offer a campaign, in its order, the source of each
    (``knowledge BASE (won W of N similar workloads, median Sx)``), and how many known
    configurations were left out (settings this iotune does not take)."""
    configs: list[dict[str, Any]] = []
    sources: list[str] = []
    left_out = 0
    for known in priors.candidates:
        settings = _settings(known)
        if not settings:
            left_out += 1
            continue
        if settings in configs:
            continue
        configs.append(settings)
        sources.append(f"knowledge {priors.base} (won {known.wins} of {known.workloads} "
                       f"similar workloads, median {known.median_speedup:.2f}x)")
    return configs, sources, left_out


def _settings(known: KnownCandidate) -> dict[str, Any] | None:
    try:
        return normalise_settings(known.settings)
    except ConfigError:
        return None
