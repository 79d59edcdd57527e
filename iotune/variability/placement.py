r"""Prediction-guided data placement: how much data to send to the idle targets.

Wan et al. (section V.A): ``n_idle`` targets are idle and ``n_busy`` busy; writing a unit of
data takes ``T_idle`` on an idle target and ``T_busy`` on a busy one (the means of the
mixture's components, :attr:`~iotune.variability.mixture.Component.mean`). Of ``S`` bytes,
``alpha S`` go to the idle targets, spread evenly, the rest to the busy ones. Both groups
finish together when ``T_idle alpha S / n_idle = T_busy (1 - alpha) S / n_busy``, so::

    alpha = n_idle T_busy / (n_idle T_busy + n_busy T_idle)                        (1)

Expected speedup over even placement (``S / n`` per target, ``n = n_idle + n_busy``). The
write ends when its slowest target ends, so even placement takes
``t_even = (S / n) max(T_idle, T_busy)`` (over the groups that have targets). With (1) both
groups take ``t_alpha = T_idle alpha S / n_idle``; substituting (1)::

    t_alpha = S T_idle T_busy / (n_idle T_busy + n_busy T_idle)                     (2)

    speedup = t_even / t_alpha = (n_idle T_busy + n_busy T_idle) max(T_idle, T_busy)
                                 / (n T_idle T_busy)                                (3)

which for ``T_busy >= T_idle`` is ``(n_idle r + n_busy) / n`` with ``r = T_busy / T_idle``:
the share of idle targets times the slowdown of the busy state, plus the busy share. It is 1
when all targets are in one state, and at most ``r``. The aggregate throughput grows by the
same factor. Expected times use the state means and ignore the spread within a state (the
slowest of many targets is slower than their mean), as the paper's model does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError


@dataclass(frozen=True)
class Placement:
    """The advice for ``n_idle`` idle and ``n_busy`` busy targets.

    ``alpha`` is the share of the data for the idle targets (equation 1); ``idle_share`` and
    ``busy_share`` the share of each *single* target (``alpha / n_idle``,
    ``(1 - alpha) / n_busy``; 0 for an empty group); ``speedup`` equation (3).
    """

    n_idle: int
    n_busy: int
    t_idle: float
    t_busy: float
    alpha: float
    idle_share: float
    busy_share: float
    even_time: float
    placed_time: float

    @property
    def speedup(self) -> float:
        return self.even_time / self.placed_time

    def as_dict(self) -> dict[str, Any]:
        return {"n_idle": self.n_idle, "n_busy": self.n_busy, "t_idle": self.t_idle,
                "t_busy": self.t_busy, "alpha": self.alpha,
                "share_per_idle_target": self.idle_share,
                "share_per_busy_target": self.busy_share,
                "even_time_per_unit": self.even_time, "placed_time_per_unit": self.placed_time,
                "speedup": self.speedup}


def idle_share(n_idle: int, n_busy: int, t_idle: float, t_busy: float) -> float:
    """``alpha = n_idle T_busy / (n_idle T_busy + n_busy T_idle)`` (equation 1)."""
    _check(n_idle, n_busy, t_idle, t_busy)
    return n_idle * t_busy / (n_idle * t_busy + n_busy * t_idle)


def placement(n_idle: int, n_busy: int, t_idle: float, t_busy: float) -> Placement:
    """The placement of equation (1) with its expected times per unit of data (``S = 1``)
    and speedup over even placement (equations 2 and 3). Raises ConfigError for counts that
    are negative or both zero, or times that are not positive."""
    alpha = idle_share(n_idle, n_busy, t_idle, t_busy)
    n = n_idle + n_busy
    slowest = max(t for t, k in ((t_idle, n_idle), (t_busy, n_busy)) if k > 0)
    even = slowest / n
    placed = t_idle * t_busy / (n_idle * t_busy + n_busy * t_idle)
    return Placement(n_idle, n_busy, t_idle, t_busy, alpha,
                     alpha / n_idle if n_idle else 0.0,
                     (1 - alpha) / n_busy if n_busy else 0.0, even, placed)


def _check(n_idle: int, n_busy: int, t_idle: float, t_busy: float) -> None:
    for name, value in (("--idle", n_idle), ("--busy", n_busy)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise ConfigError(f"{name}: {value!r} is not a target count (an integer >= 0)")
    if n_idle + n_busy == 0:
        raise ConfigError("--idle/--busy: 0 targets; at least one target must be idle or busy")
    for name, time_value in (("--t-idle", t_idle), ("--t-busy", t_busy)):
        if isinstance(time_value, bool) or not isinstance(time_value, int | float) or not (
                math.isfinite(time_value) and time_value > 0):
            raise ConfigError(f"{name}: {time_value!r} is not a positive time")
