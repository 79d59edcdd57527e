"""The ``iotune`` entry point: the command group and the one place errors become exit codes."""

from __future__ import annotations

import importlib
import sys
from typing import Any, NoReturn

import click
import rich_click

from iotune import __version__
from iotune.errors import IotuneError
from iotune.execution.interrupt import INTERACTIVE_EXIT, Interrupted
from iotune.printable import escaped

#: The panels of ``iotune --help``, the main path first: each command's name in the order
#: shown. ``tests/cli/test_help_panels.py`` checks that every command is in exactly one.
PANELS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("Tune", ("doctor", "init", "run", "train", "status", "tune", "apply", "results",
              "report")),
    ("Production jobs", ("job",)),
    ("Your application", ("profile", "phases", "estimate", "match", "proxy",
                          "characterize")),
    ("Storage variability", ("probe", "states", "classify", "placement")),
    ("Model and data", ("fit", "predict", "store", "knowledge")),
)


#: The module of ``iotune.cli`` defining each command (in its ``COMMANDS``), imported only
#: when the command runs or the help lists it: ``iotune job start`` in a job script loads
#: the job commands, not the configs, strategies and backends of the others (about half a
#: second of every job's start).
COMMAND_MODULES: dict[str, str] = {
    **dict.fromkeys(("run", "results", "init"), "run_commands"),
    **dict.fromkeys(("train", "status"), "train_commands"),
    **dict.fromkeys(("tune", "apply"), "tune_commands"),
    **dict.fromkeys(("probe", "states", "classify", "placement"), "variability_commands"),
    **dict.fromkeys(("profile", "match", "proxy", "phases", "characterize", "estimate"),
                    "darshan_commands"),
    **dict.fromkeys(("fit", "predict"), "model_commands"),
    "report": "report_commands",
    "store": "store_commands",
    "job": "job_commands",
    "doctor": "doctor_commands",
    "knowledge": "knowledge_commands",
}


#: click's "no arguments: show the help" (``iotune``, ``iotune store``), a UsageError that
#: is not an error (click 8.2 and later).
_NO_ARGS_IS_HELP: tuple[type[Exception], ...] = tuple(
    filter(None, [getattr(click.exceptions, "NoArgsIsHelpError", None)]))


def _usage_error_line(exc: click.UsageError) -> NoReturn:
    """click's own checks (a bad --cores, an unknown option) in iotune's one error line,
    with where to read the rules; exits with click's status. A group called without
    arguments shows its help, as click does."""
    if isinstance(exc, _NO_ARGS_IS_HELP):
        exc.show()
        sys.exit(exc.exit_code)
    path = exc.ctx.command_path.split()[1:] if exc.ctx else []
    command = " ".join(["iotune", *path])
    click.echo(f"iotune: error: {escaped(exc.format_message())} (see '{command} "
               "--help')", err=True)
    sys.exit(exc.exit_code)


class IotuneGroup(rich_click.RichGroup):
    """Turns an IotuneError into one line on stderr and its exit code (traceback: --debug).

    Its help comes from rich-click, in the panels of :data:`PANELS`; its errors never do:
    a bad option of ``iotune`` itself is the same one line as a subcommand's.
    """

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            _usage_error_line(exc)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except IotuneError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                raise
            # one line even when the message quotes a value holding a newline
            click.echo(f"iotune: error: {escaped(str(exc))}", err=True)
            sys.exit(exc.exit_code)
        except click.UsageError as exc:
            _usage_error_line(exc)
        except Interrupted as stop:
            click.echo(f"iotune: stopped by {stop.name}; what was recorded before is kept, "
                       "the run in flight was discarded", err=True)
            sys.exit(stop.exit_status)
        except KeyboardInterrupt:
            click.echo("iotune: interrupted", err=True)
            sys.exit(INTERACTIVE_EXIT)


class LazyIotuneGroup(IotuneGroup):
    """The ``iotune`` group: its commands are those of :data:`COMMAND_MODULES`, each module
    imported when one of its commands is first asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*self.commands, *COMMAND_MODULES})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMAND_MODULES:
            module = importlib.import_module(f"iotune.cli.{COMMAND_MODULES[cmd_name]}")
            for command in module.COMMANDS:
                self.add_command(command)
        return super().get_command(ctx, cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]
                        ) -> tuple[str | None, click.Command | None, list[str]]:
        if args and args[0] not in COMMAND_MODULES:
            for name in COMMAND_MODULES:  # click suggests a name from the commands loaded
                self.get_command(ctx, name)
        return super().resolve_command(ctx, args)


def all_commands() -> dict[str, click.Command]:
    """Every command of ``iotune`` by name, all their modules imported."""
    ctx = click.Context(cli)
    found = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


#: How rich-click draws the help: a blank line under the first line, as click prints it.
HELP_STYLE = rich_click.RichHelpConfiguration(padding_helptext_first_line=(0, 0, 1, 0))


@rich_click.group(cls=LazyIotuneGroup, context_settings={"help_option_names": ["-h", "--help"]},
                  panels=[rich_click.RichCommandPanel(name, commands=list(commands))
                          for name, commands in PANELS])
@rich_click.rich_config(help_config=HELP_STYLE)
@click.version_option(__version__, prog_name="iotune")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Find fast parallel I/O settings (Lustre striping, MPI-IO hints, HDF5) for HPC codes.

    \b
    Typical session:
      iotune doctor                       check MPI, h5py, scratch and store here
      iotune init                         write a commented ./iotune.yaml
      iotune run --kernel vpic --cores 4  one real measurement
      iotune train                        measure a training design (batch job)
      iotune status                       how far a training campaign is
      iotune tune --kernel vpic --cores 4 model-guided search, tuned YAML
      iotune apply tuned.yaml             shell lines for a job script
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


def main() -> None:
    cli(prog_name="iotune")
