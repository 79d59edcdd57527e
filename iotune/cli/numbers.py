"""The option types of every numeric flag: no number reaches a command unbounded or unreal.

:class:`BoundedInt` and :class:`FiniteFloat` are click's ranges with an upper bound that
must be given (a constant of :mod:`iotune.settings.bounds` where no rule of the option
gives one), and :class:`FiniteFloat` refuses ``nan``, ``inf`` and ``-inf`` before its
range is looked at (click's own range lets ``nan`` through, every comparison with it being
false). click turns the failure into ``Invalid value for '--flag': <value and rule>``, which
the CLI prints as its one error line before the command starts, so nothing has run and no
file exists yet.
"""

from __future__ import annotations

import math
from typing import Any

import click

from iotune.settings.bounds import MAX_INTEGER, MAX_SECONDS
from iotune.settings.numbers import LIMITS_DOC, shown


class BoundedInt(click.IntRange):
    """An integer in [``min``, ``max``]; ``max`` defaults to :data:`MAX_INTEGER` (exact in
    a JSON store). ``limit``: ``max`` is a documented limit (the message then says where
    the limits are listed) rather than a rule of the option itself."""

    def __init__(self, min: int | None = None, max: int = MAX_INTEGER, *,
                 limit: bool = True) -> None:
        super().__init__(min=min, max=max)
        self.limit = limit

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = click.INT.convert(value, param, ctx)
        if self.limit and self.max is not None and number > self.max:
            self.fail(f"{number} is above the limit of {self.max:,} "
                      f"({super()._describe_range()}; {LIMITS_DOC})", param, ctx)
        return super().convert(number, param, ctx)

    def _describe_range(self) -> str:
        """click's ``1<=x<=1000``; ``x>=1`` when the bound is only :data:`MAX_INTEGER`."""
        if self.max == MAX_INTEGER and self.min is not None:
            return f"x>={self.min}"
        return super()._describe_range()


class FiniteFloat(click.FloatRange):
    """A finite number in the range given; ``max`` is required (a rule of the option, or a
    documented limit when ``limit`` is set: the message then names where the limits are
    listed)."""

    def __init__(self, min: float | None, max: float, *, min_open: bool = False,
                 max_open: bool = False, limit: bool = False) -> None:
        super().__init__(min=min, max=max, min_open=min_open, max_open=max_open)
        self.limit = limit

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number (nan, inf and -inf are refused)",
                      param, ctx)
        if self.limit and self.max is not None and number > self.max:
            self.fail(f"{shown(number)} is above the limit of {shown(self.max)} "
                      f"({self._describe_range()}; {LIMITS_DOC})", param, ctx)
        return super().convert(number, param, ctx)


#: A positive number of seconds, at most :data:`MAX_SECONDS` (a year).
SECONDS = FiniteFloat(0, MAX_SECONDS, min_open=True, limit=True)

#: A random seed: an integer >= 0 (numpy's generators refuse a negative one), exact in JSON.
SEED = BoundedInt(0)
