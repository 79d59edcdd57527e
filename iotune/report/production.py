"""The report of a production journal: the jobs of each campaign, labelled as production
jobs (the application's own runs, not dedicated tune runs), and what the rule makes of them.

No model is fitted and no tune figure is drawn: a campaign's jobs ran one application at
one scale under a handful of configurations, which the tables say whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iotune.production.jobs import DEFAULT, job_rows, status
from iotune.report.parts import Part, Section, write_table
from iotune.report.tables import Table
from iotune.store import Store

#: The columns of the jobs table, in order; a setting's column follows them when any job
#: ran with it.
JOB_COLUMNS = ["recorded_at", "campaign", "job_id", "role", "config", "status", "io_seconds"]
FIXED = {*JOB_COLUMNS, "backend", "provenance", "source"}


def production_part(store: Store, out: Path) -> Part:
    """The part of the page for the production journal ``store``: per campaign, its jobs
    and each configuration's estimate against the default; the CSV of every table is
    written into ``out``."""
    rows = job_rows(store)
    campaigns = list(dict.fromkeys(str(r["campaign"]) for r in rows))
    sections = [_campaign_section(store, tag, [r for r in rows if r["campaign"] == tag], out)
                for tag in campaigns]
    return Part(
        key="production", title="Production jobs", provenance="measured",
        banner=(f"MEASURED in production: {len(rows)} job(s) of the application itself "
                f"({', '.join(campaigns)}), each under the configuration iotune job start "
                "chose for it; not dedicated tune runs"),
        sections=sections,
        facts={"production jobs": len(rows), "campaigns": ", ".join(campaigns)})


def _campaign_section(store: Store, tag: str, rows: Sequence[dict[str, Any]],
                      out: Path) -> Section:
    campaign, state = status(store, tag)
    settings = sorted({k for r in rows for k in r if k not in FIXED})
    jobs = write_table(out, Table(
        f"production-jobs-{tag}", f"Production jobs of campaign {tag} (measured in the "
        "application's own runs)", [*JOB_COLUMNS, *settings], rows,
        note="role: baseline (the default, the yardstick), challenger (a first or further "
             "trial of a candidate), best (the settled configuration), drift (a check of "
             "the default after settling)", terminal=False))
    estimates = []
    for name, est in state.estimates.items():
        if est.runs == 0 and est.pending == 0:
            continue
        ratio = est.ratio
        estimates.append({
            "config": name, "runs": est.runs, "running": est.pending,
            "mean_s": est.seconds,
            "time_vs_default": None if ratio is None else ratio[1],
            "low": None if ratio is None else ratio[0],
            "high": None if ratio is None else ratio[2],
            "p_more_than_10pct_slower": est.p_slower,
            "state": ("default" if name == DEFAULT else "admissible"
                      if name in state.admissible else "held back"
                      if name in state.held_back else "not a candidate"),
        })
    verdict = ("not settled: the default stays until a configuration beats it with "
               f"confidence ({state.needed})" if state.settled is None else
               "settled: nothing better than the default; the default stays"
               if state.recommendation == DEFAULT else
               f"settled: {state.recommendation} beats the default with probability >= "
               f"{state.confidence:.0%}")
    table = write_table(out, Table(
        f"production-status-{tag}", f"Campaign {tag}: each configuration against the "
        f"default over {state.jobs} production jobs ({verdict})",
        ["config", "runs", "running", "mean_s", "time_vs_default", "low", "high",
         "p_more_than_10pct_slower", "state"], estimates,
        note="time_vs_default: the configuration's time over the default's with its 90% "
             "interval (low, high); below 1 is faster"))
    return Section(f"Campaign {tag}: {len(rows)} production jobs", [table, jobs],
                   notes=[verdict, f"{campaign.tag}: {len(campaign.runs)} jobs started"])
