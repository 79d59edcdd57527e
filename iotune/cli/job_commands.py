"""``iotune job``: tune across production jobs (docs/production.md).

``job start`` (in the job script, before the application) chooses this job's configuration
and prints its lines; ``job finish`` (after it) records the I/O time; ``job status`` shows
where the campaign stands.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import click

from iotune.apply import FORMATS, default_lines, render
from iotune.cli.numbers import SECONDS
from iotune.cli.store_files import store_files
from iotune.errors import ConfigError
from iotune.execution.outputs import InUse, check_output_file
from iotune.printable import Plain, Word, printed
from iotune.production.describe import (
    candidate_source,
    counts_text,
    describe_configuration,
    release_command,
    running_trial_line,
    running_trials,
    state_counts,
)
from iotune.production.jobs import (
    DEFAULT,
    STATES,
    env_job_id,
    finish_job,
    io_seconds_from_report,
    offered_as,
    regret_paid,
    start_job,
    status,
    tuned_candidates,
)
from iotune.production.knowledge import knowledge_candidates
from iotune.production.rule import CONFIDENCE, DRIFT_EVERY, Prior
from iotune.production.settle import write_settled
from iotune.production.time_limit import (
    duration_text,
    job_time_limit,
    lost_after,
    parse_time_limit,
)
from iotune.store import Store
from iotune.tuned import (
    read_tuned_file,
    same_configuration,
    serial_configuration,
    split_configuration,
)

_store = click.option("--store", "store_path", type=click.Path(path_type=Path),
                      default=Path("iotune-production.jsonl"), show_default=True,
                      help="The production journal (shared by every job of the campaign).")
_tag = click.option("--tag", required=True,
                    help="The campaign: one application at one scale and input.")
_tuned = click.option("--tuned", "tuned_path", type=click.Path(path_type=Path), default=None,
                      help="A tuned file to write the recommendation to once the campaign "
                           "has settled (for iotune apply); left as it is until then.")
_job = click.option("--job-id", default=None,
                    help="This job's id (default: Slurm's, <array job>_<task> for an "
                         "array task).")


def _guard(store_path: Path, tuned_path: Path | None) -> InUse:
    """The journal's files (never an output), ``--tuned`` checked before anything is
    recorded."""
    guard = InUse.of(store_files(store_path))
    if tuned_path is not None:
        check_output_file(tuned_path, "tuned", option="--tuned", in_use=guard)
    return guard


def _job_id(given: str | None) -> str:
    found = given or env_job_id()
    if not found:
        raise ConfigError("--job-id: not given and not in a Slurm job (SLURM_JOB_ID unset)")
    return found


@click.group("job")
def job_group() -> None:
    """Tune across production jobs: each job runs a chosen configuration at bounded risk."""


@job_group.command("start")
@_store
@_tag
@_job
@click.option("--candidate", "candidates", multiple=True, type=click.Path(path_type=Path),
              help="A tuned file (iotune tune -o): its recommended settings, then its "
                   "best found and runner-up (what a tune that kept the default could "
                   "not confirm), may be tried. Give the best-ranked first. Repeatable.")
@click.option("--knowledge", "knowledge", type=click.Path(path_type=Path), default=None,
              metavar="KB",
              help="Without --candidate: a knowledge base (iotune knowledge build) whose "
                   "configurations that won for similar workloads on this system are the "
                   "candidates, under the same risk bound. Needs --workload.")
@click.option("--workload", "workload", type=click.Path(path_type=Path), default=None,
              metavar="FILE",
              help="With --knowledge: the application's workload descriptor (the keys of a "
                   "FILE.workload.yaml sidecar, system included; docs/knowledge.md).")
@click.option("--format", "fmt", type=click.Choice([f for f in FORMATS if f != "h5py"]),
              default="preload", show_default=True, help="Lines to print (as iotune apply).")
@click.option("--time-limit", "time_limit", default=None,
              help="This job's time limit in sbatch --time's forms (e.g. 2:00:00, 1-12): "
                   "past it (and 10 minutes more) a job that never finished counts as lost. "
                   "Default: Slurm's limit of the job, else 48 hours.")
def start_command(store_path: Path, tag: str, job_id: str | None,
                  candidates: tuple[Path, ...], knowledge: Path | None,
                  workload: Path | None, fmt: str, time_limit: str | None) -> None:
    """Choose this job's configuration, record the choice, print its job-script lines.

    \b
    In a job script:
      eval "$(iotune job start --tag ckpt-512 --candidate tuned.yaml)"
      iotune_run srun ./app ...
      iotune job finish --tag ckpt-512 --seconds "$IO_SECONDS"
      eval "$(iotune job start --tag ckpt-512 --knowledge site.kb --workload ckpt.yaml)"
    """
    if time_limit is not None:
        parse_time_limit(time_limit)  # checked before anything else is read
    _check_knowledge_options(knowledge, workload, candidates)
    ident = _job_id(job_id)
    store = Store(store_path).check_writable()
    configs: list[dict[str, Any]] = []
    priors: list[Prior | None] = []
    sources: list[str] = []
    for path in candidates:
        doc = read_tuned_file(path)
        offered = [(c, p) for c, p in tuned_candidates(doc)
                   if not any(same_configuration(c, known) for known in configs)]
        if not offered:
            click.echo(f"iotune: --candidate {path}: no configuration to try (it recommends "
                       "the default and names no best found)", err=True)
        configs += [c for c, _ in offered]
        priors += [p for _, p in offered]
        sources += [f"{path} ({offered_as(doc, c)})" for c, _ in offered]
    if knowledge is not None and workload is not None:
        configs, sources = _knowledge_candidates(knowledge, workload)
        priors = [None] * len(configs)
    limit = job_time_limit(time_limit, os.environ)
    choice, config = start_job(store, tag, ident, configs, priors, limit, sources)
    settings, files = split_configuration(config)
    click.echo(printed("# iotune job {ident} of {tag}: {config} ({role}: {reason})",
                       ident=Plain(ident, "--job-id"), tag=Plain(tag, "--tag"),
                       config=Plain(choice.config, "config"), role=Plain(choice.role, "role"),
                       reason=Plain(choice.reason, "reason")))
    click.echo(f"# time limit {duration_text(limit.seconds)} by {limit.source}: not finished "
               f"within {duration_text(lost_after(limit.seconds))} of its start, this job "
               "counts as lost")
    click.echo(printed("export IOTUNE_JOB_ID={ident}", ident=Word(ident, "--job-id")))
    click.echo(printed("export IOTUNE_JOB_TAG={tag}", tag=Word(tag, "--tag")))
    shown = {"settings": settings, "files": files,
             "provenance": f"production {choice.role}"}
    # Jobs submitted from one directory share it: each job's files carry its id, so a job
    # starting next to a running one never rewrites the settings that one runs under.
    click.echo(render(shown, fmt, hints_file=f"iotune-romio-hints-{ident}",
                      settings_file=f"iotune-preload-settings-{ident}")
               if settings or files else default_lines(shown))


def _check_knowledge_options(knowledge: Path | None, workload: Path | None,
                             candidates: tuple[Path, ...]) -> None:
    """ConfigError when ``--knowledge`` and ``--workload`` are not given together, or are
    given with ``--candidate`` (a tuned file's candidates are this application's own)."""
    if knowledge is not None and candidates:
        raise ConfigError("--knowledge: offers candidates when no tuned file is given; give "
                          "--candidate or --knowledge, not both")
    if knowledge is not None and workload is None:
        raise ConfigError("--knowledge: needs --workload FILE, the application's workload "
                          "descriptor (the keys of a FILE.workload.yaml sidecar)")
    if workload is not None and knowledge is None:
        raise ConfigError("--workload: describes the workload for --knowledge, which is not "
                          "given")


def _knowledge_candidates(knowledge: Path, workload: Path) -> tuple[list[dict[str, Any]],
                                                                   list[str]]:
    """The campaign's candidates and their sources from the knowledge base (see
    :mod:`iotune.production.knowledge`), with one line saying what it offered."""
    from iotune.knowledge.descriptor import from_sidecar
    from iotune.knowledge.query import priors_for

    if not knowledge.is_file():
        raise ConfigError(f"--knowledge: {knowledge}: "
                          f"{'is not a file' if knowledge.exists() else 'no such file'}; "
                          "give a knowledge base built by 'iotune knowledge build'")
    system, described, _ = from_sidecar(workload)
    priors = priors_for(knowledge, system, described)
    configs, sources, left_out = knowledge_candidates(priors)
    click.echo(f"iotune: {priors.text()}"
               + (f"; {left_out} known configuration(s) left out (settings this iotune does "
                  "not take)" if left_out else "")
               + ("" if configs else "; no candidate: every job runs the default"), err=True)
    return configs, sources


@job_group.command("finish")
@_store
@_tag
@_job
@click.option("--seconds", type=SECONDS, default=None,
              help="The application's I/O seconds in this job.")
@click.option("--preload-report", "report_path", type=click.Path(path_type=Path),
              default=None,
              help="Instead of --seconds: the preload library's report of this job "
                   "(the file IOTUNE_PRELOAD_OUT named); the I/O seconds are the "
                   "open-to-close times of the files it lists, added.")
@click.option("--files", "pattern", default=None,
              help="With --preload-report: only the files whose path matches this shell "
                   "pattern, e.g. '*/ckpt_*.h5'.")
@click.option("--failed", is_flag=True, help="The application failed: record no time.")
@_tuned
def finish_command(store_path: Path, tag: str, job_id: str | None, seconds: float | None,
                   report_path: Path | None, pattern: str | None, failed: bool,
                   tuned_path: Path | None) -> None:
    """Record this job's I/O time (or its failure) in the production journal.

    \b
    The time is --seconds, or measured in the application by the preload library:
      export IOTUNE_PRELOAD_OUT="$PWD/io-$SLURM_JOB_ID.json"   # before the application
      iotune job finish --tag ckpt-512 --preload-report "$IOTUNE_PRELOAD_OUT" \\
          --files '*/ckpt_*.h5'
    """
    if sum((failed, seconds is not None, report_path is not None)) != 1:
        raise ConfigError("--seconds: give the I/O seconds or --preload-report or --failed, "
                          "one of the three")
    if pattern is not None and report_path is None:
        raise ConfigError("--files: chooses files of --preload-report, which is not given")
    store = Store(store_path).check_writable()
    source = None
    if report_path is not None:
        seconds, source = io_seconds_from_report(report_path, pattern)
    guard = _guard(store_path, tuned_path)
    record = finish_job(store, tag, _job_id(job_id), seconds, source)
    click.echo(f"iotune: job {record['job_id']} of {tag}: {record['status']}", err=True)
    if tuned_path is not None:
        click.echo(write_settled(tuned_path, store, tag, guard).line, err=True)


@job_group.command("status")
@_store
@_tag
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True)
@_tuned
def status_command(store_path: Path, tag: str, fmt: str, tuned_path: Path | None) -> None:
    """Jobs so far by state, each configuration's median time and its ratio to the
    default's with a 90% interval, its candidate file and settings, first trials still
    running (and the command that releases each), the regret paid and what is needed to
    settle."""
    guard = _guard(store_path, tuned_path)
    if tuned_path is None:
        campaign, state = status(Store(store_path), tag)
    else:  # the table shows the state the tuned file was written from
        written = write_settled(tuned_path, Store(store_path), tag, guard)
        click.echo(written.line, err=True)
        campaign, state = written.campaign, written.state
    rows: list[dict[str, Any]] = []
    for name, est in state.estimates.items():
        counts = state_counts(campaign, name)
        if not any(counts.values()):
            continue
        prior = campaign.priors.get(name)
        rows.append({"config": name, "runs": est.runs, "running": counts["running"],
                     "failed": counts["failed"], "lost": counts["lost"],
                     "median_s": est.seconds,
                     "median_vs_default": None if est.ratio is None else {
                         "estimate": est.ratio[1], "low": est.ratio[0],
                         "high": est.ratio[2], "level": 0.90},
                     "p_slower": est.p_slower, "state": state.place(name),
                     "candidate": candidate_source(campaign, name),
                     "settings": campaign.settings.get(name, {}),
                     "tune_estimate": None if prior is None else {
                         "speedup": round(math.exp(-prior.log_ratio), 4),
                         "log_sd": round(prior.sd, 4)}})
    trials = running_trials(campaign, state)
    rec = state.recommendation
    gain = state.estimates[rec].ratio if rec != DEFAULT else None
    regret = regret_paid(campaign)
    summary: dict[str, object] = {
        "tag": tag, "jobs": state.jobs,
        **{state_name: campaign.count(state_name) for state_name in STATES},
        "explored": state.explored,
        "settled": state.settled is not None, "recommendation": rec,
        "recommended_settings": campaign.settings.get(rec, {}),
        "gain": None if gain is None else 1 / gain[1],
        "regret_s": regret, "needed": state.needed,
        "running_first_trials": [
            {"config": j.config, "job_id": j.job_id, "running_for_s": round(j.age_s, 1),
             "time_limit_s": j.time_limit_s, "time_limit_source": j.time_limit_source,
             "lost_after_s": j.lost_after_s,
             "release": release_command(tag, j.job_id, store_path)} for j in trials],
        "provenance": f"{state.jobs} production jobs", "configurations": rows,
    }
    if fmt == "json":
        # Keys sorted, but each configuration's per-file settings as [glob, settings] pairs
        # in the candidate's order (sorting a mapping of globs would reorder them, and a
        # file's settings depend on that order).
        serial = {**summary, "recommended_settings": serial_configuration(
                      campaign.settings.get(rec, {})),
                  "configurations": [{**row, "settings": serial_configuration(row["settings"])}
                                     for row in rows]}
        click.echo(json.dumps(serial, indent=2, sort_keys=True, default=str))
        return
    click.echo(f"campaign {tag}: {counts_text(campaign)}; {state.explored} explored")
    click.echo(f"{'config':10} {'runs':>4} {'running':>7} {'failed':>6} {'lost':>4} "
               f"{'median s':>10}  {'median / default (90%)':24} {'P(>10% slower)':>14}  "
               "state")
    for row in rows:
        ratio = row["median_vs_default"]
        shown = (f"{ratio['estimate']:.3f} [{ratio['low']:.3f}, {ratio['high']:.3f}]"
                 if ratio else "-")
        median = f"{row['median_s']:.4g}" if row["median_s"] is not None else "-"
        risk = f"{row['p_slower']:.3f}" if row["p_slower"] is not None else "-"
        click.echo(f"{row['config']:10} {row['runs']:>4} {row['running']:>7} "
                   f"{row['failed']:>6} {row['lost']:>4} {median:>10}  {shown:24} "
                   f"{risk:>14}  {row['state']}")
    click.echo("runs: finished with a time; median s: the median of their I/O seconds; "
               "median / default: its ratio to the default's median")
    for row in rows:
        if row["config"] == DEFAULT:
            continue
        source = "" if row["candidate"] == "-" else f" from {row['candidate']}"
        click.echo(f"{row['config']}{source}: {describe_configuration(row['settings'])}")
    for row in rows:
        if row["tune_estimate"]:
            click.echo(f"{row['config']}: the tune's estimate, "
                       f"{row['tune_estimate']['speedup']:.2f}x (log sd "
                       f"{row['tune_estimate']['log_sd']:.2f}), weighs in its P(>10% slower)")
    for job in trials:
        click.echo(running_trial_line(job, tag, store_path))
    if state.settled is None:
        click.echo(f"not settled: recommendation stays the default; needed: {state.needed}")
    elif rec == DEFAULT:
        click.echo(f"settled: nothing better than the default; the default stays ({state.jobs}"
                   f" production jobs; every {DRIFT_EVERY}th job re-runs the best candidate "
                   "as a drift check)")
    else:
        assert gain is not None
        how = "" if state.confidence == CONFIDENCE else " (rank test)"
        click.echo(f"settled: {rec} beats the default with probability >= "
                   f"{state.confidence:.0%}{how}, {1 / gain[1]:.2f}x by the medians so far "
                   f"({state.jobs} production jobs); exploration stopped, every "
                   f"{DRIFT_EVERY}th job re-runs the default as a drift check")
    click.echo(f"regret paid: {regret:.4g} s of I/O that exploring jobs took beyond the "
               "default's median time (each job's excess when it finished, never below 0)")


COMMANDS = [job_group]
