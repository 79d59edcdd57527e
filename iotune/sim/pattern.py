"""The write pattern a simulated run performs: kernel, scale and sizes.

A pattern is numbers: every rank writes ``bytes_per_rank`` bytes as ``variables``
contiguous ranges (one per dataset), each in calls of ``transfer_size`` bytes (one call
per range when it is ``None``), into one shared file (rank ``i``'s range of a variable at
offset ``i`` times its size) or one file per process; ``api`` is ``posix`` (no MPI-IO, so
MPI-IO hints have no effect), ``mpiio`` or ``hdf5``; ``collective`` is whether the
application issues collective write calls.

``kernel`` names the kernel whose pattern it is. That kernel's spec (:mod:`iotune.kernels`)
fills the fields left unset (:class:`PatternDefaults`), forbids those the kernel has no
choice over, and turns the kernel's arguments into a pattern
(:meth:`~iotune.kernels.spec.KernelSpec.sim_pattern`).

Each rank's data in one call is a single contiguous range and ranks' ranges follow rank
order, so the accesses of a call are *not interleaved*: ROMIO's ``automatic`` choice for
``romio_cb_write`` then writes independently (see :func:`Pattern.interleaved`).
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.errors import ConfigError
from iotune.kernels import KERNELS, Feature, kernels_with

APIS = ("posix", "mpiio", "hdf5")
#: What each field a kernel may forbid would give it, for the error naming who takes it.
_FIELD_CHOICES = {
    "transfer_size": ("takes a transfer size", "take a transfer size"),
    "file_per_process": ("writes one file per process", "write one file per process"),
}


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

    Build one from a kernel's arguments with its spec's ``sim_pattern``, or with the
    shorthands :meth:`vpic` and :meth:`ior`. ``nodes`` of ``None`` means
    ``ceil(ranks / cores_per_node)`` of the simulated system. A configuration column
    ``collective`` overrides ``collective``. ``None`` fields take the kernel's defaults
    (:class:`PatternDefaults`).
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
        defaults = _kernel_defaults(self.kernel, where)
        for key in ("api", "collective", "variables", "transfer_size"):
            if getattr(self, key) is None:
                object.__setattr__(self, key, getattr(defaults, key))
        for key in defaults.fixed:
            if getattr(self, key) not in (None, False):
                raise ConfigError(f"{where}.{key}: {_only_kernels_choosing(key)}")
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

    @classmethod
    def vpic(cls, ranks: int, particles_per_rank: int = 8 * 2**20,
             nodes: int | None = None) -> Pattern:
        """The ``vpic`` kernel with ``particles_per_rank`` particles (default 8 Mi = 256 MiB)
        in one timestep."""
        _positive(particles_per_rank, "pattern.particles_per_rank")
        return KERNELS["vpic"].sim_pattern(
            ranks, {"particles_per_rank": particles_per_rank, "timesteps": 1}, nodes)

    @classmethod
    def ior(cls, ranks: int, bytes_per_rank: int, *, transfer_size: int | None = None,
            nodes: int | None = None, file_per_process: bool = False, api: str | None = None,
            collective: bool | None = None) -> Pattern:
        """IOR writing ``bytes_per_rank`` per rank; unset fields take IOR's defaults
        (256 KiB transfers, POSIX, independent)."""
        return cls(kernel="ior", ranks=ranks, nodes=nodes, bytes_per_rank=bytes_per_rank,
                   transfer_size=transfer_size, file_per_process=file_per_process, api=api,
                   collective=collective)

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


def _kernel_defaults(kernel: str, where: str) -> PatternDefaults:
    """The defaults of ``kernel``'s patterns; ConfigError when it has no simulated pattern."""
    simulated = kernels_with(Feature.SIMULATION)
    if kernel not in simulated:
        raise ConfigError(f"{where}.kernel: '{kernel}' is not one of {', '.join(simulated)}")
    return KERNELS[kernel].pattern_defaults()


def _only_kernels_choosing(key: str) -> str:
    """``only the ior kernel takes a transfer size``: the kernels that may set ``key``."""
    free = [k for k in kernels_with(Feature.SIMULATION)
            if key not in KERNELS[k].pattern_defaults().fixed]
    singular, plural = _FIELD_CHOICES[key]
    if len(free) == 1:
        return f"only the {free[0]} kernel {singular}"
    return f"only the kernels {', '.join(free)} {plural}"
