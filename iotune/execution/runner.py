"""Runs one command with a timeout and turns whatever happens into data.

A crash, a timeout, a missing program or output that is not the kernel's JSON object all
become a :class:`RunOutcome` with ``ok = False`` and a one-line ``reason``; nothing here
raises for a failed run, so a campaign keeps going and records the failure. A run whose
processes were ended by a terminating signal from outside (:func:`iotune.execution.interrupt.
ended_by_signal`) is marked ``interrupted``: not the configuration's failure.

When iotune itself is told to stop (:mod:`iotune.execution.interrupt`), the run in flight is killed
and :class:`~iotune.execution.interrupt.Interrupted` propagates: the run is not recorded at all. If
the driver dies without a word (SIGKILL), the launched processes get SIGTERM from the
kernel (``PR_SET_PDEATHSIG``), so no ranks go on writing for nobody.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from iotune.execution import interrupt

TAIL_CHARS = 2000


@dataclass(frozen=True)
class RunOutcome:
    """The result of one execution: ``result`` is the kernel's JSON object when ``ok``."""

    argv: tuple[str, ...]
    ok: bool
    result: dict[str, Any] | None
    reason: str | None
    returncode: int | None
    elapsed_s: float
    stderr_tail: str
    stdout: str = ""
    interrupted: bool = False

    @property
    def status(self) -> str:
        """``ok``, ``interrupted`` (ended by a signal from outside) or ``failed``."""
        return "ok" if self.ok else "interrupted" if self.interrupted else "failed"


def run_command(
    argv: Sequence[str],
    timeout_s: float,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    expect_json: bool = True,
) -> RunOutcome:
    """Run ``argv``; kill its whole process group after ``timeout_s`` seconds.

    With ``expect_json`` (iotune's kernels) the result is the last stdout line that parses
    as a JSON object, and a run without one failed; anything else a program prints on
    stdout is ignored. Without it (a user's program) a zero exit is success, the result is
    None and ``stdout`` holds what the program printed.
    """
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(env) if env is not None else None, cwd=cwd, start_new_session=True,
            preexec_fn=_die_with_parent(),
        )
    except OSError as exc:
        return _failed(argv, f"cannot start {argv[0]}: {exc.strerror or exc}", None, start, "")
    try:
        with interrupt.raising():
            stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        return _failed(argv, f"timed out after {timeout_s:g} s", proc.returncode, start, stderr,
                       stdout)
    except BaseException:
        _kill_group(proc)  # Ctrl-C or SIGTERM of the driver: leave no ranks behind
        proc.communicate()
        raise
    if proc.returncode != 0:
        last = _last_line(stderr) or "no message on stderr"
        by = interrupt.ended_by_signal(proc.returncode, stderr)
        if by is not None:
            reason = (f"ended by {signal.Signals(by).name} from outside iotune (exit code "
                      f"{proc.returncode}: {last}); measured again on resume")
            return _failed(argv, reason, proc.returncode, start, stderr, stdout,
                           interrupted=True)
        return _failed(argv, f"exit code {proc.returncode}: {last}", proc.returncode, start, stderr,
                       stdout)
    if not expect_json:
        return RunOutcome(tuple(argv), True, None, None, 0, time.monotonic() - start,
                          stderr[-TAIL_CHARS:], stdout)
    result = parse_result(stdout)
    if result is None:
        return _failed(argv, "no JSON result object on stdout", 0, start, stderr)
    return RunOutcome(tuple(argv), True, result, None, 0, time.monotonic() - start,
                      stderr[-TAIL_CHARS:])


def parse_result(stdout: str) -> dict[str, Any] | None:
    """The last line of ``stdout`` that is a JSON object, or None."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except (json.JSONDecodeError, RecursionError):  # nested past the decoder
                continue
            if isinstance(value, dict):
                return value
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _failed(argv: Sequence[str], reason: str, code: int | None, start: float,
            stderr: str, stdout: str = "", interrupted: bool = False) -> RunOutcome:
    return RunOutcome(tuple(argv), False, None, reason, code, time.monotonic() - start,
                      (stderr or "")[-TAIL_CHARS:], stdout or "", interrupted)


_PR_SET_PDEATHSIG = 1


@functools.cache
def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` asking Linux to send the child SIGTERM when iotune dies (even of
    SIGKILL), so a launcher never outlives its driver; None where that is not available."""
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    libc = ctypes.CDLL(name, use_errno=True)

    def set_death_signal() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    return set_death_signal


#: Seconds a launcher gets after SIGTERM to end its ranks (srun cancels its job step, mpiexec
#: signals its proxies) before the whole group is killed.
TERM_GRACE_S = 3.0


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """End the run's process group: SIGTERM, then SIGKILL after :data:`TERM_GRACE_S`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=TERM_GRACE_S)
        os.killpg(proc.pid, signal.SIGKILL)
