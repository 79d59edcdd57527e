"""``iotune report``: figures, CSV tables and a self-contained HTML page from a store."""

from __future__ import annotations

from pathlib import Path

import click

from iotune.cli.common import config_option
from iotune.config import Config, default_config_path, load_config
from iotune.output import progress


def _config(config_path: Path | None) -> Config | None:
    """``-c`` or the default config if one exists; a report needs none."""
    path = config_path or default_config_path()
    return load_config(path) if path is not None else None


@click.command("report")
@config_option
@click.option("--store", "store_path", type=click.Path(path_type=Path),
              help="Store to read (default: the config's, else ./iotune-store.jsonl).")
@click.option("--tuned", "tuned_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Tuned YAML from 'iotune tune -o': shown first, and the parameter effects "
                   "are drawn around its settings.")
@click.option("--kernel", help="Kernel to report on (default: the tuned file's, the config's, "
                               "or the store's only kernel).")
@click.option("-o", "--output", "outdir", type=click.Path(file_okay=False, path_type=Path),
              default=Path("iotune-report"), show_default=True,
              help="Directory for index.html, the figures and the CSV tables.")
@click.option("--format", "fmt", type=click.Choice(["png", "svg"]), default="png",
              show_default=True, help="Image format of the figures.")
@click.option("--top", type=click.IntRange(min=1), default=20, show_default=True,
              help="Configurations per top-configurations figure.")
@click.option("--no-color", is_flag=True, help="Plain text tables, no progress styling.")
def report_command(config_path: Path | None, store_path: Path | None, tuned_path: Path | None,
                   kernel: str | None, outdir: Path, fmt: str, top: int, no_color: bool) -> None:
    """Write figures, CSV tables and an HTML page about a store's tunes; print key tables.

    Per tuned scale: the top configurations with predicted and measured write times (the
    paper's Figures 2-4) and the speedups over the default (its Table 3); the model's
    predictions against measurements, its terms and selection steps; the search progress;
    and the predicted effect of each setting. Simulated and replayed data say so in every
    title. Predictions come from the model refitted on the store's training data.

    \b
    Examples:
      iotune report -c hopper.yaml --tuned tuned.yaml
      iotune report --store iotune-store.jsonl -o report --format svg
    """
    from iotune.report import build_report, print_report

    config = _config(config_path)
    store = store_path or (config.store if config is not None else Path("iotune-store.jsonl"))
    report = build_report(store, outdir, config=config, tuned_path=tuned_path, kernel=kernel,
                          fmt=fmt, top=top, progress=lambda m: progress(f"iotune: {m}"))
    print_report(report, no_color=no_color)
    progress(f"iotune: wrote {report.html_path} ({len(report.figures)} figures, "
             f"{len(report.tables)} tables as CSV in {report.outdir})")
