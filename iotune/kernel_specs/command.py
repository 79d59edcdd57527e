"""The command kernel: a user's own, unmodified MPI program (``kernel: {command: ...}``).

Its arguments are the program's command line and how to measure it (see
:mod:`iotune.execution.application`, which runs it with the settings injected). It has none of the
optional features: iotune cannot simulate a program it has not seen, nor know the Darshan
counters or the bytes it writes before it runs (the preload library measures the bytes).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from iotune.execution.application import Application, check_injectable, parse_application
from iotune.kernel_args import KernelParam
from iotune.kernel_specs.registry import register_kernel
from iotune.kernel_specs.spec import KernelFeatureError, KernelSpec
from iotune.settings.catalogue import Choice, FreeText
from iotune.settings.metrics import MATCHES, UNITS, Metric, command_metric

UNITS_CHOICES = tuple(UNITS)

NAME = "command"


@dataclass(frozen=True)
class CommandSpec(KernelSpec):
    """A user's program: ``command``, ``output_dir``, ``metric`` (with a regex metric's
    ``metric_label``, ``metric_unit`` and ``metric_match`` when not their defaults) and
    ``preload``."""

    def normalise_params(self, params: Mapping[str, Any], where: str = "kernel.args") -> dict:
        """The program's canonical arguments; ConfigError naming the key otherwise. Without
        ``command`` (a scale's overrides) the others are checked and returned alone."""
        base = where.rsplit(".", 1)[0] if where.endswith(".args") else where
        if "command" in params:
            return parse_application(dict(params), base).as_params()
        checked = parse_application({"command": "program", **params}, base).as_params()
        return {k: v for k, v in checked.items() if k != "command"}

    def application(self, params: Mapping[str, Any]) -> Application:
        return parse_application({k: v for k, v in params.items() if v != ""})

    def loads_preload(self, params: Mapping[str, Any]) -> bool:
        """Unless ``preload: no``."""
        return params.get("preload", "auto") != "no"

    def own_metric(self, params: Mapping[str, Any]) -> Metric:
        """The program's metric from its ``metric`` arguments (its wall time when absent)."""
        return command_metric(params)

    @property
    def knows_bytes(self) -> bool:
        return False

    def bytes_per_rank(self, params: Mapping[str, Any]) -> int:
        raise KernelFeatureError("kernel 'command' cannot know the bytes a user's program "
                                 "writes before it runs (the preload library measures them)")

    def check_settings(self, names: Iterable[str], where: str = "space") -> None:
        check_injectable(dict.fromkeys(names), where)


COMMAND = register_kernel(CommandSpec(
    NAME, "", "a user's own MPI program, run unmodified with the settings injected",
    (
        KernelParam("command", FreeText(), None, "the program's command line; {cores}, "
                    "{nodes} and {scratch} (its fresh output directory) are replaced"),
        KernelParam("output_dir", FreeText(), "", "a directory below the run directory to "
                    "make (and stripe) for the program's output"),
        KernelParam("metric", FreeText(), "wall", "wall, io_time or regex:PATTERN"),
        KernelParam("metric_label", FreeText(), "", "a regex metric's name, as printed"),
        KernelParam("metric_unit", Choice(choices=UNITS_CHOICES), "s",
                    "a regex metric's unit: s (lower is better) or MiB/s (higher is better)"),
        KernelParam("metric_match", Choice(choices=MATCHES), "last",
                    "which match of a regex metric counts: last or first"),
        KernelParam("preload", Choice(choices=("auto", "yes", "no")), "auto",
                    "load the preload library: auto, yes, no"),
    ),
))
