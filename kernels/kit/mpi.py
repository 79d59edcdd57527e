"""MPI itself, imported on first use: timing phases and the collective helpers kernels share."""

from __future__ import annotations

import contextlib
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

P = TypeVar("P")


def mpi() -> Any:
    """The ``mpi4py.MPI`` module (imported on first use; this starts MPI)."""
    from mpi4py import MPI

    return MPI


def mpi_library_version() -> str:
    """First line of ``MPI_Get_library_version``."""
    text = str(mpi().Get_library_version()).strip()
    return " ".join(text.splitlines()[0].split()) if text else ""


@dataclass
class Phases:
    """Seconds one rank spent opening, writing and closing (close includes fsync)."""

    open: float = 0.0
    write: float = 0.0
    close: float = 0.0

    @property
    def total(self) -> float:
        """open + write + close."""
        return self.open + self.write + self.close


class Stopwatch(Generic[P]):
    """Accumulates ``MPI.Wtime`` intervals into the named fields of ``phases`` (a
    :class:`Phases`, or the read phases of :mod:`.readback`)."""

    def __init__(self, phases: P) -> None:
        self.phases = phases
        self._wtime: Callable[[], float] = mpi().Wtime

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the time spent inside the ``with`` block to phase ``name``."""
        start = self._wtime()
        try:
            yield
        finally:
            setattr(self.phases, name, getattr(self.phases, name) + self._wtime() - start)


def max_over_ranks(comm: Any, named: dict[str, float]) -> dict[str, float]:
    """Each value's maximum over the ranks of ``comm``, same keys (collective)."""
    MPI = mpi()
    values = array("d", named.values())
    comm.Allreduce(MPI.IN_PLACE, values, op=MPI.MAX)
    return dict(zip(named, map(float, values), strict=True))


def max_phases(comm: Any, phases: Phases) -> dict[str, float]:
    """Maximum over ranks of open, write, close and total (every rank gets the result)."""
    return max_over_ranks(comm, {"open": phases.open, "write": phases.write,
                                 "close": phases.close, "total": phases.total})


def exclusive_offset(comm: Any, local: int) -> int:
    """Sum of ``local`` over lower ranks (0 on rank 0), via ``MPI_Exscan``."""
    offset = comm.exscan(local)
    return 0 if comm.rank == 0 or offset is None else int(offset)


def node_names(comm: Any) -> list[str]:
    """Distinct processor names of all ranks, sorted (valid on rank 0, [] elsewhere)."""
    names = comm.gather(mpi().Get_processor_name(), root=0)
    return sorted(set(names)) if comm.rank == 0 else []
