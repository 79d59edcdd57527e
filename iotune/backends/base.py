"""The backend interface and registry.

Each backend's module registers its factory with :func:`register_backend` when imported;
importing :mod:`iotune.backends` imports the built-in ones (mpi, replay, sim), so the
registry is full wherever a backend is made by name. This module imports none of them.
"""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from iotune.errors import ConfigError
from iotune.settings.values import config_key
from iotune.store import PROVENANCE, now_iso
from iotune.store.source import describe_source

if TYPE_CHECKING:
    from iotune.config import Config


@dataclass(frozen=True)
class RunRequest:
    """One configuration of one kernel at one scale (canonical settings and params)."""

    kernel: str
    cores: int
    settings: Mapping[str, Any] = field(default_factory=dict)
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return config_key(self.kernel, self.cores, self.settings, self.params)


class Backend(ABC):
    """Measures configurations; never raises for a failed run (failures are records)."""

    name: str = ""

    @abstractmethod
    def measure(self, request: RunRequest, rep: int = 0) -> dict[str, Any]:
        """One measurement of ``request`` as a store record (without id/schema fields)."""

    def measure_many(self, requests: Sequence[RunRequest], rep: int = 0) -> list[dict[str, Any]]:
        """Measure several requests; backends that can vectorise override this."""
        return [self.measure(r, rep) for r in requests]

    def probe_before(self, size: int) -> float | None:
        """A storage-state probe taken right before a measurement (seconds), or None."""
        return None

    def probe_after(self, record: dict[str, Any], size: int) -> float | None:
        """A probe latency for the state a finished measurement ran in, or None.

        For backends that know the state only once they have measured (``sim``)."""
        return None

    def candidates(self, cores: int) -> list[dict[str, Any]] | None:
        """The configurations this backend can answer at ``cores``; None: any in the space."""
        return None

    def source(self) -> str:
        """What this backend's runs are measured with besides their configuration
        (:mod:`iotune.store.source`): runs of another source are never reused for these,
        counted as done, or fitted on with them."""
        return describe_source(self.name, "")

    def describe(self, request: RunRequest) -> str:
        """What would run, for ``--dry-run``."""
        return f"{self.name}: {request.kernel} at {request.cores} ranks {dict(request.settings)}"

    def base_record(self, request: RunRequest, rep: int, system: str) -> dict[str, Any]:
        """The fields every record has, whatever the backend."""
        return {
            "config_key": request.key,
            "kernel": request.kernel,
            "cores": request.cores,
            "settings": dict(request.settings),
            "params": dict(request.params),
            "rep": rep,
            "backend": self.name,
            "provenance": PROVENANCE[self.name],
            "system": system,
            "source": self.source(),
            "host": socket.gethostname(),
            "started_at": now_iso(),
        }


BackendFactory = Callable[["Config"], Backend]


def register_backend(name: str) -> Callable[[BackendFactory], BackendFactory]:
    """Register a factory ``f(config) -> Backend`` under ``name``."""

    def wrap(factory: BackendFactory) -> BackendFactory:
        _REGISTRY[name] = factory
        return factory

    return wrap


_REGISTRY: dict[str, BackendFactory] = {}


def known_backends() -> list[str]:
    """The names backends are registered under, sorted."""
    return sorted(_REGISTRY)


def make_backend(config: Config, name: str | None = None) -> Backend:
    """The backend called ``name`` (default: the config's) set up from ``config``."""
    chosen = name or config.backend.name
    if chosen not in _REGISTRY:
        raise ConfigError(
            f"backend: unknown backend '{chosen}'; known backends: {', '.join(known_backends())}"
        )
    return _REGISTRY[chosen](config)
