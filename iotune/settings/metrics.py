"""What a run's figure is called, in what unit, and which way is better: a run's *metric*.

A kernel's runs are timed (seconds, lower is better), and what the time spans is its
target's (:func:`iotune.store.targets.metric_of` gives a run's metric). A user's program
(the command kernel) is measured by its wall time, its I/O time, or a number read from its
output by a regular expression that carries its own ``label`` and ``unit``: ``s``
(seconds, lower is better) or ``MiB/s`` (a bandwidth, higher is better).

Internally everything is minimised as a time: the store's ``result.times_s.total``, the
model, the search and the race all see seconds, or for a bandwidth its reciprocal, seconds
per MiB. :meth:`Metric.minimised` and :meth:`Metric.shown` are the one place that converts
between the two; a speedup (default over best, of the minimised times) is then the same
ratio in either unit: for a bandwidth, the best's MiB/s over the default's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from iotune.errors import ConfigError
from iotune.printable import one_line

#: The units a metric may have, each with the direction that is better.
UNITS = {"s": "lower", "MiB/s": "higher"}
#: Which match of a regular-expression metric counts when the output holds several.
MATCHES = ("last", "first")
#: What the command kernel's built-in metrics measure, in words.
BUILT_IN = {
    "wall": "the program's wall time (launcher and start-up included)",
    "io_time": "the slowest rank's time in MPI-IO write calls (preload library)",
}


@dataclass(frozen=True)
class Metric:
    """A run's figure: its ``label`` (what it measures, in words) and ``unit``."""

    label: str
    unit: str = "s"

    @property
    def higher_is_better(self) -> bool:
        return UNITS[self.unit] == "higher"

    @property
    def better(self) -> str:
        """``lower`` or ``higher``: which way is better."""
        return UNITS[self.unit]

    @property
    def column(self) -> str:
        """A table's column name: the label and the unit."""
        return f"{self.label} ({self.unit})"

    def minimised(self, value: float) -> float:
        """The value the tuner minimises for a figure ``value`` in this unit (> 0)."""
        return 1.0 / value if self.higher_is_better else value

    def shown(self, minimised: float) -> float:
        """The figure in this unit of a minimised value (> 0): the inverse of
        :meth:`minimised`."""
        return 1.0 / minimised if self.higher_is_better else minimised

    def shown_interval(self, low: float, high: float) -> tuple[float, float]:
        """A minimised interval in this unit, low end first."""
        ends = sorted((self.shown(low), self.shown(high)))
        return ends[0], ends[1]

    def document(self) -> dict[str, str]:
        """The metric as the tuned file and JSON output hold it."""
        return {"label": self.label, "unit": self.unit, "better": self.better}


def check_label(label: Any, where: str) -> str:
    """``label`` stripped, when it is one line of text; ConfigError naming ``where``."""
    if not isinstance(label, str):
        raise ConfigError(f"{where}: {label!r} is not text")
    return one_line(label, where).strip()


def command_metric(params: Mapping[str, Any]) -> Metric:
    """The metric of a command kernel's canonical arguments (``metric``, and for a
    regular expression ``metric_label`` and ``metric_unit`` when given)."""
    name = str(params.get("metric") or "wall")
    if name in BUILT_IN:
        return Metric(BUILT_IN[name])
    unit = str(params.get("metric_unit") or "s")
    label = str(params.get("metric_label") or "") or (
        f"figure matched by {name.partition(':')[2]!r}")
    return Metric(label, unit if unit in UNITS else "s")
