"""Runs one command with a timeout and turns whatever happens into data.

A crash, a timeout, a missing program or output that is not the kernel's JSON object all
become a :class:`RunOutcome` with ``ok = False`` and a one-line ``reason``; nothing here
raises for a failed run, so a campaign keeps going and records the failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

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
        )
    except OSError as exc:
        return _failed(argv, f"cannot start {argv[0]}: {exc.strerror or exc}", None, start, "")
    try:
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
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                return value
    return None


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def _failed(argv: Sequence[str], reason: str, code: int | None, start: float,
            stderr: str, stdout: str = "") -> RunOutcome:
    return RunOutcome(tuple(argv), False, None, reason, code, time.monotonic() - start,
                      (stderr or "")[-TAIL_CHARS:], stdout or "")


def _kill_group(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
