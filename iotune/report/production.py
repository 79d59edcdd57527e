"""The report of a production journal: the jobs of each campaign, labelled as production
jobs (the application's own runs, not dedicated tune runs), and what the rule makes of them.

No model is fitted and no tune figure is drawn: a campaign's jobs ran one application at
one scale under a handful of configurations. One figure per campaign shows its jobs in
order (:func:`campaign_figure`); the tables say the rest whole.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from iotune.production.describe import (
    candidate_source,
    counts_text,
    describe_configuration,
    running_trial_line,
    running_trials,
    state_counts,
)
from iotune.production.jobs import DEFAULT, Campaign, job_rows, regret_paid, status
from iotune.production.rule import Assessment
from iotune.report.parts import Part, ReportFigure, Section, write_figure, write_table
from iotune.report.tables import Table
from iotune.store import Store

#: The columns of the jobs table, in order; a setting's column follows them when any job
#: ran with it.
JOB_COLUMNS = ["recorded_at", "campaign", "job_id", "role", "config", "status", "io_seconds"]
FIXED = {*JOB_COLUMNS, "backend", "provenance", "source"}
#: The columns of a campaign's table of configurations against the default.
STATUS_COLUMNS = ["config", "candidate", "settings", "runs", "running", "failed", "lost",
                  "median_s", "median_vs_default", "low", "high", "p_more_than_10pct_slower",
                  "state"]


#: Markers of the jobs' roles in the campaign figure.
ROLE_MARKERS = {"baseline": "s", "default": "s", "challenger": "o", "best": "D", "drift": "^"}


def production_part(store: Store, out: Path, fmt: str = "png") -> Part:
    """The part of the page for the production journal ``store``: per campaign, a figure
    of its jobs (written into ``out`` as ``fmt``), its jobs and each configuration's
    estimate against the default; the CSV of every table is written into ``out``."""
    rows = job_rows(store)
    campaigns = list(dict.fromkeys(str(r["campaign"]) for r in rows))
    sections = [_campaign_section(store, tag, [r for r in rows if r["campaign"] == tag], out,
                                  fmt)
                for tag in campaigns]
    return Part(
        key="production", title="Production jobs", provenance="measured",
        banner=(f"MEASURED in production: {len(rows)} job(s) of the application itself "
                f"({', '.join(campaigns)}), each under the configuration iotune job start "
                "chose for it; not dedicated tune runs"),
        sections=sections,
        facts={"production jobs": len(rows), "campaigns": ", ".join(campaigns)})


def _campaign_section(store: Store, tag: str, rows: Sequence[dict[str, Any]],
                      out: Path, fmt: str) -> Section:
    campaign, state = status(store, tag)
    figure = _figure_file(campaign, state, out, fmt)
    settings = sorted({k for r in rows for k in r if k not in FIXED})
    jobs = write_table(out, Table(
        f"production-jobs-{tag}", f"Production jobs of campaign {tag} (measured in the "
        "application's own runs)", [*JOB_COLUMNS, *settings], rows,
        note="role: baseline (the default, the yardstick), challenger (a first or further "
             "trial of a candidate), best (the settled configuration), drift (a check of "
             "the default after settling); status: ok (finished with a time), failed, "
             "running (not finished, within its time limit) or lost (never finished, past "
             "it)", terminal=False))
    estimates = []
    for name, est in state.estimates.items():
        counts = state_counts(campaign, name)
        if not any(counts.values()):
            continue
        ratio = est.ratio
        estimates.append({
            "config": name, "candidate": candidate_source(campaign, name),
            "settings": describe_configuration(campaign.settings.get(name, {})),
            "runs": est.runs, "running": counts["running"], "failed": counts["failed"],
            "lost": counts["lost"], "median_s": est.seconds,
            "median_vs_default": None if ratio is None else ratio[1],
            "low": None if ratio is None else ratio[0],
            "high": None if ratio is None else ratio[2],
            "p_more_than_10pct_slower": est.p_slower,
            "state": state.place(name),
        })
    verdict = ("not settled: the default stays until a configuration beats it with "
               f"confidence (needed: {state.needed})" if state.settled is None else
               "settled: nothing better than the default; the default stays"
               if state.recommendation == DEFAULT else
               f"settled: {state.recommendation} beats the default with probability >= "
               f"{state.confidence:.0%}")
    table = write_table(out, Table(
        f"production-status-{tag}", f"Campaign {tag}: each configuration against the "
        f"default over {state.jobs} production jobs ({verdict})", STATUS_COLUMNS, estimates,
        note="runs: jobs finished with a time; running, failed, lost: jobs with none (a "
             "start with no finish is lost once past its time limit), so the four add up "
             "to the configuration's jobs; median_s: the median of its runs' I/O seconds; "
             "median_vs_default: its median over the default's with the 90% interval "
             "(low, high), below 1 is faster; candidate: the tuned file that offered it"))
    regret = regret_paid(campaign)
    notes = [verdict, f"{campaign.tag}: {counts_text(campaign)}",
             f"regret paid: {regret:.4g} s of I/O that exploring jobs took beyond the "
             "default's median time (each job's excess when it finished, never below 0)",
             *(running_trial_line(job, tag, store.path)
               for job in running_trials(campaign, state))]
    return Section(f"Campaign {tag}: {len(rows)} production jobs", [figure, table, jobs],
                   notes=notes)


def _figure_file(campaign: Campaign, state: Assessment, out: Path, fmt: str) -> ReportFigure:
    return write_figure(
        out, fmt, f"production-jobs-{campaign.tag}", campaign_figure(campaign, state),
        "Each production job's I/O seconds in the order the jobs started, coloured by "
        "configuration, shaped by role (square: the default as yardstick or when exploring "
        "is capped; circle: a challenger; diamond: the settled configuration; triangle: a "
        "drift check); the dashed line is the default's median. Jobs still running or "
        "failed have no time and are not drawn.", "measured")


def campaign_figure(campaign: Campaign, state: Assessment) -> Any:
    """The jobs of ``campaign`` in start order: each finished job's I/O seconds (log axis),
    coloured by configuration and shaped by role (:data:`ROLE_MARKERS`), the default's
    median as a dashed line; the title says the recommendation (MEASURED)."""
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    from iotune.report.figures import DEFAULT as DEFAULT_COLOUR
    from iotune.report.figures import DPI, WIDTH_IN, style

    with style():
        figure = Figure(figsize=(WIDTH_IN, 3.2), dpi=DPI, layout="constrained")
        settled = ("not settled, the default stays" if state.settled is None
                   else "settled: nothing better than the default" if state.settled == DEFAULT
                   else f"settled: {state.settled}")
        figure.suptitle(f"Measured: campaign {campaign.tag}, {state.jobs} production jobs "
                        f"({settled})", fontweight="bold")
        ax = figure.subplots()
        names = list(dict.fromkeys([DEFAULT, *(r.config for r in campaign.runs)]))
        palette = ["#1f5fa8", "#e08a1e", "#2e8b57", "#8e44ad", "#c0392b", "#16a085"]
        colours = {n: DEFAULT_COLOUR if n == DEFAULT else palette[(i - 1) % len(palette)]
                   for i, n in enumerate(names)}
        for name in names:
            for role, marker in ROLE_MARKERS.items():
                points = [(i + 1, seconds) for i, r in enumerate(campaign.runs)
                          if r.config == name and r.role == role
                          and (seconds := r.seconds) is not None]
                if points:
                    ax.scatter([job for job, _ in points], [t for _, t in points],
                               marker=marker, s=22, color=colours[name])
        base = state.estimates[DEFAULT].seconds
        if base is not None:
            ax.axhline(base, color=DEFAULT_COLOUR, linestyle="--", linewidth=1)
        ax.set_yscale("log")
        ax.set_xlabel("job (in start order)")
        ax.set_ylabel("I/O seconds")
        roles = [r for r in ROLE_MARKERS if any(run.role == r for run in campaign.runs)]
        handles = [Patch(color=colours[n], label=n) for n in names] + [
            Line2D([], [], marker=ROLE_MARKERS[r], linestyle="", color="#333333", label=r)
            for r in roles]
        ax.legend(handles=handles, fontsize=7, frameon=False, loc="upper left",
                  bbox_to_anchor=(1.0, 1.0))
        return figure
