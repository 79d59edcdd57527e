"""``iotune knowledge``: build a facility's knowledge base, show it, check it
(:mod:`iotune.knowledge`; docs/knowledge.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from iotune.ui.output import progress, render_table


@click.group("knowledge")
def knowledge_group() -> None:
    """Build, show and check a facility's knowledge base (what its systems measured)."""


@knowledge_group.command("build")
@click.argument("sources", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("-o", "--output", "out", required=True, type=click.Path(path_type=Path),
              help="The knowledge base file to make, or to add to (replaced atomically).")
@click.option("--label-sources", is_flag=True,
              help="Keep each source's file name (not its path) in the base; without it "
                   "no name or path is kept.")
def build_command(sources: tuple[Path, ...], out: Path, label_sources: bool) -> None:
    """Add the runs of SOURCES to the knowledge base OUTPUT.

    SOURCES are replay CSV landscapes (each with its FILE.workload.yaml sidecar), iotune
    stores, production journals, and folders of them (walked for *.csv with a sidecar
    and *.jsonl). A second build adds only what is new. Nothing but systems, workload
    descriptors, settings, times and provenance is kept: no command line, path,
    environment, user or host name.

    \b
    Example:
      iotune knowledge build /data/landscapes stores/ -o site.kb
    """
    from iotune.knowledge.build import build

    report = build(sources, out, labels=label_sources, note=progress)
    for line in report.lines():
        click.echo(line)


@knowledge_group.command("show")
@click.argument("base", type=click.Path(path_type=Path))
@click.option("--system", "system", default=None, metavar="NAME",
              help="Show only this system's workloads and sources.")
def show_command(base: Path, system: str | None) -> None:
    """Summarise a knowledge base: systems, workloads, sources, what wins where."""
    from iotune.errors import ConfigError
    from iotune.knowledge.summary import summarise

    if system is not None and not system.strip():
        raise ConfigError("--system: an empty name; give a system's name (as 'iotune "
                          "knowledge show BASE' lists them)")
    heading, tables = summarise(base, system)
    click.echo(heading)
    for table in tables:
        click.echo(f"\n{table.title}")
        click.echo(render_table(table.rows))


@knowledge_group.command("check")
@click.argument("base", type=click.Path(path_type=Path))
def check_command(base: Path) -> None:
    """Verify a knowledge base: its format, tables, columns and values.

    Prints 'ok: ...' and exits 0, or one line per problem and exits 1.
    """
    from iotune.knowledge.check import check_base

    ok, problems = check_base(base)
    if problems:
        for line in problems:
            click.echo(line)
        sys.exit(1)
    click.echo(ok)


COMMANDS = [knowledge_group]
