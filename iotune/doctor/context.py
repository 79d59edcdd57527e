"""What the checks share: where and how runs happen here, a way to ask the probe program,
and the facts earlier checks found (the MPI the launcher starts, the libraries mpi4py
loads) for later ones to compare with."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.execution.launchers import Launcher, LaunchRequest
from iotune.execution.runner import RunOutcome, run_command

#: Seconds one probe may take: a hung launch (mpiexec on a login node waiting for a
#: process manager, srun waiting for an allocation) ends within two minutes, while a
#: healthy one takes a few seconds.
PROBE_TIMEOUT_S = 120.0


def probe_program() -> Path:
    """The file of the probe program (:mod:`iotune.doctor.probe`), found without
    importing it (importing is harmless, but the driver has no reason to)."""
    return Path(__file__).resolve().parent / "probe.py"


@dataclass
class DoctorContext:
    """The environment the checks look at.

    ``python`` runs the kernels (``system.python``, else this interpreter); ``launcher``
    (named ``launcher_name``) starts ``ranks`` ranks for the job and hints checks;
    ``scratch`` and ``store`` are the config's; ``env`` is the environment a run gets
    (this process's with the config's ``system.env`` and ``system.mpi_io`` on top);
    ``ost_count`` is the config's ``system.ost_count``; ``mounts`` is read to tell the
    file system. ``facts`` holds what earlier checks found, by name.
    """

    python: str
    launcher: Launcher
    launcher_name: str
    ranks: int
    scratch: Path
    store: Path
    env: dict[str, str] = field(default_factory=lambda: dict(os.environ))
    ost_count: int | None = None
    mounts: str = "/proc/mounts"
    timeout_s: float = PROBE_TIMEOUT_S
    facts: dict[str, Any] = field(default_factory=dict)

    def probe(self, *question: str, ranks: int | None = None) -> RunOutcome:
        """Run the probe program with ``question``: alone, or under the launcher on
        ``ranks`` ranks. A failure is data (``ok`` False, ``reason``), never raised."""
        command = (self.python, str(probe_program()), *question)
        argv = (list(command) if ranks is None
                else self.launcher.argv(LaunchRequest(ranks=ranks, command=command)))
        return run_command(argv, self.timeout_s, env=self.env)


def failure_text(outcome: RunOutcome) -> str:
    """Why a probe failed, in one line: the probe's own ``probe: error:`` line when it gave
    one (what Python raised), else the runner's reason (exit code and last stderr line, or
    the time-out)."""
    for line in reversed(outcome.stderr_tail.splitlines()):
        if line.startswith("probe: error: "):
            return line[len("probe: error: "):]
    return outcome.reason or "failed"
