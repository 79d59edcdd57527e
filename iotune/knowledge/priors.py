"""What a knowledge base gives one tune: the contract between a query and the tune.

A query (:mod:`iotune.knowledge.query`) finds the entries of the same system whose
workloads are similar to the one being tuned and returns :class:`Priors`. The tune uses
them to size the race's share from the first run (``noise``) and to race the candidates
that won for similar workloads first (``candidates``); a recommendation still needs the
workload's own runs to beat the default by the race's rule. This module holds data only,
so the tune can take priors without importing the knowledge base's database.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class KnownNoise:
    """The run-to-run spread of log times on the system, pooled over similar workloads.

    ``sigma`` is the pooled standard deviation of log times around each configuration's
    own mean, ``degrees_of_freedom`` what it pools (runs less configurations), ``runs`` the
    runs behind it, ``where`` the system it was measured on (``cori/lustre``).
    """

    sigma: float
    degrees_of_freedom: int
    runs: int
    where: str

    def text(self) -> str:
        return f"noise {self.sigma:.2f} from {self.runs} runs on {self.where}"


@dataclass(frozen=True)
class KnownCandidate:
    """A configuration that did well for similar workloads.

    ``settings`` are a configuration's settings as iotune names them (the names and values
    of :mod:`iotune.settings.values`), ``workloads`` the similar workloads where it was
    measured beside the default, ``wins`` those where it was the fastest and at least 10%
    faster than the default, ``median_speedup`` the median over those workloads of the
    default's median time over its median time.
    """

    settings: Mapping[str, Any]
    wins: int
    workloads: int
    median_speedup: float

    def text(self) -> str:
        shown = " ".join(f"{k}={v}" for k, v in self.settings.items()) or "(default)"
        return (f"{shown} won {self.wins} of {self.workloads}, "
                f"median {self.median_speedup:.1f}x")


@dataclass(frozen=True)
class Priors:
    """What one query of a knowledge base found for one tune.

    ``base`` names the knowledge base (its file name and build id, never a path),
    ``system`` the system matched, ``similar_workloads`` how many workloads of that system
    were close enough to use; ``noise`` is None and ``candidates`` empty when nothing
    similar was found, and the tune then behaves as without a knowledge base.
    """

    base: str
    system: str
    similar_workloads: int
    noise: KnownNoise | None = None
    candidates: tuple[KnownCandidate, ...] = field(default_factory=tuple)

    @property
    def empty(self) -> bool:
        return self.noise is None and not self.candidates

    def text(self) -> str:
        """One line for the tune's progress: what the knowledge base contributed."""
        if self.empty:
            return (f"knowledge {self.base}: no similar workload on {self.system or 'this system'}"
                    "; tuning from this workload's runs only")
        parts = []
        if self.noise is not None:
            parts.append(self.noise.text())
        if self.candidates:
            plural = "s" if len(self.candidates) != 1 else ""
            best = self.candidates[0].text()
            parts.append(f"{len(self.candidates)} candidate{plural} from "
                         f"{self.similar_workloads} similar workloads: {best}")
        return f"knowledge {self.base}: " + "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """What a tuned file records of it."""
        return {
            "base": self.base, "system": self.system,
            "similar_workloads": self.similar_workloads,
            "noise": None if self.noise is None else {
                "sigma": round(self.noise.sigma, 4), "runs": self.noise.runs,
                "degrees_of_freedom": self.noise.degrees_of_freedom,
                "where": self.noise.where},
            "candidates": [{"settings": dict(c.settings), "wins": c.wins,
                            "workloads": c.workloads,
                            "median_speedup": round(c.median_speedup, 3)}
                           for c in self.candidates],
        }
