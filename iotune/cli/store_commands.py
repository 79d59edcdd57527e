"""``iotune store``: check a store line by line and repair it; and the warning every command
gives once when a store's reader skipped lines (:mod:`iotune.store.damage`)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from iotune.cli.common import config_option, resolve_config
from iotune.store import Store
from iotune.store.damage import Damage, line_list, on_damage
from iotune.ui.output import progress

#: Journals already warned about when no click context is active (library use).
_told: set[str] = set()


@on_damage
def warn_once(journal: Path, label: str, damage: Damage) -> None:
    """One ``iotune: warning:`` line per journal and command naming the skipped lines."""
    context = click.get_current_context(silent=True)
    told: set[str] = (context.find_root().meta.setdefault("iotune.damage_told", set())
                      if context is not None else _told)
    key = f"{label}:{journal.resolve()}"  # one journal named two ways is warned about once
    if key in told:
        return
    told.add(key)
    progress(f"iotune: warning: {label} {journal}: {damage.summary()}; run 'iotune store "
             "check' for details")


@click.group("store")
def store_group() -> None:
    """Check and repair a measurement store."""


@store_group.command("check")
@config_option
@click.option("--store", "store_path", type=click.Path(path_type=Path),
              help="Store to check (default: the config's).")
@click.option("--repair", is_flag=True,
              help="Move damaged lines, duplicate records and an incomplete last line to a "
                   "side file beside the journal (<journal>.rejected-<time>.jsonl, with their "
                   "line numbers) and rewrite the journal with the other lines, in order. "
                   "Nothing is deleted. Only while no iotune process writes the store.")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table",
              show_default=True, help="Output format on stdout.")
def check_command(config_path: Path | None, store_path: Path | None, repair: bool,
                  fmt: str) -> None:
    """Read every line of a store and its claims; list the lines readers skip.

    Exit status 0 when every line is a record and no record is duplicated (or, with
    --repair, once the bad lines were moved aside), 1 when damage was found and left.

    \b
    Example:
      iotune store check --store iotune-store.jsonl
      iotune store check --store iotune-store.jsonl --repair
    """
    from iotune.store.check import check_store, repair_store

    store = Store(store_path if store_path is not None else resolve_config(config_path).store)
    if repair:
        checks, moved = repair_store(store.check_writable())
    else:
        checks, moved = check_store(store), []
    damaged = any(check.bad for check in checks)
    if fmt == "json":
        click.echo(json.dumps({"checks": [c.to_json() for c in checks],
                               "moved": [{"journal": str(m.journal), "side_file": str(m.side_file),
                                          "lines": [b.number for b in m.lines]} for m in moved]},
                              indent=2))
    else:
        for check in checks:
            for bad in check.bad:
                click.echo(f"{check.label} {check.journal}: line {bad.number}: {bad.reason}")
        for check in checks:
            click.echo(check.summary())
    for m in moved:
        progress(f"iotune: moved {len(m.lines)} line{'s' if len(m.lines) != 1 else ''} "
                 f"({line_list([b.number for b in m.lines])}) of {m.journal} to {m.side_file}")
    if damaged and not repair:
        progress("iotune: damage found; 'iotune store check --repair' moves the bad lines to "
                 "a side file")
        raise SystemExit(1)


COMMANDS = [store_group]
