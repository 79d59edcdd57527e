"""Byte sizes and durations as people write them in configs and on command lines.

``parse_bytes("4MiB") == 4 * 2**20``. K, M and G are binary like KiB, MiB and GiB
(1 K = 1024 bytes), as in ROMIO and Lustre tools; an explicit ``KB``/``MB``/``GB`` is decimal.
"""

from __future__ import annotations

import re

from iotune.settings.bounds import MAX_SECONDS
from iotune.settings.numbers import LIMITS_DOC, number_problem

#: Bytes in one MiB, the unit of every bandwidth iotune reports (MiB/s).
MIB = 2**20

_BYTE_UNITS = {
    "": 1,
    "b": 1,
    "k": 2**10,
    "kib": 2**10,
    "m": 2**20,
    "mib": 2**20,
    "g": 2**30,
    "gib": 2**30,
    "t": 2**40,
    "tib": 2**40,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
}
_SIZE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$")
_DURATION_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "min": 60.0, "h": 3600.0, "d": 86400.0}


def parse_bytes(value: object) -> int:
    """Return the number of bytes in ``value`` (an int or a string such as ``"1MiB"``).

    Raises ``ValueError`` with the rule when the value is not a non-negative whole size.
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a byte size (an integer or a string like '4MiB')")
    if isinstance(value, int):
        if value < 0:
            raise ValueError(f"{value} is negative; a byte size must be >= 0")
        return value
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    if isinstance(value, str):
        match = _SIZE_RE.match(value)
        if match and match.group(2).lower() in _BYTE_UNITS:
            number = float(match.group(1)) * _BYTE_UNITS[match.group(2).lower()]
            if number.is_integer():
                return int(number)
            raise ValueError(f"{value!r} is not a whole number of bytes")
    raise ValueError(
        f"{value!r} is not a byte size (an integer or a string like '4MiB'; units: K, M, G, KiB, "
        "MiB, GiB, KB, MB, GB)"
    )


def format_bytes(n: int) -> str:
    """Shortest exact binary form of ``n``: ``4194304 -> '4MiB'``, ``1000 -> '1000'``."""
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size and n % size == 0:
            return f"{n // size}{unit}"
    return str(n)


def parse_duration(value: object) -> float:
    """Seconds in ``value``: a number, or a string such as ``"30s"``, ``"5m"``, ``"1h"``.

    Raises ``ValueError`` with the rule unless the duration is finite, positive and at most
    :data:`~iotune.settings.bounds.MAX_SECONDS` (a year).
    """
    if isinstance(value, bool):
        raise ValueError(f"{value!r} is not a duration")
    if isinstance(value, int | float):
        problem = number_problem(value, 0, min_open=True, limit=MAX_SECONDS, unit="s")
        if problem is not None:
            raise ValueError(problem.replace("a positive number", "a positive duration"))
        return float(value)
    if isinstance(value, str):
        match = _SIZE_RE.match(value)
        if match and match.group(2).lower() in _DURATION_UNITS:
            seconds = float(match.group(1)) * _DURATION_UNITS[match.group(2).lower()]
            if seconds > MAX_SECONDS:  # a string of digits too long for a float is inf
                raise ValueError(f"{value!r} is above the limit of {MAX_SECONDS} s "
                                 f"({LIMITS_DOC})")
            if seconds > 0:
                return seconds
    raise ValueError(f"{value!r} is not a duration (seconds, or a string like '30s', '5m', '1h')")
