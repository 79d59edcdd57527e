"""``iotune doctor``: check that a tune can run here, one line per check with its fix."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from iotune.cli.common import config_option, resolve_config, with_slurm_launcher
from iotune.cli.numbers import BoundedInt

#: The largest --ranks: the job and hints checks test that ranks start and share a file,
#: not scale; more ranks only wait longer for an allocation.
MAX_RANKS = 1024


@click.command("doctor")
@config_option
@click.option("--launcher", type=click.Choice(["mpiexec", "srun"]),
              help="Start the test jobs with this launcher. Default: the config's "
                   "system.launcher (srun inside a Slurm allocation).")
@click.option("--ranks", type=BoundedInt(2, MAX_RANKS), default=2,
              show_default=True, help="Ranks of the test jobs (the job and MPI-IO hints "
                                      "checks).")
def doctor_command(config_path: Path | None, launcher: str | None, ranks: int) -> None:
    """Check that a tune can run here: MPI, mpi4py, h5py, scratch, hints, Slurm, store.

    Each check prints one line: ok, warning (a tune runs, with less), problem (with its
    fix) or skipped (a check it needs found a problem). The MPI checks run in processes
    of their own, with the interpreter that runs the kernels (system.python). Exit status
    0 when a tune can run (no problem), 1 otherwise.

    \b
    Example:
      iotune doctor
      iotune doctor --launcher srun --ranks 4    inside an allocation
    """
    from iotune.doctor.context import DoctorContext
    from iotune.doctor.run import can_tune, format_result, run_checks, summary
    from iotune.execution.launchers import make_launcher

    config = with_slurm_launcher(resolve_config(config_path), launcher)
    system = config.system
    context = DoctorContext(
        python=system.python or sys.executable,
        launcher=make_launcher(system.launcher, system.launcher_template),
        launcher_name=system.launcher if system.launcher != "template"
        else f"template {system.launcher_template!r}",
        ranks=ranks, scratch=system.scratch, store=config.store,
        env={**os.environ, **system.run_environment()}, ost_count=system.ost_count)
    results = run_checks(context)
    for result in results:
        click.echo(format_result(result))
    click.echo(summary(results))
    if not can_tune(results):
        raise SystemExit(1)


COMMANDS = [doctor_command]
