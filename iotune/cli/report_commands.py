"""``iotune report``: figures, CSV tables and a self-contained HTML page from a store."""

from __future__ import annotations

from pathlib import Path

import click

from iotune.cli.common import config_option, force_option, in_use
from iotune.cli.numbers import BoundedInt
from iotune.config import Config, default_config_path, load_config
from iotune.errors import ConfigError
from iotune.execution.outputs import check_output_dir
from iotune.settings.bounds import MAX_SPACE
from iotune.ui.output import progress


def _config(config_path: Path | None) -> Config | None:
    """``-c`` or the default config if one exists; a report needs none."""
    path = config_path or default_config_path()
    return load_config(path) if path is not None else None


def _check_a_production_journal(store: Path, kernel: str | None) -> None:
    """ConfigError for ``--kernel`` on a production journal: its jobs ran a campaign's
    application, not a kernel (the report shows its campaigns, labelled as production)."""
    from iotune.production.jobs import is_journal
    from iotune.store import Store

    if kernel and is_journal(Store(store)):
        raise ConfigError(f"--kernel: {store} is a production journal: its jobs ran a "
                          "campaign's application, not a kernel; the report shows every "
                          "campaign")


@click.command("report")
@config_option
@click.option("--store", "store_path", type=click.Path(path_type=Path),
              help="Store to read: its tune runs and its 'iotune probe' rounds (default: the "
                   "config's, else ./iotune-store.jsonl; not needed with --trace or "
                   "--darshan alone).")
@click.option("--tuned", "tuned_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Tuned YAML from 'iotune tune -o': shown first, and the parameter effects "
                   "are drawn around its settings.")
@click.option("--kernel", help="Kernel to report on (default: the tuned file's, the config's, "
                               "or the store's only kernel).")
@click.option("-o", "--output", "outdir", type=click.Path(path_type=Path),
              default=Path("iotune-report"), show_default=True,
              help="Directory for index.html, the figures and the CSV tables: new, empty or "
                   "an earlier report (it holds manifest.json).")
@force_option
@click.option("--format", "fmt", type=click.Choice(["png", "svg"]), default="png",
              show_default=True, help="Image format of the figures.")
@click.option("--top", type=BoundedInt(1, MAX_SPACE), default=20, show_default=True,
              help="Configurations per top-configurations figure.")
@click.option("--probe-backend", metavar="BACKEND",
              help="Storage-state figures from the probe rounds of this backend (probe: "
                   "measured, sim: simulated); needed when the store holds both.")
@click.option("--folds", type=BoundedInt(2), default=5, show_default=True,
              help="k of the k-fold cross-validation behind the classifier accuracy "
                   "boxplots and ROC curves.")
@click.option("--trace", "trace_path", type=click.Path(dir_okay=False, path_type=Path),
              help="A DXT trace (Darshan log with DXT records, or darshan-dxt-parser text): "
                   "the I/O phase timeline, estimated against measured time. Needs "
                   "--characterization.")
@click.option("--characterization", "characterization_path",
              type=click.Path(dir_okay=False, path_type=Path),
              help="Characterisation YAML from 'iotune characterize': the bandwidths the "
                   "phase estimate of --trace uses.")
@click.option("--darshan", "darshan_paths", multiple=True,
              type=click.Path(dir_okay=False, path_type=Path), metavar="LOG",
              help="A Darshan log for the cosine-similarity heatmap across applications; "
                   "repeat for each log (at least two, or one with --proxy).")
@click.option("--proxy", "proxy_path", type=click.Path(dir_okay=False, path_type=Path),
              help="A proxy YAML from 'iotune proxy': its kernel configuration's signature "
                   "(simulated) joins the heatmap of the --darshan logs.")
@click.option("--no-color", is_flag=True, help="Plain text tables, no progress styling.")
def report_command(config_path: Path | None, store_path: Path | None, tuned_path: Path | None,
                   kernel: str | None, outdir: Path, force: bool, fmt: str, top: int,
                   probe_backend: str | None, folds: int, trace_path: Path | None,
                   characterization_path: Path | None, darshan_paths: tuple[Path, ...],
                   proxy_path: Path | None, no_color: bool) -> None:
    """Write figures, CSV tables and an HTML page about tunes, probes and logs.

    From the store's tune runs, per tuned scale: the top configurations with predicted and
    measured write times (the paper's Figures 2-4) and the speedups over the default (its
    Table 3); the model's predictions against measurements, its terms and selection steps;
    the search progress; and the predicted effect of each setting. Predictions come from
    the model refitted on the store's training data.

    From the store's 'iotune probe' rounds (a store of probes only will do): the latency
    histogram with the two fitted log-normal components, classifier accuracy boxplots and
    ROC curves, and the prediction-guided placement replayed over the rounds (Wan et al.).
    With --trace and --characterization: the I/O phase timeline (Mendez et al.). With
    --darshan logs: their cosine-similarity heatmap (Rajesh et al.).

    Every figure title starts with Measured, Simulated or Replayed, and every caption
    carries that label.

    \b
    Examples:
      iotune report -c hopper.yaml --tuned tuned.yaml
      iotune report --store iotune-store.jsonl -o report --format svg
      iotune report --store probes.jsonl --folds 4 -o states
      iotune report --trace app.darshan --characterization chars.yaml \\
                    --darshan app.darshan --darshan ior.darshan --proxy proxy.yaml
    """
    from iotune.store import Store

    config = _config(config_path)
    named = store_path or (config.store if config is not None else None)
    if named is not None:
        Store(named)  # refuses a named pipe or device before the plotting libraries load

    from iotune.report import build_report, print_report
    from iotune.report.papers import PaperInputs

    papers = PaperInputs(darshan_logs=tuple(darshan_paths), proxy=proxy_path,
                         trace=trace_path, characterization=characterization_path,
                         probe_backend=probe_backend, folds=folds)
    store: Path | None = store_path or (config.store if config is not None
                                        else Path("iotune-store.jsonl"))
    if store_path is None and papers.without_store and store is not None and \
            not store.exists():
        store = None
    if store is not None:
        _check_a_production_journal(store, kernel)
    inputs = {"the tuned file": tuned_path, "the trace": trace_path,
              "the characterisation": characterization_path, "the proxy file": proxy_path,
              **{f"the Darshan log {log}": log for log in darshan_paths}}
    check_output_dir(outdir, option="-o", marker="manifest.json", force=force,
                     in_use=in_use(config, store=store, inputs=inputs))
    report = build_report(store, outdir, config=config, tuned_path=tuned_path, kernel=kernel,
                          fmt=fmt, top=top, papers=papers,
                          progress=lambda m: progress(f"iotune: {m}"))
    print_report(report, no_color=no_color)
    progress(f"iotune: wrote {report.html_path} ({len(report.figures)} figures, "
             f"{len(report.tables)} tables as CSV in {report.outdir})")


COMMANDS = [report_command]
