"""Everything iotune knows about Slurm, in one place.

- the job's environment: whether this process runs inside an allocation, its job id, nodes
  and tasks (:func:`current_allocation`, :func:`job_id`);
- ``srun`` command lines (:func:`srun_argv`), used by the ``srun`` launcher;
- batch scripts: ``#SBATCH`` directives and the ``--time`` format (:func:`render_job_script`,
  :func:`slurm_time`), and the body that runs one iotune command under Slurm's time-limit
  signal and requeues the job (:func:`requeue_directives`, :func:`supervised_body`);
- ``squeue``: its running jobs, queried and parsed (:func:`running_jobs`,
  :func:`parse_squeue`), and Slurm's durations (:func:`parse_slurm_time`).

Nothing here decides what a campaign or a probe does with it; callers pass what they need.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from iotune.errors import ConfigError, DataError
from iotune.execution.interrupt import REQUEUE_EXIT
from iotune.printable import MAX_SLURM_TIME_S, Embedded, SlurmTime, SlurmWord, Word, Words, printed

#: The PMI ``srun`` starts MPI programs with (MPICH and Open MPI both speak it).
SRUN_MPI = "pmi2"
SQUEUE_FORMAT = "%i|%D|%M|%l|%P|%m"
SQUEUE_ARGS = ("--noheader", "--states=RUNNING", f"--format={SQUEUE_FORMAT}")
_TIME_RE = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$")
_MEM_RE = re.compile(r"^(\d+(?:\.\d+)?)([KMGT]?)(?:[cn])?$", re.IGNORECASE)
_MEM_GIB = {"": 1 / 1024, "K": 1 / 2**20, "M": 1 / 1024, "G": 1.0, "T": 1024.0}


@dataclass(frozen=True)
class Allocation:
    """The Slurm allocation a process runs in: its job id, nodes and tasks (MPI ranks)."""

    job_id: str
    nodes: int
    tasks: int


def current_allocation(environ: Mapping[str, str] | None = None) -> Allocation | None:
    """The allocation described by ``environ`` (default: this process's), None outside one.

    Tasks come from ``SLURM_NTASKS`` (or the older ``SLURM_NPROCS``); a job submitted
    without ``-n`` has neither, and then gets nodes x ``SLURM_CPUS_ON_NODE``.
    """
    env = os.environ if environ is None else environ
    job = env.get("SLURM_JOB_ID")
    if job is None:
        return None
    nodes = int(env.get("SLURM_JOB_NUM_NODES") or env.get("SLURM_NNODES") or 1)
    tasks = env.get("SLURM_NTASKS") or env.get("SLURM_NPROCS")
    cpus = env.get("SLURM_CPUS_ON_NODE")
    return Allocation(job, nodes, int(tasks) if tasks else nodes * int(cpus or 1))


def job_id(environ: Mapping[str, str] | None = None) -> str | None:
    """``SLURM_JOB_ID`` of ``environ`` (default: this process's), None outside a job."""
    return (os.environ if environ is None else environ).get("SLURM_JOB_ID")


def job_label(environ: Mapping[str, str] | None = None) -> str | None:
    """The job as ``squeue`` names it: ``ARRAYJOB_TASK`` for a job array's task, else
    ``SLURM_JOB_ID``; None outside a job. Both stay the same when the job is requeued."""
    env = os.environ if environ is None else environ
    array, task = env.get("SLURM_ARRAY_JOB_ID"), env.get("SLURM_ARRAY_TASK_ID")
    return f"{array}_{task}" if array and task else env.get("SLURM_JOB_ID")


def srun_argv(ranks: int, command: Sequence[str], nodes: int | None = None) -> list[str]:
    """``srun -n RANKS [-N NODES] --mpi=pmi2 COMMAND...``: one job step of ``ranks`` tasks."""
    argv = ["srun", "-n", str(ranks)]
    if nodes:
        argv += ["-N", str(nodes)]
    return [*argv, f"--mpi={SRUN_MPI}", *command]


def slurm_time(seconds: float) -> str:
    """``HH:MM:SS`` (or ``D-HH:MM:SS``) for sbatch ``--time``, rounded up to whole minutes."""
    minutes = int(-(-seconds // 60))
    days, minutes = divmod(minutes, 24 * 60)
    hours, minutes = divmod(minutes, 60)
    clock = f"{hours:02d}:{minutes:02d}:00"
    return f"{days}-{clock}" if days else clock


def job_time_limit(given: str | None, seconds: float, advice: str) -> SlurmTime:
    """The ``--time`` of a job script: ``given`` (``--time``, Slurm's format) or the
    estimate of ``seconds``; ConfigError when the estimate is above the longest limit
    iotune writes (:data:`~iotune.printable.MAX_SLURM_TIME_S`), ending with ``advice``."""
    if given is not None:
        return SlurmTime(given, "--time")
    if seconds > MAX_SLURM_TIME_S:
        raise ConfigError(f"--emit-sbatch: the job's estimated time, {seconds / 86400:.0f} "
                          f"days, is above the longest time limit iotune writes "
                          f"({MAX_SLURM_TIME_S // 86400} days); {advice}")
    return SlurmTime(slurm_time(seconds), "--time")


def parse_slurm_time(text: str) -> float | None:
    """Seconds in a Slurm duration (``[days-][hours:]minutes:seconds``, or ``minutes``);
    None for ``UNLIMITED``, ``NOT_SET``, ``INVALID`` and the like."""
    value = text.strip()
    if value.isdigit():  # a bare number of minutes (time limits may be printed so)
        return 60.0 * int(value)
    match = _TIME_RE.match(value)
    if not match:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in match.groups())
    return float(((days * 24 + hours) * 60 + minutes) * 60 + seconds)


def render_job_script(directives: Mapping[str, object], body: Sequence[str]) -> str:
    """A bash batch script: ``#SBATCH --NAME=VALUE`` for each directive in order (None
    values left out, True ones written as the bare flag ``--NAME``), then the ``body``
    lines; the text ends with a newline.

    Each value is printed by :func:`iotune.printable.printed`: an
    :class:`~iotune.printable.Embedded` by its own rule (a
    :class:`~iotune.printable.SlurmName` for a partition), anything else as a
    :class:`~iotune.printable.SlurmWord`. sbatch reads quotes, backslashes and ``#`` in an
    ``#SBATCH`` line itself, so no value may hold one; ConfigError naming the directive
    otherwise."""
    lines = ["#!/bin/bash"]
    for name, value in directives.items():
        if value is True:
            lines.append(f"#SBATCH --{name}")
        elif value is not None:
            shown = value if isinstance(value, Embedded) else SlurmWord(value, f"--{name}")
            lines.append(printed(f"#SBATCH --{name}={{value}}", value=shown))
    return "\n".join([*lines, *body, ""])


#: Seconds before the time limit at which Slurm signals the job script (``--signal``), so
#: the job can requeue itself while it still runs. Slurm may send it up to 60 s earlier
#: than asked; 120 s leaves ``scontrol requeue`` ample time after iotune stops, which takes
#: well under a second (it kills the run in flight rather than waiting for it).
REQUEUE_SIGNAL_LEAD_S = 120


def requeue_directives() -> dict[str, object]:
    """The ``#SBATCH`` directives :func:`supervised_body` relies on: requeue allowed, the
    time-limit signal to the batch shell, and a log that a requeued start appends to."""
    return {"requeue": True, "signal": f"B:USR1@{REQUEUE_SIGNAL_LEAD_S}",
            "open-mode": "append"}


def supervised_body(command: Sequence[str], directory: str, what: str,
                    first_start_only: Sequence[str] = ()) -> list[str]:
    """Job script lines that run ``command`` (an iotune command that stops at SIGTERM with
    exit status :data:`~iotune.execution.interrupt.REQUEUE_EXIT`, keeping its runs) in
    ``directory``, and requeue the job when Slurm's time-limit signal stopped it, so the
    next start resumes ``what`` (``the campaign``, ``the tune``). ``first_start_only``
    words are added to ``command`` when the job starts for the first time only
    (``SLURM_RESTART_COUNT`` unset or 0). Every word is quoted by
    :func:`iotune.printable.printed`: nothing in them is expanded when the job runs."""
    if first_start_only:
        first = [printed("first=({words})", words=Words(first_start_only, "command")),
                 '[ "${SLURM_RESTART_COUNT:-0}" -eq 0 ] || first=()']
        run = printed('{command} ${{first[@]+"${{first[@]}}"}} &',
                      command=Words(command, "command"))
    else:
        first, run = [], printed("{command} &", command=Words(command, "command"))
    return [
        "# Near the time limit Slurm sends this script SIGUSR1 (--signal); it passes SIGTERM",
        f"# on to iotune, which stops at once, keeps every run recorded and exits with status "
        f"{REQUEUE_EXIT};",
        f"# the job then requeues itself and the next start resumes {what}. A SIGTERM",
        "# (scancel) stops iotune the same way, without a requeue: the job ends, its runs stay.",
        "set -uo pipefail",
        printed("cd {directory}", directory=Word(directory, "directory")),
        "requeue=no stop=no iotune=",
        "stop() { stop=yes; [ -z \"$iotune\" ] || kill -TERM \"$iotune\" 2>/dev/null; }",
        "trap 'requeue=yes; stop' USR1",
        "trap stop TERM",
        *first,
        run,
        "iotune=$!",
        '# a signal before iotune was known: pass it on now',
        '[ "$stop" = no ] || kill -TERM "$iotune" 2>/dev/null',
        '# a trapped signal ends "wait" early (status > 128): wait until iotune has ended;',
        "# bash keeps an ended child's status, so the last wait returns iotune's own",
        'wait "$iotune"',
        'while kill -0 "$iotune" 2>/dev/null; do wait "$iotune"; done',
        'wait "$iotune"; status=$?',
        f'if [ "$status" -eq {REQUEUE_EXIT} ] && [ "$requeue" = yes ]; then',
        f'  echo "iotune: requeueing job $SLURM_JOB_ID to resume {what}"',
        '  scontrol requeue "$SLURM_JOB_ID"',
        "fi",
        'exit "$status"',
    ]


@dataclass(frozen=True)
class RunningJob:
    """One running job of a snapshot; ``limit_s`` is None for an unlimited job."""

    job_id: str
    nodes: int
    used_s: float
    limit_s: float | None
    partition: str
    mem_per_node_gib: float


def _memory_gib(text: str) -> float:
    match = _MEM_RE.match(text.strip())
    if not match:
        return 0.0
    return float(match.group(1)) * _MEM_GIB[match.group(2).upper()]


def parse_squeue(text: str) -> list[RunningJob]:
    """The jobs of ``squeue`` output in :data:`SQUEUE_FORMAT` (blank lines ignored).

    Raises DataError naming the line when one does not have the six fields or a node count.
    """
    jobs = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = line.strip().split("|")
        if len(fields) != 6 or not fields[1].strip().isdigit():
            raise DataError(f"squeue output line {number}: {line.strip()!r} is not "
                            f"'{SQUEUE_FORMAT}' (id|nodes|used|limit|partition|memory)")
        used = parse_slurm_time(fields[2])
        jobs.append(RunningJob(fields[0].strip(), int(fields[1]), used or 0.0,
                               parse_slurm_time(fields[3]), fields[4].strip(),
                               _memory_gib(fields[5])))
    return jobs


def squeue_available(squeue: str = "squeue") -> bool:
    """Whether an ``squeue`` program is on the PATH (a scheduler may still be unreachable)."""
    return shutil.which(squeue) is not None


def running_jobs(squeue: str = "squeue", timeout_s: float = 10.0) -> list[RunningJob]:
    """Run ``squeue`` once (``squeue SQUEUE_ARGS``) and parse its running jobs.

    Raises DataError when squeue is missing, fails, times out or prints something else.
    """
    try:
        out = subprocess.run([squeue, *SQUEUE_ARGS], capture_output=True, text=True,
                             timeout=timeout_s, check=False)
    except FileNotFoundError:
        raise DataError(f"queue: {squeue} not found on the PATH") from None
    except subprocess.TimeoutExpired:
        raise DataError(f"queue: {squeue} did not answer within {timeout_s:g} s") from None
    if out.returncode != 0:
        reason = (out.stderr.strip().splitlines() or ["no message"])[-1]
        raise DataError(f"queue: {squeue} exited with status {out.returncode}: {reason}")
    return parse_squeue(out.stdout)
