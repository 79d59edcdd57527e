"""The one rule every number of a config field obeys: a real number (``nan``, ``inf`` and
``-inf`` are refused), whole where it counts something, inside its range and below its
limit (:mod:`iotune.settings.bounds`).

:func:`number_problem` says what is wrong in words (or nothing); :func:`check_number`
raises it as a ConfigError naming the key. The command line's option types
(:mod:`iotune.cli.numbers`) apply the same rule to flags.
"""

from __future__ import annotations

import math

from iotune.errors import ConfigError

#: Where the limits are listed, with their reasons; every "above the limit" message names it.
LIMITS_DOC = "docs/campaigns.md, Limits"


def shown(number: float) -> str:
    """``number`` as a message shows it: ``1000``, ``0.5``, ``1e+20``."""
    if isinstance(number, int) and not isinstance(number, bool):
        return str(number)
    return f"{number:g}"


def number_rule(minimum: float | None = None, maximum: float | None = None, *,
                min_open: bool = False, max_open: bool = False, whole: bool = False) -> str:
    """The rule in words: ``a positive integer``, ``a number > 0``, ``a number in [0, 1)``."""
    kind = "an integer" if whole else "a number"
    if minimum is not None and maximum is not None:
        return (f"{kind} in {'(' if min_open else '['}{shown(minimum)}, {shown(maximum)}"
                f"{')' if max_open else ']'}")
    if minimum is not None:
        if (minimum == 0 and min_open) or (whole and minimum == 1 and not min_open):
            return f"a positive {'integer' if whole else 'number'}"
        return f"{kind} {'>' if min_open else '>='} {shown(minimum)}"
    if maximum is not None:
        return f"{kind} {'<' if max_open else '<='} {shown(maximum)}"
    return kind


def number_problem(value: object, minimum: float | None = None, maximum: float | None = None,
                   *, min_open: bool = False, max_open: bool = False, whole: bool = False,
                   limit: float | None = None, unit: str = "") -> str | None:
    """What is wrong with ``value`` as a number of this rule, or None when nothing is.

    ``minimum`` and ``maximum`` make the range (``min_open``/``max_open``: the bound itself
    is out); ``limit`` is a documented ceiling (a constant of
    :mod:`iotune.settings.bounds`), named with :data:`LIMITS_DOC` when passed; ``unit``
    follows the limit in the message (``s``). A bool is never a number.
    """
    rule = number_rule(minimum, maximum, min_open=min_open, max_open=max_open, whole=whole)
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{value!r} is not {rule}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value!r} is not a finite number (nan, inf and -inf are refused)"
    if whole and not isinstance(value, int):
        return f"{value!r} is not {rule}"
    low = minimum is not None and (value <= minimum if min_open else value < minimum)
    high = maximum is not None and (value >= maximum if max_open else value > maximum)
    if low or high:
        return f"{shown(value)} is not {rule}"
    if limit is not None and value > limit:
        return (f"{shown(value)} is above the limit of {shown(limit)}{' ' + unit if unit else ''}"
                f" ({LIMITS_DOC})")
    return None


def check_number(value: object, where: str, minimum: float | None = None,
                 maximum: float | None = None, *, min_open: bool = False,
                 max_open: bool = False, whole: bool = False, limit: float | None = None,
                 unit: str = "") -> float:
    """``value`` as a float when it obeys the rule of :func:`number_problem`; ConfigError
    ``"<where>: <problem>"`` otherwise."""
    problem = number_problem(value, minimum, maximum, min_open=min_open, max_open=max_open,
                             whole=whole, limit=limit, unit=unit)
    if problem is not None:
        raise ConfigError(f"{where}: {problem}")
    assert isinstance(value, int | float)
    return float(value)
