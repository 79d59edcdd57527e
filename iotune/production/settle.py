"""A settled campaign's recommendation, written as a tuned file (``--tuned FILE``).

Once the rule settles (:func:`iotune.production.rule.assess`), the recommendation is what
a job script that stops exploring should run: :func:`tuned_document` makes it a tuned file
(:mod:`iotune.tuned`, read by ``iotune apply``) with provenance ``N production jobs``;
:func:`write_settled` writes it atomically while holding the journal's lock, so two jobs
finishing at once leave the file of the later state, whole. A campaign not settled (or
reopened by a drift check) leaves the file as it is: a recommendation is written only
when settled, never guessed from an unfinished comparison.

Per-file settings are written as a list of ``{pattern, settings}`` entries in the order the
candidate gave them (:func:`iotune.tuned.files_document`), the order the jobs ran them in.
A configuration whose start records were written by an iotune that kept no order (its
patterns came back alphabetical, see :func:`iotune.tuned.recorded_configuration`) is not
written either: which pattern comes first decides a file's settings, and the journal no
longer knows it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iotune import __version__
from iotune.execution.outputs import InUse, write_output
from iotune.production.jobs import DEFAULT, Campaign, status
from iotune.production.rule import CONFIDENCE, Assessment
from iotune.store import Store, now_iso
from iotune.tuned import (
    TUNED_SCHEMA_VERSION,
    check_tuned,
    split_configuration,
    writable_tuned,
)
from iotune.ui.output import to_plain


def tuned_document(campaign: Campaign, state: Assessment) -> dict[str, Any] | None:
    """The tuned file of a settled campaign (None: not settled): the recommended settings
    (none for the default), ``recommendation`` ``tuned`` or ``default``, the gain and why,
    with provenance ``N production jobs``."""
    if state.settled is None or state.settled in campaign.order_lost:
        return None
    doc: dict[str, Any] = {
        "schema_version": TUNED_SCHEMA_VERSION, "iotune_version": __version__,
        "created_at": now_iso(),
        # The application a campaign's jobs run is a user's program: the command kernel.
        "kernel": "command", "provenance": f"{state.jobs} production jobs",
    }
    if state.settled == DEFAULT:
        doc.update(recommendation="default", settings={}, speedup=1.0,
                   reason=f"campaign {campaign.tag}: no candidate is plausibly better than "
                          f"the default after {state.jobs} production jobs")
        return check_tuned(doc)
    ratio = state.estimates[state.settled].ratio
    assert ratio is not None  # settled on a configuration with runs
    settings, files = split_configuration(campaign.settings[state.settled])
    if files:
        doc["files"] = files
    doc.update(recommendation="tuned", settings=settings,
               speedup=round(1 / ratio[1], 4), confidence=state.confidence,
               reason=f"campaign {campaign.tag}: {state.settled} beats the default with "
                      f"probability >= {state.confidence:.0%} over {state.jobs} production "
                      "jobs" + ("" if state.confidence == CONFIDENCE else " (rank test)"))
    return check_tuned(doc)


@dataclass(frozen=True)
class Written:
    """What :func:`write_settled` did (``line``, one line saying it) and the campaign and
    state it decided from, read under the lock: what a caller shows beside it."""

    line: str
    campaign: Campaign
    state: Assessment


def write_settled(path: Path, store: Store, tag: str, in_use: InUse) -> Written:
    """Write the recommendation of campaign ``tag`` to the tuned file ``path`` when it is
    settled, under the journal's lock (``in_use``: the files an output never replaces, the
    journal's). StoreError when the journal holds no job of ``tag``."""
    import yaml

    if not store.exists():
        # Refused before the lock, which would create the missing journal's directory.
        status(store, tag)
    with store.exclusive():
        campaign, state = status(store, tag)
        doc = tuned_document(campaign, state)
        if doc is None and state.settled in campaign.order_lost:
            return Written(f"iotune: {path} unchanged: campaign {tag} settled on "
                           f"{state.settled}, whose per-file patterns an older iotune "
                           "recorded in alphabetical order (the order, which decides a "
                           "file's settings, is lost); write the tuned file from that "
                           "candidate's file", campaign, state)
        if doc is None:
            return Written(f"iotune: {path} unchanged: campaign {tag} has not settled",
                           campaign, state)
        write_output(path, yaml.safe_dump(to_plain(writable_tuned(doc)), sort_keys=False),
                     "tuned", option="--tuned", in_use=in_use)
    what = ("nothing better, the default stays" if doc["recommendation"] == "default"
            else f"{state.settled}, {doc['speedup']:.2f}x")
    return Written(f"iotune: wrote {path}: {what} ({doc['provenance']})", campaign, state)
