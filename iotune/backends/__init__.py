"""Backends answer "what does this configuration cost?".

- ``mpi``: real runs of a kernel through a launcher (measured numbers);
- ``sim``: an analytic model of a Lustre system (simulated numbers);
- ``replay``: answers from recorded measurements (replayed numbers).

Every record a backend produces says which backend made it (``backend``) and in words
(``provenance``: measured, simulated or replayed), so simulated numbers are never shown as
measured.

Each built-in backend's module registers itself when imported; importing this package
imports them all, so the registry in :mod:`iotune.backends.base` is full wherever a backend
is made by name.
"""

from iotune.backends import mpi, replay, sim  # noqa: F401
from iotune.backends.base import Backend, RunRequest, known_backends, make_backend

__all__ = ["Backend", "RunRequest", "known_backends", "make_backend"]
