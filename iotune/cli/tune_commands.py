"""``iotune tune`` and ``iotune apply``."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import click
import yaml

from iotune.apply import FORMATS as APPLY_FORMATS
from iotune.apply import OutputDirectory, default_lines, load_tuned, render
from iotune.backends import backend_class, make_backend
from iotune.cli.common import (
    backend_options,
    bandwidth_text,
    check_job_script_options,
    command_options,
    config_option,
    force_option,
    format_option,
    in_use,
    job_script_options,
    parse_assignments,
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
from iotune.cli.knowledge_option import chosen_knowledge, tune_priors
from iotune.cli.numbers import BoundedInt
from iotune.cli.verdicts import tune_verdicts
from iotune.config import Config
from iotune.errors import ConfigError, DataError
from iotune.execution import interrupt
from iotune.execution.outputs import InUse, check_output_file, write_output
from iotune.model.trust import NO_PREDICTION, prediction_warning
from iotune.printable import Plain, Word, Words, one_line, printed
from iotune.settings.bounds import MAX_CORES, MAX_PLAN_RUNS
from iotune.settings.values import describe_settings
from iotune.store import Store
from iotune.strategies import strategy_help
from iotune.strategies.portfolio import allocation_text
from iotune.strategies.racing import CONFIDENCE
from iotune.train.jobscript import seconds_per_run, write_job_script
from iotune.tune import TuneResult, tune
from iotune.tune.jobscript import estimated_runs, tune_job_script
from iotune.tune.merged import members
from iotune.tune.table import Row, prediction_errors, row_document, table_rows
from iotune.tune.target import with_target
from iotune.ui.output import emit, progress, render_pairs, render_table, to_plain
from iotune.ui.terminal import make_progress


@click.command("tune", epilog="Strategies and their options:\n\n" + strategy_help())
@config_option
@click.option("--kernel", "kernel_name",
              help="Kernel to tune (vpic, ior) or a proxy file from 'iotune proxy' "
                   "(default: the config's kernel).")
@command_options
@click.option("--cores", type=BoundedInt(1, MAX_CORES),
              help="Target scale (ranks); required unless a proxy file gives them.")
@click.option("--strategy", help="portfolio (default), model, exhaustive, random, genetic "
                                 "or tpe.")
@click.option("--budget", type=BoundedInt(1, MAX_PLAN_RUNS),
              help="Configurations to evaluate at most at the target scale.")
@click.option("--option", "options", multiple=True, metavar="NAME=VALUE",
              help="A strategy option, e.g. --option top_k=10 --option population=20.")
@backend_options
@click.option("--launcher", type=click.Choice(["mpiexec", "srun", "template"]),
              help="Override the config's launcher (inside Slurm the default is srun).")
@click.option("--fresh", is_flag=True, help="Measure again instead of reusing earlier tune runs.")
@click.option("--knowledge", "knowledge", metavar="KB",
              help="A knowledge base (iotune knowledge build): its noise for this system "
                   "and the configurations that won for similar workloads are raced first; "
                   "only this workload's runs confirm. 'none' for none. Default: the "
                   "config's tune.knowledge, else $IOTUNE_KNOWLEDGE (docs/knowledge.md).")
@click.option("--retry-failed", is_flag=True,
              help="Measure again the configurations whose earlier tune runs failed (by "
                   "default a recorded failure is reused as the answer).")
@click.option("--state-aware/--no-state-aware", default=None,
              help="Probe the storage state before each run, repeat runs made while it was "
                   "busy and rank on idle-state runs (default: the config's tune.state_aware).")
@target_option()
@click.option("-o", "--output", type=click.Path(path_type=Path),
              help="Write the tuned configuration YAML here (checked before anything runs; "
                   "replaces an earlier tuned file, never the store or the config).")
@force_option
@click.option("--emit-sbatch", "sbatch_path", type=click.Path(path_type=Path),
              help="Write a Slurm job script that runs this tune (the same options) on "
                   "--cores ranks, and exit; the job requeues itself at its time limit and "
                   "goes on reusing its runs (replaces an earlier script, never the store "
                   "or the config).")
@job_script_options
@click.option("--no-color", is_flag=True, help="Plain progress lines, no progress bar.")
@format_option("table", ("table", "json", "yaml"))
def tune_command(config_path: Path | None, kernel_name: str | None,
                 app_command: str | None, metric: str | None, cores: int | None,
                 strategy: str | None, budget: int | None, options: tuple[str, ...],
                 backend_name: str | None, sim_system: str | None, noise: float | None,
                 replay_data: Path | None,
                 launcher: str | None, fresh: bool, knowledge: str | None,
                 retry_failed: bool,
                 state_aware: bool | None, target: str | None, output: Path | None,
                 force: bool, sbatch_path: Path | None, partition: str | None,
                 account: str | None, time_limit: str | None, no_color: bool,
                 fmt: str) -> None:
    """Find the fastest configuration at one scale: baseline, search, race, report.

    Measure the default configuration, search the candidates at --cores ranks under the
    budget, race the leaders against the default, and report the best with its speedup
    and interval (the default when nothing beats it with confidence). The default
    'portfolio' search gives each run to the proposer whose predictions have held up best:
    the paper's model (fitted on the store's training data and this search), the trained
    scales' shape, TPE, the best run's neighbourhood, or space-filling.

    \b
    Examples:
      iotune tune --kernel vpic --cores 2048 -o tuned.yaml
      iotune apply tuned.yaml
      iotune tune --kernel vpic --cores 2048 -o tuned.yaml --emit-sbatch tune.sbatch
      sbatch tune.sbatch
    """
    check_job_script_options(sbatch_path, partition=partition, account=account,
                             time_limit=time_limit)
    if output is not None:  # printed in the 'iotune apply' line to run next
        one_line(str(output), "-o")
    config = with_slurm_launcher(resolve_config(config_path), launcher)
    config = with_backend(config, backend_name, sim_system, noise, replay_data, cores=cores)
    config, proxy_ranks = with_kernel(config, kernel_name)
    config = with_command(config, app_command, metric)
    config = with_target(config, target)
    cores = cores or proxy_ranks
    if cores is None:
        raise ConfigError("--cores: missing; give the target scale in ranks")
    chosen_knowledge(knowledge, config)  # a bad knowledge base is refused before anything runs
    guard = in_use(config, inputs={"the proxy file": _proxy_path(kernel_name)})
    if output is not None:
        check_output_file(output, "tuned", option="-o", in_use=guard, force=force)
    store = Store(config.store).check_writable()
    if sbatch_path is not None:
        runs = estimated_runs(config, strategy, budget, parse_assignments(options, "--option"))
        _write_tune_script(sbatch_path, config, cores, runs, output, guard, force=force,
                           fresh=fresh, partition=partition, account=account,
                           time_limit=time_limit)
        return
    priors = tune_priors(knowledge, config, cores)
    backend = make_backend(config)
    remove_orphaned_runs(backend)
    started = time.monotonic()
    try:
        with interrupt.handling_signals(), make_progress(None, "tune", no_color=no_color) as bar:
            result = tune(config, backend, store, kernel=config.kernel.name,
                          cores=cores, strategy=strategy, budget=budget,
                          strategy_options=parse_assignments(options, "--option"), fresh=fresh,
                          progress=lambda m: bar.log(f"iotune: {m}"), state_aware=state_aware,
                          retry_failed=retry_failed, priors=priors)
    except interrupt.Interrupted as stop:
        progress(f"iotune: tune stopped by {stop.name}; the runs finished so far are in "
                 f"{store.path} and the run in flight was discarded; rerun the same command "
                 f"to continue: it reuses them{requeue_hint()} (exit status {stop.exit_status})")
        sys.exit(stop.exit_status)
    _check_something_ran(result)
    tuned = result.to_tuned()
    if result.model is not None:
        stats = result.model.stats
        warning = prediction_warning(stats.cv_rms_relative_error if stats else None)
        if warning:
            progress(f"iotune: warning: {warning}")
    if output is not None:
        write_output(output, yaml.safe_dump(to_plain(tuned), sort_keys=False), "tuned",
                     option="-o", in_use=guard, force=force)
        progress(printed("iotune: wrote {path}; job-script lines: iotune apply {word}",
                         path=Plain(output, "-o"), word=Word(str(output), "-o")))
    if fmt == "table":
        emit(None, fmt, text=_tune_text(result))
    else:
        emit({**tuned, "best": tuned["best_found"], "runs": result.runs,
              "rows": [row_document(result, row) for row in table_rows(result)]}, fmt)
    if result.budget_to_decide is not None:
        command = continue_command(click.get_current_context(), result.budget_to_decide)
        progress(f"iotune: undecided: about {result.choice.runs_to_decide} more runs would "
                 f"decide; to continue, reusing every run so far: {command}")
    progress(f"iotune: tune took {time.monotonic() - started:.0f} s")


def _write_tune_script(sbatch_path: Path, config: Config, cores: int, runs: int | None,
                       output: Path | None, guard: InUse, *, force: bool, fresh: bool,
                       **slurm: str | None) -> None:
    """Write the job script of ``tune --emit-sbatch`` (:func:`tune_job_script`) running
    this tune with its options (:func:`job_command_words`); never over what the tune reads
    (``guard``) nor over its own tuned file ``output``. ``slurm``: ``partition``,
    ``account``, ``time_limit``."""
    script_guard = InUse((*guard.entries, *InUse.of([("the tuned file (-o)", output)]).entries))
    check_output_file(sbatch_path, "script", option="--emit-sbatch", in_use=script_guard,
                      force=force)
    command = [sys.executable, "-m", "iotune", "tune",
               *job_command_words(click.get_current_context(), config.path)]
    text = tune_job_script(config, command, Path.cwd(), cores, runs=runs, fresh=fresh,
                           per_run=seconds_per_run(Store(config.store), config.kernel.name),
                           **slurm)
    write_job_script(sbatch_path, text, in_use=script_guard, force=force)
    progress(submit_line(sbatch_path))


def continue_command(ctx: click.Context, budget: int) -> str:
    """The command line of this ``tune`` with ``--budget budget`` and without ``--fresh``
    (so the same tune goes on, reusing every run): every option given, as given."""
    words = ["iotune", "tune", *given_options(ctx, leave_out=("budget", "fresh"))]
    return printed("{command}", command=Words([*words, "--budget", str(budget)], "tune"))


#: Options of ``tune`` that the job script of ``--emit-sbatch`` does not pass on: its own,
#: ``--fresh`` (given to the first start alone) and ``-c`` (given resolved).
_NOT_IN_JOB = ("sbatch_path", "partition", "account", "time_limit", "fresh", "config_path")


def job_command_words(ctx: click.Context, config_path: Path | None) -> list[str]:
    """The options of this ``tune`` for its job script (see :data:`_NOT_IN_JOB`): ``-c``
    with the config's resolved path when it has one, so the job reads the same config
    whatever its environment, then every other option given, as given."""
    config = ["-c", str(config_path.resolve())] if config_path is not None else []
    return [*config, *given_options(ctx, leave_out=_NOT_IN_JOB)]


def given_options(ctx: click.Context, leave_out: tuple[str, ...]) -> list[str]:
    """The words of every option of this command given a value other than its default, as
    given, but those whose parameter names are in ``leave_out``."""
    words: list[str] = []
    for param in ctx.command.params:
        value = ctx.params.get(param.name or "")
        if (not isinstance(param, click.Option) or param.name in leave_out
                or value is None or value == () or value == param.default):
            continue
        flag = next((o for o in param.opts if o.startswith("--")), param.opts[0])
        if param.is_flag:
            if value is True:
                words.append(flag)
            elif param.secondary_opts:
                words.append(param.secondary_opts[0])
            continue
        for item in (value if param.multiple else (value,)):
            words += [flag, str(item)]
    return words


def _proxy_path(kernel_name: str | None) -> Path | None:
    """The proxy file ``--kernel`` names, else None."""
    from iotune.darshan import is_proxy_path

    return Path(kernel_name) if kernel_name and is_proxy_path(kernel_name) else None


def _check_something_ran(result: TuneResult) -> None:
    """DataError (no tuned file) when every configuration the search ran failed: a tuned
    file would recommend settings that were never seen to work, or the default as if it had
    been beaten fairly."""
    if result.evaluations and all(e.statistic is None for e in result.evaluations):
        first = next((f for e in result.evaluations for f in e.failures), "no time recorded")
        raise DataError(f"tune: every one of the {len(result.evaluations)} configurations "
                        f"run at {result.cores} rank{'' if result.cores == 1 else 's'} failed "
                        f"(first error: {first}); no tuned "
                        "file written; see 'iotune results --failed', fix the cause "
                        "and rerun with --retry-failed")


def _tune_text(result: TuneResult) -> str:
    label = backend_class(result.backend).label
    metric = result.metric
    lines = [f"Tuned {result.kernel} at {result.cores} ranks ({label}, {result.system}, "
             f"strategy {result.strategy}, target {result.target}: {metric.label}, "
             f"{metric.unit}, {metric.better} is better)",
             ""]
    rows = table_rows(result, limit=TABLE_ROWS)
    predicted = any(e.predicted is not None for e in result.evaluations)
    lines += [render_table([_row_cells(result, i, row, predicted)
                            for i, row in enumerate(rows, 1)]), ""]
    lines += _table_notes(result, rows, predicted)
    choice = result.choice
    summary: dict[str, Any] = {"default": _figure_text(result, result.default)}
    if result.best is not None and result.best is not result.default:
        summary["best found"] = _figure_text(result, result.best)
        summary["its settings"] = describe_settings(result.best.settings)
        twins = members(result.best)[1:]
        if twins:
            summary["its settings"] += ("; ran identically (the same settings in effect): "
                                        + "; ".join(describe_settings(e.settings)
                                                    for e in twins))
    shown = result.shown_speedup
    if shown is not None:
        summary["its speedup"] = _speedup_text(shown) + (
            f" (its {result.metric.unit} over the default's" if result.metric.higher_is_better
            else " (the default's typical time over its") + "; an estimate)"
        test = choice.speedup
        if test is not None and test.confident != shown.confident:
            # The decision's rank test and the estimate can say different things near 1x.
            summary["decided by"] = (f"the race's rank test, {_speedup_text(test)}: the "
                                     "recommendation follows the test, not the estimate")
    verified = result.verified
    summary["recommended"] = ("undecided: the default configuration stays until more "
                              "runs decide" if result.recommendation == "undecided" else
                              "the default configuration (nothing to change)"
                              if result.recommend_default else "the best found"
                              + (f", as {describe_settings(verified.settings)}"
                                 if verified.settings != result.recommended.settings else ""))
    summary["why"] = result.reason
    for name, why in result.ignored.items():
        summary[f"not in effect: {name}"] = f"{why}; searched no further, never recommended"
    for name, seen in verified.not_in_effect.items():
        if name not in result.ignored:
            summary[f"not in effect: {name}"] = (f"asked {seen['requested']}, in effect "
                                                 f"{seen['in_effect']}: {seen['why']}")
    if verified.unverified:
        summary["unverified"] = (describe_settings(verified.unverified) + ": the runs could "
                                 "not read these back, so they are not recommended (for a "
                                 "program, use the preload library; docs/mpi-libraries.md)")
    if choice.tied_with_runner_up and choice.runner_up is not None:
        summary["runner-up"] = (f"{describe_settings(choice.runner_up.settings)}: cannot be "
                                "told apart from the best at this confidence")
    budget = result.budget
    spent = f", budget {budget.spent}/{budget.total}" if budget.total else ""
    measured = result.configurations
    merged = (f" ({len(result.evaluations)} after merging those that ran identically)"
              if measured != len(result.evaluations) else "")
    summary["runs"] = (f"{result.runs} new, {result.reused} reused, {measured} "
                       f"configurations{merged}, {choice.race_runs} race runs{spent}")
    summary["noise"] = _noise_text(result)
    if result.reused:
        tunes = ", ".join(f"{n} from tune {t}" for t, n in sorted(result.reused_from.items()))
        summary["reused"] = f"{tunes}; only runs of the same source: {result.source}"
    if result.allocation is not None:
        summary["runs by proposer"] = allocation_text(result.allocation)
        transfer = result.allocation.get("transfer") or {}
        if transfer.get("scales"):
            rho = transfer.get("rank_correlation")
            summary["trained scales"] = (
                ", ".join(map(str, transfer["scales"])) + " ranks; their order at the target: "
                + ("not judged yet" if rho is None else f"rank correlation {rho:.2f}"))
    if result.model is not None:
        summary["model"] = result.model.formula()
    if result.knowledge is not None:
        summary["knowledge"] = result.knowledge.summary()
    lines.append(render_pairs(summary))
    verdicts = tune_verdicts(m.record for e in result.evaluations for m in e.measurements)
    if verdicts:
        lines += ["", "Settings not in effect or unverified in the tune's runs (as each run "
                  "read them back):", *(f"  {line}" for line in verdicts)]
    return "\n".join(lines)


#: Rows of the results table printed (the default's row is added when it falls below).
TABLE_ROWS = 10


def _row_cells(result: TuneResult, rank: int, row: Row, predicted: bool) -> dict[str, Any]:
    """One row of the printed table: rank, settings, the estimate and its interval in the
    metric's unit, the runs, the bandwidth at the estimate (a kernel, whose bytes are
    known) and, when the table has a ``predicted`` column, the prediction."""
    unit = result.metric.unit
    cells: dict[str, Any] = {
        "rank": rank, "settings": row.settings + (" (default)" if row.is_default
                                                  and row.settings != "default" else ""),
        unit: None if row.value is None else float(f"{row.value:.4g}"),
        f"{CONFIDENCE:.0%} interval": ("unknown" if row.interval is None else
                                        f"{row.interval[0]:.4g}-{row.interval[1]:.4g}"),
        "runs": row.runs if not row.failed else f"{row.runs} (+{row.failed} failed)"}
    if result.bytes_written is not None and row.value is not None:  # at the estimate
        cells["MiB/s"] = float(f"{result.bytes_written / 2**20 / row.value:.4g}")
    if predicted:
        cells[f"predicted {unit}"] = (row.predicted if not isinstance(row.predicted, float)
                                      else float(f"{row.predicted:.4g}"))
    return cells


def _table_notes(result: TuneResult, rows: list[Row], predicted: bool) -> list[str]:
    """What the table's figures are, and how far its predictions (when it has a
    ``predicted`` column) are from them."""
    metric = result.metric
    notes = [f"{metric.unit}: the estimate of each configuration's typical {metric.label} "
             "from its runs, shrunk towards the others' as the race ranks them (docs/"
             f"strategies.md), with a {CONFIDENCE:.0%} interval of that typical (median) "
             "value; best first, so row 1 is the best found"]
    if any("|" in row.settings for row in rows):
        notes.append("a|b: configurations that asked for different values but ran with the "
                     "same settings in effect, one row with the runs of each")
    if predicted:
        errors = prediction_errors(result, rows)
        shown = ("no row to compare" if errors.shown is None else
                 f"{errors.shown:.2f} RMS relative error against the estimates over "
                 f"{errors.rows} rows")
        cv = ("unknown" if errors.cv is None else f"{errors.cv:.2f} over its "
              f"{errors.training_rows} training rows")
        notes.append(f"predicted {metric.unit}: the model's prediction, made when the search "
                     f"chose the configuration, before its runs: {shown}. The final model's "
                     f"cross-validated RMS relative error ({cv}: every scale trained and "
                     "this search, terms chosen on all of them) measures the fit, not these "
                     "predictions")
        if errors.impossible:
            notes.append(f"{NO_PREDICTION}: the model predicted a time of zero or less "
                         f"({errors.impossible} row{'s' if errors.impossible > 1 else ''}), "
                         "which no run can take: its basis does not hold there")
    return [*notes, ""]


def _noise_text(result: TuneResult) -> str:
    """The noise assumed before the search (and where from) and the noise measured."""
    budget, measured = result.budget, result.choice.noise
    before = ("unknown before the search" if budget.noise is None else
              f"log spread {budget.noise:.2f} assumed before the search, from "
              f"{budget.noise_source}")
    after = ("unknown after it (nothing repeated that can vary)" if measured.sigma is None
             else f"{measured.sigma:.2f} pooled over the tune's repeated runs")
    return f"{before}; {after}; {budget.reserve} runs were kept to race"


def _speedup_text(gain: Any) -> str:
    if gain.low is None or gain.high is None:
        return f"{gain.value:.2f}x (interval unknown)"
    return (f"{gain.value:.2f}x ({CONFIDENCE:.0%} interval {gain.low:.2f}-{gain.high:.2f}x)")


def _figure_text(result: TuneResult, evaluation: Any) -> str:
    """A configuration's estimate and interval in the metric's unit, with its runs."""
    f = result.figures(evaluation)
    if f.get("status") == "failed":
        return "failed: " + "; ".join(f["errors"][:1])
    metric = result.metric
    found = result.estimates.get(evaluation.key)
    if found is None:
        return "no successful run"
    low_high = found.shown_interval(metric)
    interval = ("unknown" if low_high is None else
                f"{low_high[0]:.4g}-{low_high[1]:.4g} {metric.unit}")
    bandwidth = ("" if result.bytes_written is None else
                 bandwidth_text(result.bytes_written / 2**20 / found.time_s))
    return (f"{bandwidth}{metric.shown(found.time_s):.4g} {metric.unit} over "
            f"{f['repetitions']} runs ({CONFIDENCE:.0%} interval {interval})")


@click.command("apply")
@click.argument("tuned_path", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--shell", type=click.Choice(["bash"]), default="bash", show_default=True,
              help="Shell syntax of the printed lines.")
@click.option("--format", "fmt", type=click.Choice(list(APPLY_FORMATS)), default="auto",
              show_default=True,
              help="Which mechanism to print: auto (what the MPI of mpiexec reads), all, or "
                   "one by name.")
@click.option("--dir", "directory", default=None,
              help="Output directory for lfs setstripe: a path, with $NAME or ${NAME} "
                   "variables of the job's environment and quotes ('a b') allowed, nothing "
                   "else expanded (default: $OUTPUT_DIR, failing with a clear line when it "
                   "is not set).")
def apply_command(tuned_path: Path, shell: str, fmt: str, directory: str | None) -> None:
    """Print the job-script lines that apply a tuned configuration.

    The lines write the settings' files and define the shell function iotune_run, which
    gives the settings to the program's launch alone.

    \b
    Example:
      iotune apply tuned.yaml >> job.sh
      echo 'iotune_run srun ./app input.deck' >> job.sh
    """
    OutputDirectory(directory, "--dir").text()  # refused whatever the file recommends
    tuned = load_tuned(tuned_path)
    if not tuned["settings"] and not tuned["files"]:
        reason = f" ({tuned['reason']})" if tuned.get("reason") else ""
        progress(f"iotune: {tuned_path}: the default configuration is recommended{reason}; "
                 "nothing to change in the job script")
        click.echo(default_lines(tuned, python=fmt == "h5py"))
        return
    click.echo(render(tuned, fmt, directory=directory))


COMMANDS = [tune_command, apply_command]
