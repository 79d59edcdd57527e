"""The ``mpi`` backend: runs a kernel program for real through the configured launcher."""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.backends.base import Backend, RunRequest, register_backend
from iotune.config import Config
from iotune.execution.application import Application, describe_application, run_application
from iotune.execution.fsinfo import filesystem_of
from iotune.execution.launchers import Launcher, LaunchRequest, make_launcher
from iotune.execution.rundirs import OWNER_ENV, Cleanup, owner, remove_orphans
from iotune.execution.runner import run_command
from iotune.execution.scratch import check_scratch
from iotune.kernel_specs import get_kernel, kernel_argv
from iotune.settings.in_effect import setting_effects
from iotune.settings.values import setting_argv
from iotune.store import now_iso
from iotune.store.source import describe_source

#: Prints the MPI library's version line; MPI_Get_library_version may be called before
#: MPI_Init, and mpi4py then does not initialise MPI.
_LIBRARY_PROBE = ("import mpi4py; mpi4py.rc.initialize = False; from mpi4py import MPI; "
                  "print(MPI.Get_library_version())")


@register_backend
class MpiBackend(Backend):
    """Real measurements: ``launcher argv + python kernel.py args + setting flags``."""

    name = "mpi"
    provenance = "measured"
    label = "measured"
    models = "real runs"
    probes = True
    times_reads = True
    reads_back = True

    def __init__(self, config: Config, launcher: Launcher | None = None) -> None:
        self.config = config
        system = config.system
        self.launcher = launcher or make_launcher(system.launcher, system.launcher_template)
        self.python = system.python or sys.executable
        self.fs_type, _ = filesystem_of(system.scratch)

    def source(self) -> str:
        system = self.config.system
        return describe_source(self.name, system.name, fs_type=self.fs_type,
                               mpi_library=self.mpi_library, mpi_io=system.mpi_io)

    @functools.cached_property
    def mpi_library(self) -> str | None:
        """The first line of ``MPI_Get_library_version`` of the MPI the kernels' Python
        loads (as the kernels record it), asked once without starting MPI (so no launcher
        or PMI is needed); None when it cannot be asked."""
        try:
            done = subprocess.run(
                [self.python, "-c", _LIBRARY_PROBE], capture_output=True, text=True,
                timeout=60, env={**os.environ, **self.config.system.run_environment()})
        except (OSError, subprocess.TimeoutExpired):
            return None
        line = done.stdout.strip().splitlines()[0] if done.stdout.strip() else ""
        return " ".join(line.split()) if done.returncode == 0 and line else None

    def command(self, request: RunRequest) -> list[str]:
        """The exact command line that measures ``request``."""
        spec = get_kernel(request.kernel)
        program = kernel_argv(spec, request.params, self.python)
        program += ["--scratch", str(self.config.system.scratch), *setting_argv(request.settings)]
        nodes = self.config.system.limits.nodes_for(request.cores)
        return self.launcher.argv(LaunchRequest(request.cores, tuple(program), nodes))

    def describe(self, request: RunRequest) -> str:
        """The command line that measures ``request``; for a command kernel, the user's
        program as it will run, with the files and variables that carry the settings."""
        import shlex

        app = get_kernel(request.kernel).application(request.params)
        if app is None:
            return shlex.join(self.command(request))
        system = self.config.system
        nodes = system.limits.nodes_for(request.cores)
        return describe_application(
            app, settings=request.settings, cores=request.cores, nodes=nodes,
            scratch=system.scratch, env={**os.environ, **system.run_environment()},
            preload_library=preload_for(app),
            launch=lambda program: self.launcher.argv(
                LaunchRequest(request.cores, tuple(program), nodes)))

    def remove_orphans(self) -> Cleanup:
        """Remove run directories under scratch left by runs whose driver is gone
        (:mod:`iotune.execution.rundirs`)."""
        return remove_orphans(self.config.system.scratch)

    def probe_before(self, size: int) -> float | None:
        """One synchronous ``size``-byte write to scratch from the driver (no MPI)."""
        from iotune.variability import probe_once

        check_scratch(self.config.system.scratch, "system.scratch")
        return probe_once(self.config.system.scratch, size)

    def measure(self, request: RunRequest, rep: int = 0) -> dict[str, Any]:
        check_scratch(self.config.system.scratch, "system.scratch")
        app = get_kernel(request.kernel).application(request.params)
        if app is not None:
            return self._measure_application(app, request, rep)
        record = self.base_record(request, rep, self.config.system.name)
        argv = self.command(request)
        env = {**os.environ, **self.config.system.run_environment(),
               OWNER_ENV: json.dumps(owner())}
        outcome = run_command(argv, self.config.system.timeout_s, env=env)
        record.update(
            command=list(argv),
            fs_type=self.fs_type,
            finished_at=now_iso(),
            elapsed_s=round(outcome.elapsed_s, 3),
            status=outcome.status,
            error=outcome.reason,
            result=outcome.result,
        )
        if not outcome.ok:
            record["stderr_tail"] = outcome.stderr_tail
        elif outcome.result is not None:
            record["nodes"] = outcome.result.get("nodes")
        return with_effects(record, request.settings)


    def _measure_application(self, app: Application, request: RunRequest,
                             rep: int) -> dict[str, Any]:
        """One run of a user's program with the settings injected (iotune.execution.application)."""
        system = self.config.system
        nodes = system.limits.nodes_for(request.cores)
        run = run_application(
            app, settings=request.settings, cores=request.cores, nodes=nodes,
            scratch=system.scratch, timeout_s=system.timeout_s,
            env={**os.environ, **system.run_environment()}, preload_library=preload_for(app),
            launch=lambda program: self.launcher.argv(
                LaunchRequest(request.cores, tuple(program), nodes)),
            cwd=self.config.path.parent if self.config.path is not None else None)
        record = self.base_record(request, rep, system.name)
        record.update(command=run.command, fs_type=self.fs_type, finished_at=now_iso(),
                      elapsed_s=round(run.elapsed_s, 3), status=run.status, error=run.error,
                      result=run.result, nodes=nodes)
        if run.status != "ok":
            record["stderr_tail"] = run.stderr_tail
        return with_effects(record, request.settings)


def with_effects(record: dict[str, Any], settings: Mapping[str, Any]) -> dict[str, Any]:
    """``record`` with ``result.settings_effect``: per setting, whether it took effect
    (:mod:`iotune.settings.in_effect`), judged from what the run read back."""
    result = record.get("result")
    if isinstance(result, dict) and settings:
        result["settings_effect"] = {name: effect.as_json() for name, effect
                                     in setting_effects(settings, result).items()}
    return record


def preload_for(app: Application) -> Path | None:
    """The preload library for ``app``: built if ``preload: yes`` (ConfigError when it cannot
    be), used if already built with ``auto``, none with ``no``."""
    if app.preload == "no":
        return None
    from iotune.preload import build_library, library_path

    if app.preload == "yes":
        return build_library()
    path = library_path()
    return path if path.is_file() else None
