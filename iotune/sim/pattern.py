"""The write pattern a simulated run performs: kernel, scale and sizes.

Two kernels are modelled:

``vpic``
    VPIC-IO through H5Part: every rank writes ``bytes_per_rank`` split over ``variables``
    (8: x, y, z, ux, uy, uz, and two ids; 4 bytes each, 32 bytes per particle) one-dimensional
    datasets. Each variable is one collective write call in which rank ``i`` writes one
    contiguous block of ``bytes_per_rank / variables`` bytes at offset ``i`` times that size.
``ior``
    IOR: every rank writes a block of ``bytes_per_rank`` bytes in calls of ``transfer_size``
    bytes, into one shared file (rank ``i`` owns the ``i``-th block) or one file per process.
    ``api`` is ``posix`` (no MPI-IO, so MPI-IO hints have no effect), ``mpiio`` or ``hdf5``.

In both, each rank's data in one call is a single contiguous range and ranks' ranges follow
rank order, so the accesses of a call are *not interleaved*: ROMIO's ``automatic`` choice for
``romio_cb_write`` then writes independently (see :func:`Pattern.interleaved`).
"""

from __future__ import annotations

from dataclasses import dataclass

from iotune.errors import ConfigError

KERNELS = ("vpic", "ior")
APIS = ("posix", "mpiio", "hdf5")
VPIC_BYTES_PER_PARTICLE = 32
VPIC_VARIABLES = 8
IOR_DEFAULT_TRANSFER = 256 * 1024


@dataclass(frozen=True)
class Pattern:
    """One write pattern. Use :meth:`vpic` or :meth:`ior` to build one with checks.

    ``nodes`` of ``None`` means ``ceil(ranks / cores_per_node)`` of the simulated system.
    ``collective`` is whether the application issues collective write calls (H5Part's VPIC-IO
    does; IOR does with ``-c``); a configuration column ``collective`` overrides it.
    ``None`` fields take the kernel's defaults: ``vpic``: api ``hdf5``, collective, 8
    variables; ``ior``: api ``posix``, independent, one variable, 256 KiB transfers.
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
        if self.kernel not in KERNELS:
            raise ConfigError(f"{where}.kernel: '{self.kernel}' is not one of {', '.join(KERNELS)}")
        vpic = self.kernel == "vpic"
        defaults = {
            "api": "hdf5" if vpic else "posix",
            "collective": vpic,
            "variables": VPIC_VARIABLES if vpic else 1,
            "transfer_size": None if vpic else IOR_DEFAULT_TRANSFER,
        }
        for key, value in defaults.items():
            if getattr(self, key) is None:
                object.__setattr__(self, key, value)
        if vpic and self.transfer_size is not None:
            raise ConfigError(f"{where}.transfer_size: only the ior kernel takes a transfer size")
        if vpic and self.file_per_process:
            raise ConfigError(f"{where}.file_per_process: only the ior kernel writes one file "
                              "per process")
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
        if self.transfer_size is not None:
            _positive(self.transfer_size, f"{where}.transfer_size")
            if self.bytes_per_rank % self.transfer_size:
                raise ConfigError(
                    f"{where}.transfer_size: {self.transfer_size} does not divide "
                    f"bytes_per_rank ({self.bytes_per_rank}); IOR's block must be a multiple "
                    "of its transfer size"
                )
        if not isinstance(self.collective, bool):
            raise ConfigError(f"{where}.collective: {self.collective!r} is not a boolean")
        if self.bytes_per_rank % self.vars:
            raise ConfigError(
                f"{where}.variables: {self.vars} does not divide bytes_per_rank "
                f"({self.bytes_per_rank})"
            )

    @classmethod
    def vpic(cls, ranks: int, particles_per_rank: int = 8 * 2**20,
             nodes: int | None = None) -> Pattern:
        """VPIC-IO with ``particles_per_rank`` particles of 32 bytes (default 8 Mi = 256 MiB)."""
        _positive(particles_per_rank, "pattern.particles_per_rank")
        return cls(kernel="vpic", ranks=ranks, nodes=nodes,
                   bytes_per_rank=particles_per_rank * VPIC_BYTES_PER_PARTICLE,
                   api="hdf5", collective=True, variables=VPIC_VARIABLES)

    @classmethod
    def ior(cls, ranks: int, bytes_per_rank: int, *, transfer_size: int = IOR_DEFAULT_TRANSFER,
            nodes: int | None = None, file_per_process: bool = False, api: str = "posix",
            collective: bool = False) -> Pattern:
        """IOR writing ``bytes_per_rank`` per rank in ``transfer_size`` calls (IOR's defaults)."""
        return cls(kernel="ior", ranks=ranks, nodes=nodes, bytes_per_rank=bytes_per_rank,
                   transfer_size=transfer_size, file_per_process=file_per_process, api=api,
                   collective=collective, variables=1)

    @property
    def vars(self) -> int:
        """Datasets written (VPIC variables); 1 for IOR."""
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
        """Write calls per rank: one per variable (VPIC) or per transfer (IOR)."""
        if self.kernel == "vpic":
            return self.vars
        return self.bytes_per_rank // (self.transfer_size or self.bytes_per_rank)

    @property
    def bytes_per_call(self) -> int:
        """Contiguous bytes one rank writes in one call."""
        return self.bytes_per_rank // self.calls

    @property
    def extents(self) -> int:
        """Contiguous ranges each rank writes: one per variable (VPIC), one block (IOR)."""
        return self.vars if self.kernel == "vpic" else 1

    @property
    def extent_bytes(self) -> int:
        """Bytes of one contiguous range of one rank (the client cache merges its calls)."""
        return self.bytes_per_rank // self.extents

    @property
    def interleaved(self) -> bool:
        """Whether ranks' ranges within one call interleave (ROMIO's ``automatic`` test).

        ROMIO enables collective buffering under ``romio_cb_write=automatic`` only when the
        ranks' requested ranges of a collective call interleave. Both modelled kernels write
        one contiguous, rank-ordered block per rank and call, so this is ``False``.
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
