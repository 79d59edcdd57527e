"""Backends answer "what does this configuration cost?".

- ``mpi``: real runs of a kernel through a launcher (measured numbers);
- ``sim``: an analytic model of a Lustre system (simulated numbers);
- ``replay``: answers from recorded measurements (replayed numbers).

Every record a backend produces says which backend made it (``backend``) and in words
(``provenance``: measured, simulated or replayed), so simulated numbers are never shown as
measured.

Each built-in backend's module registers its class when imported; importing this package
imports them all, so the registry in :mod:`iotune.backends.base` is full wherever a backend
is made or looked up by name. They are imported in the order they are offered
(``--backend``) and reported in: real runs first.
"""

from iotune.backends import mpi, sim, replay  # noqa: F401, I001
from iotune.backends.base import (
    Backend,
    RunRequest,
    backend_class,
    known_backends,
    make_backend,
    provenance_of,
)

__all__ = ["Backend", "RunRequest", "backend_class", "known_backends", "make_backend",
           "provenance_of"]
