"""The write pattern a simulated run performs: kernel, scale and sizes.

A pattern is numbers: every rank writes ``bytes_per_rank`` bytes as ``variables``
contiguous ranges (one per dataset), each in calls of ``transfer_size`` bytes (one call
per range when it is ``None``), into one shared file (rank ``i``'s range of a variable at
offset ``i`` times its size) or one file per process; ``api`` is ``posix`` (no MPI-IO, so
MPI-IO hints have no effect), ``mpiio`` or ``hdf5``; ``collective`` is whether the
application issues collective write calls.

``kernel`` names the kernel whose pattern it is. Patterns come from the kernel specs
(:mod:`iotune.kernel_specs`), which turn a kernel's arguments into one
(:meth:`~iotune.kernel_specs.spec.KernelSpec.sim_pattern`), fill the fields a caller leaves
unset from their :class:`PatternDefaults` and forbid those the kernel has no choice over
(:meth:`~iotune.kernel_specs.spec.KernelSpec.pattern`). This module imports no kernel: it
checks that a pattern's numbers hold together, whichever kernel they describe.

Each rank's data in one call is a single contiguous range and ranks' ranges follow rank
order, so the accesses of a call are *not interleaved*: ROMIO's ``automatic`` choice for
``romio_cb_write`` then writes independently (see :func:`Pattern.interleaved`).
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.errors import ConfigError
from iotune.kernel_args import APIS


@dataclass(frozen=True)
class PatternDefaults:
    """A kernel's values for the :class:`Pattern` fields a caller leaves unset.

    ``transfer_size`` ``None`` means one write call per variable. ``fixed`` names the
    fields the kernel has no choice over: they must stay unset (``None`` or ``False``).
    """

    api: str
    collective: bool
    variables: int = 1
    transfer_size: int | None = None
    fixed: tuple[str, ...] = ()


@dataclass(frozen=True)
class Pattern:
    """One write pattern (see the module docstring).

    Build one from a kernel's arguments with its spec's ``sim_pattern``, from sizes with
    its spec's ``pattern`` (which fills ``None`` fields from the kernel's
    :class:`PatternDefaults`), or with the shorthands
    :func:`~iotune.kernel_specs.vpic.vpic_pattern` and :func:`~iotune.kernel_specs.ior.ior_pattern`.
    ``api`` and ``collective`` must be given; ``variables`` ``None`` is one variable.
    ``nodes`` of ``None`` means ``ceil(ranks / cores_per_node)`` of the simulated system. A
    configuration column ``collective`` overrides ``collective``. ConfigError names the
    field whose rule a pattern breaks.
    """

    kernel: str
    ranks: int
    bytes_per_rank: int
    nodes: int | None = None
    transfer_size: int | None = None
    file_per_process: bool = False
    api: str | None = None
    collective: bool | None = None
    variables: int | None = None

    def __post_init__(self) -> None:
        where = "pattern"
        if self.variables is None:
            object.__setattr__(self, "variables", 1)
        for key in ("ranks", "bytes_per_rank", "variables"):
            _positive(getattr(self, key), f"{where}.{key}")
        if self.nodes is not None:
            _positive(self.nodes, f"{where}.nodes")
            if self.nodes > self.ranks:
                raise ConfigError(
                    f"{where}.nodes: {self.nodes} exceeds ranks ({self.ranks}); "
                    "every node runs at least one rank"
                )
        if self.api not in APIS:
            raise ConfigError(f"{where}.api: {self.api!r} is not one of {', '.join(APIS)}")
        if not isinstance(self.collective, bool):
            raise ConfigError(f"{where}.collective: {self.collective!r} is not a boolean")
        if self.bytes_per_rank % self.vars:
            raise ConfigError(
                f"{where}.variables: {self.vars} does not divide bytes_per_rank "
                f"({self.bytes_per_rank})"
            )
        if self.transfer_size is not None:
            _positive(self.transfer_size, f"{where}.transfer_size")
            if self.extent_bytes % self.transfer_size:
                per = "" if self.vars == 1 else f" / variables ({self.vars})"
                raise ConfigError(
                    f"{where}.transfer_size: {self.transfer_size} does not divide "
                    f"bytes_per_rank ({self.bytes_per_rank}){per}; a rank's block must be a "
                    "multiple of its transfer size"
                )

    @property
    def vars(self) -> int:
        """Variables (datasets) written, each one contiguous range per rank."""
        return int(self.variables or 1)

    @property
    def is_collective(self) -> bool:
        """Whether the application issues collective write calls."""
        return bool(self.collective)

    @property
    def total_bytes(self) -> int:
        """Bytes written by the whole run."""
        return self.ranks * self.bytes_per_rank

    @property
    def calls(self) -> int:
        """Write calls per rank: each variable's range in calls of ``transfer_size`` bytes,
        or in one call without a transfer size."""
        if self.transfer_size is None:
            return self.vars
        return self.vars * (self.extent_bytes // self.transfer_size)

    @property
    def bytes_per_call(self) -> int:
        """Contiguous bytes one rank writes in one call."""
        return self.bytes_per_rank // self.calls

    @property
    def extents(self) -> int:
        """Contiguous ranges each rank writes: one per variable."""
        return self.vars

    @property
    def extent_bytes(self) -> int:
        """Bytes of one contiguous range of one rank (the client cache merges its calls)."""
        return self.bytes_per_rank // self.extents

    @property
    def interleaved(self) -> bool:
        """Whether ranks' ranges within one call interleave (ROMIO's ``automatic`` test).

        ROMIO enables collective buffering under ``romio_cb_write=automatic`` only when the
        ranks' requested ranges of a collective call interleave. A pattern writes one
        contiguous, rank-ordered range per rank and call, so this is ``False``.
        """
        return False

    @property
    def uses_mpiio(self) -> bool:
        """Whether MPI-IO (and so its hints and collective buffering) is in the I/O path."""
        return self.api != "posix"

    def nodes_on(self, cores_per_node: int) -> int:
        """The node count: ``nodes`` if given, else ``ceil(ranks / cores_per_node)``."""
        return self.nodes if self.nodes is not None else -(-self.ranks // cores_per_node)


def _positive(value: object, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise ConfigError(f"{where}: {value!r} is not a positive integer")
