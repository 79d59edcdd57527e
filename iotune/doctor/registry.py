"""What a check is, what it finds, and the registry the checks add themselves to."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from iotune.doctor.context import DoctorContext

#: The statuses, from good to bad. A warning leaves a tune possible (it searches less, or
#: one kind of tune cannot run); a problem stops tunes; a check is skipped when a check it
#: needs found a problem (or was skipped), since that one names the cause.
OK, WARNING, PROBLEM, SKIPPED = "ok", "warning", "problem", "skipped"
STATUSES = (OK, WARNING, PROBLEM, SKIPPED)


@dataclass(frozen=True)
class Finding:
    """What one check found: its status, what it saw (one line) and, unless ok, the fix."""

    status: str
    detail: str
    fix: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown status {self.status!r}")


CheckFunction = Callable[["DoctorContext"], Finding]


@dataclass(frozen=True)
class Check:
    """A named check, the checks it needs (by name) and the function that runs it."""

    name: str
    needs: tuple[str, ...]
    run: CheckFunction


_REGISTRY: dict[str, Check] = {}


def register_check(name: str, needs: tuple[str, ...] = ()) -> Callable[[CheckFunction],
                                                                       CheckFunction]:
    """Decorator: run the function as the check ``name``, after the checks in ``needs``
    (which must be registered before it: checks run in the order they register)."""

    def wrap(func: CheckFunction) -> CheckFunction:
        unknown = [n for n in needs if n not in _REGISTRY]
        if unknown:
            raise ValueError(f"check {name!r} needs {unknown}, not registered before it")
        _REGISTRY[name] = Check(name, tuple(needs), func)
        return func

    return wrap


def registered_checks() -> list[Check]:
    """Every registered check, in the order they run (those of
    :mod:`iotune.doctor.checks` once it is imported)."""
    return list(_REGISTRY.values())
