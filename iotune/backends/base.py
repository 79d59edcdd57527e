"""The backend interface and registry.

Each backend's module registers its class with :func:`register_backend` when imported;
importing :mod:`iotune.backends` imports the built-in ones, so the registry is full wherever
a backend is made or looked up by name. This module imports none of them.

A backend's facts are class attributes of its class (:class:`Backend`): its name, the word
its records carry for where their numbers come from, the label shown beside its results,
what it models, and what it can do (probe the storage state, time reads, read back the
settings in effect). Everything that needs one of them asks the class, by name through
:func:`backend_class` when it has only a record's or a result's backend name.
"""

from __future__ import annotations

import socket
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from iotune.errors import ConfigError
from iotune.settings.values import config_key
from iotune.store import now_iso
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
    """Measures configurations; never raises for a failed run (failures are records).

    Each concrete backend states its facts as the class attributes below.
    """

    #: The name it is chosen by (``--backend``, ``backend.name``) and every record carries
    #: (``backend``).
    name: ClassVar[str] = ""
    #: The word every record carries for where its numbers come from (``provenance``):
    #: ``measured``, ``simulated``, ``replayed``.
    provenance: ClassVar[str] = ""
    #: What people are shown beside its results: capitals when the numbers are not
    #: measured, so they are never taken for measurements.
    label: ClassVar[str] = ""
    #: What its numbers come from, in a few words (the ``--backend`` help).
    models: ClassVar[str] = ""
    #: Whether it takes storage-state probes (``--state-aware`` needs them).
    probes: ClassVar[bool] = False
    #: Whether its runs time reads (a ``read`` or ``total`` target needs them).
    times_reads: ClassVar[bool] = False
    #: Whether its runs read back the settings in effect, so that a recommendation keeps
    #: only settings shown to take effect.
    reads_back: ClassVar[bool] = False
    #: Whether it runs on a simulated system preset (``backend.system``), whose size it
    #: knows: without a space to search, iotune searches the paper's space on it.
    simulates: ClassVar[bool] = False

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
            "provenance": self.provenance,
            "system": system,
            "source": self.source(),
            "host": socket.gethostname(),
            "started_at": now_iso(),
        }


B = TypeVar("B", bound=type[Backend])


def register_backend(cls: B) -> B:
    """Register the backend class ``cls`` under its :attr:`~Backend.name`; ``cls(config)``
    makes the backend. Backends are offered and reported in the order they register."""
    _REGISTRY[cls.name] = cls
    return cls


_REGISTRY: dict[str, type[Backend]] = {}


def known_backends() -> list[str]:
    """The names backends are registered under, in the order they registered."""
    return list(_REGISTRY)


def backend_class(name: str, where: str = "backend.name") -> type[Backend]:
    """The class of the backend registered as ``name``: its facts; ConfigError naming
    ``where`` (the option or key that gave the name) and the known names otherwise."""
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ConfigError(f"{where}: {name!r} is not one of {', '.join(known_backends())}") \
            from None


def provenance_of(name: str) -> str:
    """The provenance word of the backend registered as ``name``; for a name no backend
    is registered under (records of another iotune), the name itself."""
    cls = _REGISTRY.get(name)
    return cls.provenance if cls is not None else name


def make_backend(config: Config, name: str | None = None) -> Backend:
    """The backend called ``name`` (default: the config's) set up from ``config``;
    ConfigError for a name no backend is registered under (see :func:`backend_class`)."""
    return backend_class(name or config.backend.name)(config)  # type: ignore[call-arg]
