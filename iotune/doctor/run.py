"""Running the registered checks in order, and the one line each prints."""

from __future__ import annotations

from dataclasses import dataclass

import iotune.doctor.checks  # noqa: F401 (importing the check modules registers them)
from iotune.doctor.context import DoctorContext
from iotune.doctor.registry import PROBLEM, SKIPPED, WARNING, Finding, registered_checks
from iotune.printable import escaped

#: Width of the status and name columns of a line (the longest status and check name).
STATUS_WIDTH = 8
NAME_WIDTH = 13


@dataclass(frozen=True)
class Result:
    """One check's name and finding."""

    name: str
    finding: Finding


def run_checks(context: DoctorContext) -> list[Result]:
    """Every registered check's result, in order. A check whose needed check found a
    problem or was skipped is skipped, naming it; an exception in a check is a bug and
    propagates."""
    results: list[Result] = []
    status: dict[str, str] = {}
    for check in registered_checks():
        blocked = [name for name in check.needs if status.get(name) in (PROBLEM, SKIPPED)]
        if blocked:
            finding = Finding(SKIPPED, f"needs {' and '.join(blocked)}")
        else:
            finding = check.run(context)
        status[check.name] = finding.status
        results.append(Result(check.name, finding))
    return results


def format_result(result: Result) -> str:
    """``status  name  detail; fix: ...`` on one line (a newline in a detail is escaped)."""
    finding = result.finding
    text = finding.detail + (f"; fix: {finding.fix}" if finding.fix else "")
    return f"{finding.status:<{STATUS_WIDTH}} {result.name:<{NAME_WIDTH}} {escaped(text)}"


def can_tune(results: list[Result]) -> bool:
    """Whether a tune can run: no check found a problem."""
    return not any(r.finding.status == PROBLEM for r in results)


def summary(results: list[Result]) -> str:
    """The closing line: whether a tune can run, and how many problems and warnings."""
    problems = sum(r.finding.status == PROBLEM for r in results)
    warnings = sum(r.finding.status == WARNING for r in results)
    tail = f" ({warnings} warning{'s' * (warnings != 1)})" if warnings else ""
    if not problems:
        return f"iotune doctor: a tune can run here{tail}"
    return (f"iotune doctor: {problems} problem{'s' * (problems != 1)} to fix before a tune "
            f"can run{tail}")

