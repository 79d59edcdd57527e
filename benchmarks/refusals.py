"""Timing a bad input's refusal as a user meets it: a new ``python -m iotune`` process,
start-up included, judged on one error line and a time target (the bounds and input-limit
benchmarks share it)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from typing import TypeVar

from quick_mode import add_quick

T = TypeVar("T")

#: The issue's bound for every bad input: refused in one line within 2 s of the command.
TARGET_S = 2.0


def timed_refusal(command: list[str], work: str) -> tuple[float, int, list[str]]:
    """Seconds ``iotune COMMAND`` took in ``work``, its exit code and its error lines."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "iotune", *command], cwd=work,
                          capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    seconds = time.perf_counter() - started
    errors = [line for line in done.stderr.splitlines() if line.startswith("iotune: error:")]
    return seconds, done.returncode, errors


def print_header() -> None:
    print(f"{'input':40s} {'seconds':>8s}  exit  error line")


def judged_row(name: str, seconds: float, code: int, errors: list[str], quick: bool) -> bool:
    """Print one case's row; True when it was refused in one line (within the target unless
    ``quick``, which does not judge time)."""
    print(f"{name:40s} {seconds:8.2f}  {code:4d}  "
          f"{errors[0][:90] if errors else '(no error line)'}")
    return code != 0 and len(errors) == 1 and (quick or seconds < TARGET_S)


def verdict(failed: int, quick: bool) -> int:
    """Print the target line; the exit status (1 when a case missed)."""
    said = "met" if not failed else f"{failed} case(s) not met"
    if quick and not failed:
        said = "not judged (--quick: every case refused in one line)"
    print(f"target: refused in one line within {TARGET_S:g} s: {said}")
    return 1 if failed else 0


def chosen_cases(doc: str | None, cases: dict[str, T], quick_cases: int,
                 argv: list[str] | None) -> tuple[list[tuple[str, T]], bool]:
    """The benchmark's command line read (``doc``'s first line its description): the cases
    to run (the first ``quick_cases`` with ``--quick``) and whether it is quick."""
    parser = argparse.ArgumentParser(description=(doc or "").splitlines()[0])
    add_quick(parser, f"the first {quick_cases} cases, time not judged")
    args = parser.parse_args(argv)
    chosen = list(cases.items())
    return (chosen[:quick_cases] if args.quick else chosen), args.quick
