"""``iotune train`` (measure a training design, alone or as one of many workers) and
``iotune status`` (where a campaign stands)."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import click

from iotune.backends import make_backend
from iotune.cli.common import (
    backend_options,
    bandwidth_text,
    check_job_script_options,
    command_options,
    config_option,
    duration_text,
    force_option,
    in_use,
    job_script_options,
    remove_orphaned_runs,
    requeue_hint,
    resolve_config,
    submit_line,
    target_option,
    with_backend,
    with_command,
    with_kernel,
    with_slurm_launcher,
)
from iotune.cli.numbers import SECONDS, BoundedInt
from iotune.errors import ConfigError
from iotune.execution import interrupt
from iotune.execution.outputs import check_output_file
from iotune.execution.slurm import current_allocation, job_label
from iotune.settings.bounds import MAX_ARRAY_TASKS
from iotune.settings.units import parse_duration
from iotune.settings.values import describe_settings
from iotune.store import Store
from iotune.store.claims import LEASE_S, Worker
from iotune.store.records import Measurement
from iotune.train import (
    CampaignInterrupted,
    Task,
    check_fits_allocation,
    done_tasks,
    plan_campaign,
    run_campaign,
)
from iotune.train.jobscript import core_hours, job_script, seconds_per_run, write_job_script
from iotune.train.status import CampaignStatus, campaign_status
from iotune.tune.target import with_target
from iotune.ui.output import progress, render_table
from iotune.ui.terminal import Progress, make_progress


@click.command("train")
@config_option
@click.option("--kernel", "kernel_name",
              help="Kernel to train (vpic, ior) or a proxy file from 'iotune proxy' "
                   "(default: the config's kernel).")
@command_options
@backend_options
@click.option("--launcher", type=click.Choice(["mpiexec", "srun", "template"]),
              help="Override the config's launcher (inside Slurm the default is srun).")
@click.option("--dry-run", is_flag=True, help="Print the plan (runs, scales, core-hours).")
@click.option("--emit-sbatch", "sbatch_path", type=click.Path(path_type=Path),
              help="Write a Slurm job script that runs this campaign, and exit (replaces "
                   "an earlier script, never the store or the config).")
@force_option
@click.option("--array", "array", type=BoundedInt(1, MAX_ARRAY_TASKS), metavar="N",
              help="With --emit-sbatch: a job array of N tasks that share the campaign's "
                   f"runs, each measured once between them (at most {MAX_ARRAY_TASKS}).")
@click.option("--lease", default=f"{LEASE_S:.0f}s", show_default=True, metavar="DURATION",
              help="How long this worker's claim on a run holds without a sign of life "
                   "(it sends one every quarter lease); after it another worker takes the "
                   "run over. Runs of a worker on the same host, or an earlier start of "
                   "the same Slurm job, are taken over at once.")
@job_script_options
@click.option("--retry-failed", is_flag=True,
              help="Measure again the runs recorded as failed (runs killed from outside "
                   "iotune are always measured again).")
@target_option()
@click.option("--no-color", is_flag=True, help="Plain progress lines, no progress bar.")
def train_command(config_path: Path | None, kernel_name: str | None,
                  app_command: str | None, metric: str | None,
                  backend_name: str | None, sim_system: str | None,
                  noise: float | None, replay_data: Path | None, launcher: str | None,
                  dry_run: bool, sbatch_path: Path | None, force: bool, array: int | None,
                  lease: str, partition: str | None, account: str | None,
                  time_limit: str | None, retry_failed: bool, target: str | None,
                  no_color: bool) -> None:
    """Measure the training design of the config at every scale, into the store.

    Resumable: rerun the same command after a crash or a time limit and it skips every run
    already recorded. Inside a Slurm allocation runs are launched with srun.

    Several trains may run at once on one store (a job array, jobs on other nodes, or
    processes side by side): each claims a run before measuring it, so every run of the
    design is measured once between them. Watch them with 'iotune status'.

    \b
    Examples:
      iotune train -c configs/local.yaml --dry-run
      iotune train -c vpic.yaml --emit-sbatch train.sbatch && sbatch train.sbatch
      iotune train -c vpic.yaml --emit-sbatch train.sbatch --array 8 && sbatch train.sbatch
    """
    if dry_run and sbatch_path is not None:
        raise ConfigError("--dry-run and --emit-sbatch: give one (--dry-run prints the plan, "
                          "--emit-sbatch writes the job script and runs nothing either)")
    check_job_script_options(sbatch_path, partition=partition, account=account,
                             time_limit=time_limit)
    config = with_slurm_launcher(resolve_config(config_path), launcher)
    config = with_backend(config, backend_name, sim_system, noise, replay_data)
    config, _ = with_kernel(config, kernel_name)
    config = with_command(config, app_command, metric)
    config = with_target(config, target)
    lease_s = _lease_seconds(lease)
    guard = in_use(config)
    if sbatch_path is not None:
        check_output_file(sbatch_path, "script", option="--emit-sbatch", in_use=guard,
                          force=force)
        if config.path is None:
            raise ConfigError(f"--emit-sbatch {sbatch_path}: the job script runs 'iotune "
                              "train -c CONFIG', so it needs a config file: pass -c CONFIG, "
                              "or write one with 'iotune init'")
    if array is not None and sbatch_path is None:
        raise ConfigError("--array N writes a job array script: give --emit-sbatch PATH "
                               "too (to run workers by hand, start 'iotune train' N times)")
    plans = plan_campaign(config)
    store = Store(config.store).check_writable()  # a job script too must find it writable
    per_run = seconds_per_run(store, config.kernel.name)
    if sbatch_path is not None:
        write_job_script(sbatch_path, job_script(config, plans, per_run, partition, account,
                                                 array=array, time_limit=time_limit),
                         in_use=guard, force=force)
        progress(submit_line(sbatch_path))
        return
    if dry_run:
        done = done_tasks(store, retry_failed, make_backend(config).source())
        rows = [{"cores": p.scale.cores, "design": p.scale.design,
                 "configurations": p.configurations, "repetitions": config.train.repetitions,
                 "runs": len(p.tasks), "already_done": sum(t.ident in done for t in p.tasks)}
                for p in plans]
        click.echo(render_table(rows))
        total = sum(len(p.tasks) for p in plans)
        hours = core_hours(plans, per_run, config.system.cores_per_node)
        click.echo(f"\n{total} runs, about {per_run:.0f} s each: estimated {hours:.2f} "
                   f"core-hours; store {config.store}")
        return
    allocation = current_allocation()
    if allocation:
        check_fits_allocation(plans, allocation)
    backend = make_backend(config)
    remove_orphaned_runs(backend)
    done = done_tasks(store, retry_failed, backend.source())
    todo = sum(t.ident not in done for p in plans for t in p.tasks)
    worker = Worker.this_process(job_label(), lease_s)
    try:
        with interrupt.handling_signals(), \
                make_progress(todo, "train", no_color=no_color) as bar:
            counts = run_campaign(plans, backend, store, retry_failed=retry_failed,
                                  progress=lambda *args: _train_progress(bar, *args),
                                  worker=worker)
    except CampaignInterrupted as stop:
        progress(f"iotune: train stopped by {stop.name}: {stop.counts['ran']} run(s) recorded "
                 f"this time, {stop.remaining} to go, the run in flight discarded; resume with "
                 f"the same command{requeue_hint()} (exit status {stop.exit_status})")
        sys.exit(stop.exit_status)
    others = (f", {counts['by_others']} by other workers" if counts["by_others"] else "")
    progress(f"iotune: train done: {counts['ran']} run(s){others}, {counts['skipped']} already "
             f"in the store, {counts['failed']} failed; store {store.path}")
    if counts["interrupted"]:
        progress(f"iotune: {counts['interrupted']} run(s) were killed from outside iotune and "
                 "are measured again when you rerun the same command")
    if counts["failed"]:
        progress("iotune: failed runs are recorded with their reason: iotune results --failed; "
                 "measure them again with --retry-failed")



def _train_progress(bar: Progress, i: int, n: int, task: Task, record: dict[str, Any] | None,
                    eta: float | None) -> None:
    """Before a run: its configuration and the ETA; after it: its bandwidth or failure."""
    if record is None:
        eta_text = f"  ETA {duration_text(eta)}" if eta is not None else ""
        bar.move_to(i - 1)  # runs other workers recorded meanwhile count too
        bar.advance(f"run {i}/{n}: {task.request.cores} ranks rep {task.rep + 1}: "
                    f"{describe_settings(dict(task.request.settings))}{eta_text}", steps=0)
    elif record["status"] == "ok":
        run = Measurement.from_record(record, keep=False)
        times = run.times
        if times.total is None:  # a run that timed only its read
            bar.advance(f"-> {bandwidth_text(run.read_bandwidth_mib_s)}"
                        f"read {times.read_total or 0.0:.2f} s ({record['provenance']})")
            return
        read = f", read {times.read_total:.2f} s" if times.read_total is not None else ""
        bar.advance(f"-> {bandwidth_text(run.bandwidth_mib_s)}"
                    f"{times.total:.2f} s{read} ({record['provenance']})")
    elif record["status"] == "interrupted":
        bar.advance(f"-> INTERRUPTED (measured again on resume): {record['error']}")
    else:
        bar.advance(f"-> FAILED: {record['error']}")


def _lease_seconds(text: str) -> float:
    try:
        seconds = parse_duration(text)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--lease") from None
    if seconds < 4:
        raise click.BadParameter(f"{text!r} is shorter than 4 s; a lease must outlast a few "
                                 "heartbeats (one every quarter lease)", param_hint="--lease")
    return seconds


@click.command("status")
@config_option
@click.option("--kernel", "kernel_name",
              help="Kernel of the campaign, as given to 'iotune train' (default: the config's).")
@command_options
@backend_options
@target_option("The target given to 'iotune train', if any.")
@click.option("--watch", "watch", type=SECONDS, is_flag=False, flag_value=10.0, default=None,
              metavar="[SECONDS]",
              help="Print the status again every SECONDS (default 10) until the campaign "
                   "is complete or Ctrl-C.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="table for people; json for scripts (docs/campaigns.md).")
def status_command(config_path: Path | None, kernel_name: str | None,
                   app_command: str | None, metric: str | None, backend_name: str | None,
                   sim_system: str | None, noise: float | None, replay_data: Path | None,
                   target: str | None, watch: float | None, fmt: str) -> None:
    """Where a training campaign stands: per scale, runs done, being measured (claimed),
    failed and left; the workers seen and when each was last heard from; core-hours
    spent and the time left at the measured pace.

    Give the same config and options as to 'iotune train'. It reads the store only (no
    Slurm query), so it works from a login node while the workers run. Exit status 0.

    \b
    Examples:
      iotune status -c vpic.yaml
      iotune status -c vpic.yaml --watch 30
      iotune status -c vpic.yaml --format json | jq .left
    """
    config = resolve_config(config_path)
    config = with_backend(config, backend_name, sim_system, noise, replay_data)
    config, _ = with_kernel(config, kernel_name)
    config = with_command(config, app_command, metric)
    config = with_target(config, target)
    plans = plan_campaign(config)
    store = Store(config.store)
    source = make_backend(config).source()
    while True:
        status = campaign_status(plans, store, source=source)
        if fmt == "json":
            click.echo(json.dumps(status.to_json(), sort_keys=True))
        else:
            click.echo(_status_text(status))
        if watch is None or status.complete:
            return
        time.sleep(watch)
        if fmt == "table":
            click.echo()


def _status_text(status: CampaignStatus) -> str:
    """The status for people: a table per scale, one of the workers, and a summary line."""
    scales = render_table([{"cores": s.cores, "runs": s.runs, "done": s.done,
                            "measuring": s.claimed, "failed": s.failed, "left": s.left,
                            "s_per_run": (round(s.seconds_per_run, 1)
                                          if s.seconds_per_run is not None else None),
                            "core_hours": round(s.core_hours, 2)} for s in status.scales])
    runs = f" ({', '.join(status.provenance)} runs)" if status.provenance else ""
    lines = [f"campaign {status.campaign}{runs} in {status.store}, as of {status.as_of}"]
    if status.source:
        lines.append(f"source: {status.source}")
    if status.other_source_runs:
        lines.append(f"not counted: {status.other_source_runs} run(s) of these configurations "
                     "recorded with another source (see 'iotune results --source')")
    lines += ["", scales]
    if status.workers:
        lines += ["", render_table([{
            "worker": w.id, "host": w.host, "pid": w.pid, "job": w.job or "",
            "state": w.state, "last_heard": f"{duration_text(w.seconds_since_heard)} ago",
            "measuring": (f"{w.measuring['config_key']} rep {w.measuring['rep'] + 1}"
                          if w.measuring else "")} for w in status.workers])]
    if status.complete:
        summary = (f"complete: {status.done} run(s) done, {status.failed} failed; "
                   f"{status.core_hours:.2f} core-hours")
    else:
        eta = (f"about {duration_text(status.eta_s)} left with {max(1, status.live_workers)} "
               f"worker(s)" if status.eta_s is not None else "time left unknown (no timed run)")
        summary = (f"{status.done + status.failed}/{status.runs} runs answered, "
                   f"{status.claimed} being measured, {status.left} left; "
                   f"{status.core_hours:.2f} core-hours spent; {eta}")
    return "\n".join([*lines, "", summary])


COMMANDS = [train_command, status_command]
