"""The command-line layer: a parser for MPI programs, its flags made from iotune's rows.

Every setting flag comes from the settings catalogue (:mod:`iotune.settings.catalogue`) and every
kernel argument from the kernel's rows (:mod:`iotune.kernel_args`), which the driver checks
configs with: a flag's value is parsed by the same rule, its default and help are those
rows', and a value the config rejects is rejected here with the same words. A bad value
ends the program with exit code 2 and one line on stderr naming the flag and the rule.
"""

from __future__ import annotations

import argparse
import os
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from iotune.kernel_args import KernelParam
from iotune.settings.catalogue import (
    SETTINGS,
    ByteSize,
    Choice,
    Count,
    Kind,
    Setting,
    SettingValueError,
    YesNo,
    settings_in_layer,
)

from .errors import EXIT_USAGE


def launcher_rank() -> int:
    """Rank of this process as told by the launcher's environment, without starting MPI.

    Used so that ``--help`` and argument errors print once, not once per rank. Returns 0
    when no known launcher variable is set (a plain ``python kernel.py`` run).
    """
    for name in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK"):
        value = os.environ.get(name)
        if value is not None and value.isdigit():
            return int(value)
    value = os.environ.get("SLURM_PROCID")
    if value is not None and value.isdigit() and "SLURM_STEP_ID" in os.environ:
        return int(value)
    return 0


class KernelArgumentParser(argparse.ArgumentParser):
    """argparse parser that prints only on rank 0 and reports errors in one line.

    The description is wrapped to 88 columns; the epilog is printed as written.
    """

    def __init__(self, *, description: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(description=textwrap.fill(description, width=88), **kwargs)

    def _print_message(self, message: str, file: Any = None) -> None:
        if launcher_rank() == 0:
            super()._print_message(message, file)

    def error(self, message: str) -> NoReturn:
        """Print ``<prog>: error: <message>`` once and exit with code 2."""
        if launcher_rank() == 0:
            sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(EXIT_USAGE)


def kind_type(kind: Kind) -> Callable[[str], Any]:
    """argparse ``type=`` parsing with a catalogue kind; its rule becomes the error."""

    def convert(text: str) -> Any:
        try:
            return kind.parse(text)
        except SettingValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    convert.__name__ = kind.name
    return convert


def count(minimum: int = 1) -> Callable[[str], int]:
    """argparse ``type=`` for an integer of at least ``minimum``."""
    return kind_type(Count(minimum))


def byte_size(minimum: int = 1) -> Callable[[str], int]:
    """argparse ``type=`` for a byte size of at least ``minimum`` (``4MiB``, ``64K``, ...)."""
    return kind_type(ByteSize(minimum))


def choice_word(words: Sequence[str]) -> Callable[[str], str]:
    """argparse ``type=`` accepting exactly one of ``words`` (case-insensitive)."""
    return kind_type(Choice(choices=tuple(words)))


yes_no: Callable[[str], bool] = kind_type(YesNo())


def add_setting(group: Any, setting: Setting, help_suffix: str = "") -> None:
    """Add the flag of one catalogue setting (``cb_nodes`` -> ``--cb-nodes N``)."""
    applied = []
    if setting.hint:
        applied.append(f"hint {setting.hint}")
    if setting.lfs_option:
        applied.append(f"lfs setstripe {setting.lfs_option} on Lustre")
    how = f" ({'; '.join(applied)})" if applied else ""
    group.add_argument(setting.flag, type=kind_type(setting.type), metavar=setting.type.metavar,
                       help=setting.help + how + help_suffix)


def add_layer(group: Any, layer: str) -> None:
    """Add the flags of every catalogue setting of ``layer``."""
    for setting in settings_in_layer(layer):
        add_setting(group, setting)


def add_param(group: Any, param: KernelParam, *, given_only: bool = False) -> None:
    """Add the flag of one kernel argument (``particles_per_rank`` ->
    ``--particles-per-rank N``), defaulting to its program default, which the help states.

    A bare argument is a flag without a value. With ``given_only`` the flag defaults to
    None, so the run can tell a given value from the default; :func:`param_value` then
    reads it.
    """
    if param.bare:
        group.add_argument(param.flag, action="store_true", help=param.help)
        return
    kind = param.type
    default = param.program_default
    group.add_argument(param.flag, type=kind_type(kind), default=None if given_only else default,
                       metavar="|".join(kind.choices) if kind.choices else kind.metavar,
                       help=f"{param.help} (default {kind.describe(default)})")


def add_params(group: Any, params: Sequence[KernelParam]) -> None:
    """Add the flags of ``params``, in order."""
    for param in params:
        add_param(group, param)


def param_value(args: argparse.Namespace, param: KernelParam) -> Any:
    """The value of ``param`` on the command line, or its program default when not given."""
    value = getattr(args, param.name)
    return param.program_default if value is None else value


def given_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The catalogue settings given on the command line (canonical values), absent ones left
    out, in catalogue order."""
    return {name: getattr(args, name) for name in SETTINGS if getattr(args, name, None) is not None}


def check_requirements(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """``parser.error`` when a setting is given without the one it needs."""
    given = given_settings(args)
    for name in given:
        setting = SETTINGS[name]
        if setting.requires and setting.requires not in given:
            parser.error(f"{setting.flag} needs {SETTINGS[setting.requires].flag} "
                         f"({setting.requires_why})")
