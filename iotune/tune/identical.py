"""Configurations that ran identically: asked for different settings, had the same in effect.

ROMIO, say, caps ``cb_nodes`` at the number of nodes: on one node ``cb_nodes=1`` and
``cb_nodes=2`` both run with one aggregator. Their runs are runs of one configuration, so
the race and the results table take them as one (:class:`Merged`): the runs of both, under
the settings of the one measured first, naming the others. What a configuration had in
effect comes from its runs' read-back (:func:`iotune.tune.result.verify`); runs that could
not read a setting back keep the value asked for, so nothing unread is merged. The default
(no settings) is never merged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from iotune.strategies.base import Evaluation
from iotune.tune.merged import Merged
from iotune.tune.result import verify


def in_effect_signature(evaluation: Evaluation, ignored: Mapping[str, str],
                        measured: bool) -> str | None:
    """What ``evaluation`` had in effect, as text equal for configurations that ran
    identically; None when it cannot be told (no successful run, or nothing read back)."""
    if not measured or not evaluation.times:
        return None
    shown = verify(evaluation, ignored, measured)
    effective: dict[str, Any] = dict(shown.settings)
    effective.update({f"unverified {k}": v for k, v in shown.unverified.items()})
    for name, seen in shown.not_in_effect.items():
        if name not in shown.settings and seen.get("in_effect") is not None:
            effective[name] = f"in effect {seen['in_effect']}, asked {seen['requested']}"
    return repr(sorted((k, str(v)) for k, v in effective.items()))


#: Signatures already worked out, by :func:`_signature_key`: a caller that merges the same
#: growing evaluations again and again (the race) keeps one and passes it each time.
SignatureCache = dict[tuple[str, int, int], str | None]


def merge_identical(evaluations: Iterable[Evaluation], ignored: Mapping[str, str],
                    measured: bool, statistic: str,
                    cache: SignatureCache | None = None) -> list[Evaluation]:
    """``evaluations`` with those that ran identically as one :class:`Merged` each (its
    ``statistic`` by ``statistic``), the others as they are, in the order given.

    ``cache`` (optional, for one ``ignored`` and ``measured``) keeps each configuration's
    signature until it has more runs, so merging again after a few runs verifies only the
    configurations that ran."""
    if not measured:  # nothing read back: no signature, nothing merged
        return list(evaluations)
    groups: dict[str, list[Evaluation]] = {}
    out: list[Evaluation | str] = []
    for evaluation in evaluations:
        signature = _signature(evaluation, ignored, cache) if evaluation.settings else None
        if signature is None:
            out.append(evaluation)
            continue
        if signature not in groups:
            groups[signature] = []
            out.append(signature)
        groups[signature].append(evaluation)
    return [_merged(groups[item], statistic) if isinstance(item, str) else item
            for item in out]


def _signature_key(evaluation: Evaluation) -> tuple[str, int, int]:
    """What an evaluation's signature depends on that changes: its runs so far (a run adds
    a time or a failure, and its measurement where they are kept)."""
    return evaluation.key, len(evaluation.measurements), len(evaluation.times)


def _signature(evaluation: Evaluation, ignored: Mapping[str, str],
               cache: SignatureCache | None) -> str | None:
    """:func:`in_effect_signature` of a measured ``evaluation``, from ``cache`` if there."""
    if cache is None:
        return in_effect_signature(evaluation, ignored, True)
    key = _signature_key(evaluation)
    if key not in cache:
        cache[key] = in_effect_signature(evaluation, ignored, True)
    return cache[key]


def _merged(members: list[Evaluation], statistic: str) -> Evaluation:
    if len(members) == 1:
        return members[0]
    members = sorted(members, key=lambda e: e.order)
    first = members[0]
    merged = Merged(
        dict(first.settings), first.key, predicted=first.predicted, order=first.order,
        times=[t for e in members for t in e.times],
        failures=[f for e in members for f in e.failures],
        bandwidths=[b for e in members for b in e.bandwidths],
        states=[s for e in members for s in e.states],
        measurements=[m for e in members for m in e.measurements], members=members)
    merged.summarise(statistic)
    return merged
