"""``--quick``: every benchmark script's smoke mode, a run of a few seconds.

A benchmark measures for minutes; ``--quick`` runs the same code on the smallest inputs,
so that ``tests/benchmarks/test_documented_commands.py`` can run every benchmark command
the docs name and check that it still works and prints its summary line. Numbers from a
quick run are not the documented figures.

Each script calls :func:`add_quick` on its parser and :func:`apply_quick` on the parsed
arguments with its small values: the options that make a run long (sizes, repetitions,
seeds, budgets) take them whatever the command line says, so a documented command stays
quick; the options given in ``if_default`` (a choice of what to run) take them only when
left at their default. Each script's ``SUMMARY`` is a regular expression
its output matches at the end of a run, quick or not (the line the docs show).
"""

from __future__ import annotations

import argparse
from typing import Any


def add_quick(parser: argparse.ArgumentParser, what: str) -> None:
    """Add ``--quick`` to ``parser``; ``what`` says what the quick run does."""
    parser.add_argument("--quick", action="store_true",
                        help=f"smoke run of a few seconds: {what} (not the documented "
                             "figures)")


def apply_quick(parser: argparse.ArgumentParser, args: argparse.Namespace,
                if_default: dict[str, Any] | None = None,
                **small: Any) -> argparse.Namespace:
    """With ``--quick``, set each option named in ``small`` to its small value, and each
    named in ``if_default`` that was left at its default to its value there; without
    ``--quick``, ``args`` unchanged."""
    if getattr(args, "quick", False):
        for name, value in small.items():
            setattr(args, name, value)
        for name, value in (if_default or {}).items():
            if getattr(args, name) == _parsed_default(parser, name):
                setattr(args, name, value)
    return args


def _parsed_default(parser: argparse.ArgumentParser, name: str) -> Any:
    """The default of option ``name`` as parsing gives it (argparse converts a string
    default through the option's ``type``)."""
    default = parser.get_default(name)
    for action in parser._actions:
        if action.dest == name and isinstance(default, str) and callable(action.type):
            return action.type(default)
    return default
