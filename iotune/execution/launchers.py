"""Launchers turn "run this program on N ranks" into an argv. They never execute anything.

One base class and a registry by name (the config's ``system.launcher``):

- ``mpiexec``: MPICH's (Hydra) ``mpiexec -n N``; Open MPI's when detected, with
  ``--oversubscribe`` and, as root, ``--allow-run-as-root``.
- ``srun``: Slurm, ``srun -n N [-N nodes] --mpi=pmi2``.
- ``template``: a user string such as ``"aprun -n {ranks} {command}"`` with the fields
  ``{ranks}``, ``{nodes}``, ``{ranks_per_node}`` and ``{command}``.
"""

from __future__ import annotations

import os
import shlex
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

from iotune.errors import ConfigError, LaunchError
from iotune.execution.slurm import srun_argv
from iotune.preload.mpi_flavour import detect_mpi_flavour


@dataclass(frozen=True)
class LaunchRequest:
    """What to run where: ``ranks`` MPI processes on ``nodes`` nodes (None: launcher decides)."""

    ranks: int
    command: tuple[str, ...]
    nodes: int | None = None


class Launcher(ABC):
    """Builds the argv that starts an MPI program; holds no state about runs."""

    name: str = ""

    @abstractmethod
    def argv(self, request: LaunchRequest) -> list[str]:
        """The complete command line for ``request``."""


_REGISTRY: dict[str, Callable[..., Launcher]] = {}


def register_launcher(name: str) -> Callable[[type[Launcher]], type[Launcher]]:
    """Class decorator: make a launcher available under ``name`` in configs."""

    def wrap(cls: type[Launcher]) -> type[Launcher]:
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return wrap


def known_launchers() -> list[str]:
    return sorted(_REGISTRY)


def make_launcher(name: str, template: str | None = None,
                  where: str = "system.launcher") -> Launcher:
    """The launcher registered as ``name``; ConfigError listing the known ones otherwise."""
    if name not in _REGISTRY:
        raise ConfigError(
            f"{where}: unknown launcher '{name}'; known launchers: {', '.join(known_launchers())}"
        )
    if name == "template":
        section = where.rsplit(".", 1)[0]
        return TemplateLauncher(template or "", where=section + ".launcher_template")
    return _REGISTRY[name]()


@register_launcher("mpiexec")
class MpiexecLauncher(Launcher):
    """``mpiexec -n N``; Open MPI flags are added only when Open MPI is detected."""

    def __init__(self, flavour: str | None = None, is_root: bool | None = None) -> None:
        self._flavour = flavour
        self._is_root = is_root

    @property
    def flavour(self) -> str:
        if self._flavour is None:
            self._flavour = detect_mpi_flavour()
        return self._flavour

    def argv(self, request: LaunchRequest) -> list[str]:
        argv = ["mpiexec", "-n", str(request.ranks)]
        if self.flavour == "openmpi":
            argv.append("--oversubscribe")
            is_root = os.geteuid() == 0 if self._is_root is None else self._is_root
            if is_root:
                argv.append("--allow-run-as-root")
        return argv + list(request.command)


@register_launcher("srun")
class SrunLauncher(Launcher):
    """Slurm's ``srun``; inside an allocation it sizes the step to the request."""

    def argv(self, request: LaunchRequest) -> list[str]:
        return srun_argv(request.ranks, request.command, nodes=request.nodes)


@register_launcher("template")
class TemplateLauncher(Launcher):
    """A user's command template, e.g. ``"aprun -n {ranks} -N {ranks_per_node} {command}"``."""

    FIELDS = ("ranks", "nodes", "ranks_per_node", "command")

    def __init__(self, template: str = "", where: str = "system.launcher_template") -> None:
        if "{command}" not in template:
            raise ConfigError(
                f"{where}: {template!r} must contain {{command}} "
                f"(fields: {', '.join('{' + f + '}' for f in self.FIELDS)})"
            )
        try:
            template.format(ranks=1, nodes=1, ranks_per_node=1, command="x")
        except (KeyError, IndexError, ValueError) as exc:
            raise ConfigError(f"{where}: {template!r} has an unknown or bad field: {exc}") from None
        self.template = template

    def argv(self, request: LaunchRequest) -> list[str]:
        nodes = request.nodes or 1
        per_node = -(-request.ranks // nodes)
        text = self.template.format(
            ranks=request.ranks, nodes=nodes, ranks_per_node=per_node,
            command=shlex.join(request.command),
        )
        try:
            return shlex.split(text)
        except ValueError as exc:
            raise LaunchError(f"launcher template gives an unparsable command: {exc}") from None
