"""A production job's time limit: how long its start record may stand without a finish.

A job killed before ``iotune job finish`` (by its time limit, ``scancel``, a node failure)
leaves only its start record. While the job may still be running, that record holds its
configuration's first trial back (a second waits for the first's result); once the job
cannot be running any more it is lost, and the trial may be given again. The limit is the
job's own, recorded at start (:func:`job_time_limit`): ``--time-limit``, else Slurm's, else
:data:`DEFAULT_TIME_LIMIT_H`. A job is lost :data:`LOST_GRACE_S` after its limit
(:func:`lost_after`).
"""

from __future__ import annotations

import math
import re
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from iotune.errors import ConfigError
from iotune.execution.slurm import parse_slurm_time

#: The limit of a job whose limit neither ``--time-limit`` nor Slurm gives (outside Slurm,
#: or ``squeue`` unreachable): the longest wall time of the regular queues at most centres
#: is 24-48 hours, so a job still running is not taken for lost.
DEFAULT_TIME_LIMIT_H = 48.0
#: A job counts as lost this long after its time limit: Slurm may let a job run past its
#: limit (``OverTimeLimit``, then ``KillWait``, 30 s by default) before killing it, the
#: nodes' clocks differ by seconds, and the script's ``job finish`` runs at its very end.
LOST_GRACE_S = 600.0
#: How long ``job start`` waits for ``squeue`` to tell the job's limit before using the
#: default: a busy controller answers within seconds, and the job waits for the answer.
SQUEUE_TIMEOUT_S = 10.0
#: Where a limit came from, as a start record's ``time_limit_source`` says it.
GIVEN, SLURM_ENV, SLURM_SQUEUE, DEFAULT = ("--time-limit", "Slurm (job environment)",
                                           "Slurm (squeue)", "default")

# sbatch --time's forms with days: days-hours[:minutes[:seconds]] (parse_slurm_time reads
# days-hours:minutes as days-minutes:seconds, which squeue never prints).
_WITH_DAYS = re.compile(r"^(\d+)-(\d+)(?::(\d+)(?::(\d+))?)?$")


@dataclass(frozen=True)
class TimeLimit:
    """A job's time limit in seconds and where it came from (:data:`GIVEN`, ...)."""

    seconds: float
    source: str


def parse_time_limit(text: str, where: str = "--time-limit") -> float:
    """Seconds of a Slurm time limit in any of sbatch ``--time``'s forms: ``minutes``,
    ``minutes:seconds``, ``hours:minutes:seconds``, ``days-hours``, ``days-hours:minutes``
    or ``days-hours:minutes:seconds``. ConfigError naming ``where`` for anything else,
    including a limit of zero and ``UNLIMITED``."""
    match = _WITH_DAYS.match(text.strip())
    if match:
        days, hours, minutes, secs = (int(g) if g else 0 for g in match.groups())
        seconds: float | None = float(((days * 24 + hours) * 60 + minutes) * 60 + secs)
    else:
        seconds = None if "-" in text else parse_slurm_time(text)
    if seconds is None or not math.isfinite(seconds) or seconds <= 0:
        raise ConfigError(f"{where}: {text!r} is not a time limit above 0 in one of sbatch "
                          "--time's forms (minutes, MM:SS, H:MM:SS, D-H, D-H:MM, D-H:MM:SS)")
    return seconds


def _from_environment(env: Mapping[str, str]) -> float | None:
    """The limit told by ``SLURM_JOB_START_TIME`` and ``SLURM_JOB_END_TIME`` (Unix times,
    set in the job's environment by Slurm releases that have them), None without both."""
    try:
        start, end = float(env["SLURM_JOB_START_TIME"]), float(env["SLURM_JOB_END_TIME"])
    except (KeyError, ValueError):
        return None
    return end - start if math.isfinite(end - start) and end > start else None


Runner = Callable[..., subprocess.CompletedProcess[str]]


def _from_squeue(job: str, run: Runner) -> float | None:
    """``squeue -h -j JOB -o %l`` as seconds; None when squeue is missing, fails, takes
    longer than :data:`SQUEUE_TIMEOUT_S` or prints no limit (``UNLIMITED``, nothing)."""
    try:
        out = run(["squeue", "-h", "-j", job, "-o", "%l"], capture_output=True, text=True,
                  timeout=SQUEUE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = out.stdout.split() if out.returncode == 0 else []
    seconds = None
    if len(lines) == 1 and lines[0][:1].isdigit():
        try:
            seconds = parse_time_limit(lines[0], "squeue")
        except ConfigError:
            seconds = None
    return seconds if seconds is not None and seconds > 0 else None


def job_time_limit(given: str | None, env: Mapping[str, str],
                   run: Runner = subprocess.run) -> TimeLimit:
    """This job's time limit: ``given`` (``--time-limit``, checked by
    :func:`parse_time_limit`), else Slurm's when ``env`` is a Slurm job's (its environment,
    then ``squeue``, run by ``run``), else :data:`DEFAULT_TIME_LIMIT_H`."""
    if given is not None:
        return TimeLimit(parse_time_limit(given), GIVEN)
    job = env.get("SLURM_JOB_ID")
    if job:
        seconds = _from_environment(env)
        if seconds is not None:
            return TimeLimit(seconds, SLURM_ENV)
        seconds = _from_squeue(job, run)
        if seconds is not None:
            return TimeLimit(seconds, SLURM_SQUEUE)
    return TimeLimit(DEFAULT_TIME_LIMIT_H * 3600, DEFAULT)


def lost_after(limit_s: float | None) -> float:
    """Seconds after its start at which a job with time limit ``limit_s`` (None: a start
    record from before limits were recorded, given the default) that has not finished
    counts as lost."""
    return (DEFAULT_TIME_LIMIT_H * 3600 if limit_s is None else limit_s) + LOST_GRACE_S


def duration_text(seconds: float) -> str:
    """A duration as a person reads it: ``45 s``, ``12 min``, ``3 h 05 min``, ``4 d 6 h``
    (days from 100 hours on)."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    hours, minutes = divmod(minutes, 60)
    if hours < 100:
        return f"{hours} h {minutes:02d} min"
    days, hours = divmod(hours, 24)
    return f"{days} d {hours} h"
