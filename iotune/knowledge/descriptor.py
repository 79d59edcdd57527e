"""The workload descriptor: what a workload is, the same whatever produced its runs.

A descriptor says what the I/O does, not how it was tuned: the operation, how many bytes
each rank moves, the ranks and ranks per node, files and datasets per job, the access
pattern and the I/O layer. Fields a source does not know are None; similarity
(:func:`iotune.knowledge.similarity`) compares only what both sides know. The keys are
documented in ``docs/knowledge.md`` so that anyone can write one.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: The keys of a ``FILE.workload.yaml`` sidecar (the production data's README) read into a
#: descriptor or a system; no other key is read.
SIDECAR_KEYS = ("system", "file_system", "mpi", "layer", "operation", "ranks", "ranks_per_node",
                "files", "datasets", "bytes_per_rank_per_dataset", "bytes_per_rank", "source")


@dataclass(frozen=True)
class SystemKey:
    """Where the runs were measured: ``name`` (``cori``), ``file_system`` (``lustre``),
    ``mpi`` (library, with its version where known) and the I/O ``layer`` is the
    workload's. Tunes use knowledge only of the same ``name`` and ``file_system``."""

    name: str
    file_system: str | None = None
    mpi: str | None = None

    def text(self) -> str:
        return self.name + (f"/{self.file_system}" if self.file_system else "")


@dataclass(frozen=True)
class WorkloadDescriptor:
    """What one workload does. ``operation``: ``write`` or ``read``; ``layer``: ``posix``,
    ``mpiio`` or ``hdf5``; ``pattern``: ``contiguous`` or ``strided``; ``collective``:
    whether the ranks use collective I/O; ``request_bytes``: a typical request's size."""

    operation: str | None = None
    layer: str | None = None
    ranks: int | None = None
    ranks_per_node: int | None = None
    files: int | None = None
    datasets: int | None = None
    bytes_per_rank: int | None = None
    bytes_per_rank_per_dataset: int | None = None
    pattern: str | None = None
    collective: bool | None = None
    request_bytes: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}
