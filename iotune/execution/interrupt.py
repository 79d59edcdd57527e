"""Stopping cleanly when iotune itself is told to stop (Slurm's time limit, Ctrl-C, a hang-up).

Slurm ends a job at its time limit by sending SIGTERM to every process of the job, then
SIGKILL after ``KillWait`` seconds. What iotune owes its user then is: the run in flight
ends at once (its processes killed, never half-recorded), nothing is stored as a failure
of the configuration, one line says what was done and how to resume, and the exit status
tells the job script to requeue (:data:`REQUEUE_EXIT`).

The mechanism:

- :func:`handling_signals` installs handlers for :data:`SIGNALS`. A handler only notes the
  signal, so it never interrupts a store append half way, except while a run is being
  waited for (:func:`raising`): there it raises :class:`Interrupted` at once, and the
  runner kills the run's process group on the way out.
- Loops call :func:`check` at safe points (before a run, after recording one); a noted
  signal raises :class:`Interrupted` there.
- A run that ended because *its* processes got a terminating signal (:func:`ended_by_signal`)
  while the driver got none is not a failure either: iotune cannot tell an operator's
  ``kill`` from the configuration's fault, so it records the run as ``interrupted`` and
  measures it again on resume (a configuration that really kills its ranks, e.g. through
  the out-of-memory killer, is therefore measured again on every resume; ``iotune results
  --failed`` lists such runs).

:data:`REQUEUE_EXIT` is 75, ``EX_TEMPFAIL`` of ``sysexits.h`` ("temporary failure; the user
is invited to retry"): the job script ``iotune train --emit-sbatch`` writes requeues itself
on it, and a site can list it in ``RequeueExit`` of ``slurm.conf``. An interactive Ctrl-C
exits with 130 as shells expect.
"""

from __future__ import annotations

import contextlib
import re
import signal
from collections.abc import Iterator
from types import FrameType

#: The signals that mean "stop": Slurm's time limit or ``scancel``, Ctrl-C, a lost terminal.
SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)

#: Exit status after a SIGTERM or SIGHUP: EX_TEMPFAIL, "try again" (see the module docstring).
REQUEUE_EXIT = 75

#: Exit status after Ctrl-C (SIGINT): 128 + 2, what shells report for it.
INTERACTIVE_EXIT = 130

#: Signals that end a run from outside (an operator, the batch system); a crash (SIGSEGV,
#: SIGBUS, SIGABRT) is the program's own failure and stays one.
EXTERNAL_SIGNALS = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGKILL})

# mpiexec (Hydra) and srun report a rank killed by a signal in their own words and exit with
# 128 + signal or with the signal's number.
# MPICH's mpiexec (Hydra) exits with the bare number of the signal that killed a rank, often
# with nothing on stderr; of those numbers only SIGKILL's and SIGTERM's are taken as signals
# (1 and 2 are ordinary error statuses far more often than SIGHUP and SIGINT).
_BARE_SIGNAL_STATUSES = frozenset({signal.SIGKILL, signal.SIGTERM})
_LAUNCHER_SIGNAL_RE = re.compile(r"(?:KILLED|TERMINATED) BY SIGNAL: (\d+)|"
                                 r"task \d+: (Killed|Terminated)")


class Interrupted(BaseException):
    """Raised where iotune stops because it received ``signum``.

    A BaseException, like KeyboardInterrupt, so that ``except Exception`` does not swallow it.
    """

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        return INTERACTIVE_EXIT if self.signum == signal.SIGINT else REQUEUE_EXIT


class _State:
    received: int | None = None
    raising: int = 0
    installed: int = 0


_state = _State()


def _handle(signum: int, frame: FrameType | None) -> None:
    if _state.received is None:
        _state.received = signum
    if _state.raising:
        raise Interrupted(signum)


@contextlib.contextmanager
def handling_signals() -> Iterator[None]:
    """Within: :data:`SIGNALS` are noted (see the module docstring); the old handlers after.

    Nested use is allowed; only the outermost installs and restores. Outside the main thread
    (where Python cannot install handlers) it does nothing.
    """
    if _state.installed:
        _state.installed += 1
        try:
            yield
        finally:
            _state.installed -= 1
        return
    try:
        previous = {s: signal.signal(s, _handle) for s in SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    _state.installed, _state.received = 1, None
    try:
        yield
    finally:
        _state.installed = 0
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def raising() -> Iterator[None]:
    """Within: a signal (noted before or arriving now) raises :class:`Interrupted` at once.

    For waiting on a run: the caller's cleanup (killing the run) happens on the way out.
    """
    check()
    _state.raising += 1
    try:
        yield
    finally:
        _state.raising -= 1
    check()


def check() -> None:
    """Raise :class:`Interrupted` if a stop signal has been received."""
    if _state.received is not None:
        raise Interrupted(_state.received)


def received() -> int | None:
    """The first stop signal received while handling, None if none."""
    return _state.received


def reset() -> None:
    """Forget a received signal (for a process that goes on after reporting it, e.g. tests)."""
    _state.received = None


def ended_by_signal(returncode: int | None, stderr: str = "") -> int | None:
    """The external signal (:data:`EXTERNAL_SIGNALS`) that ended a run, if that is how it ended.

    A negative return code is the signal that killed the launched process itself; 128 + N
    is how shells and launchers pass on a child's death by signal N; Hydra exits with N
    itself (for SIGKILL and SIGTERM only, see ``_BARE_SIGNAL_STATUSES``); Hydra and srun
    also say it on stderr.
    """
    candidates: list[int] = []
    if returncode is not None and returncode < 0:
        candidates.append(-returncode)
    elif returncode is not None and 128 < returncode < 128 + 65:
        candidates.append(returncode - 128)
    elif returncode in _BARE_SIGNAL_STATUSES:
        candidates.append(returncode)
    for match in _LAUNCHER_SIGNAL_RE.finditer(stderr):
        if match.group(1):
            candidates.append(int(match.group(1)))
        else:
            candidates.append(signal.SIGKILL if match.group(2) == "Killed" else signal.SIGTERM)
    return next((s for s in candidates if s in EXTERNAL_SIGNALS), None)
