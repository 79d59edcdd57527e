"""The ``vpic`` kernel: VPIC-IO's particle write through HDF5 (``kernels/vpicio.py``).

Per timestep, one group of 8 one-dimensional datasets (x, y, z, ux, uy, uz and two ids;
4 bytes each, 32 bytes per particle) in one shared file. Each dataset is one collective
write call (H5Part's default) in which rank ``i`` writes one contiguous slab of
``4 * particles_per_rank`` bytes at offset ``i`` times that size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iotune.kernel_args import ACCESS_MODES, VPIC_PARAMS, param_named
from iotune.kernel_specs.registry import register_kernel
from iotune.kernel_specs.spec import KernelSpec
from iotune.settings.values import normalise_value
from iotune.workload.genes import SIZE_GRID, Gene, Variant, access_arg, switch
from iotune.workload.modelled import modelled_file, request_pattern
from iotune.workload.pattern import PatternDefaults

if TYPE_CHECKING:
    from iotune.workload.counters import FileCounters
    from iotune.workload.genes import LogHints
    from iotune.workload.pattern import Pattern

BYTES_PER_PARTICLE = 32
DATASETS = 8
#: Bytes of one particle in one dataset: a rank's slab is this times its particles.
BYTES_PER_VALUE = BYTES_PER_PARTICLE // DATASETS
_TIMESTEP_GRID = tuple(range(1, 17))
_PARTICLES = param_named(VPIC_PARAMS, "particles_per_rank")


class VpicKernel(KernelSpec):
    """VPIC-IO: all three optional features."""

    def bytes_per_rank(self, params: Mapping[str, Any]) -> int:
        return (BYTES_PER_PARTICLE * int(self.arg(params, "particles_per_rank"))
                * int(self.arg(params, "timesteps")))

    def workload(self, params: Mapping[str, Any], ranks: int | None) -> dict[str, Any]:
        """HDF5, one shared file, :data:`DATASETS` datasets per timestep; each rank writes
        one contiguous slab of :data:`BYTES_PER_VALUE` bytes per particle per dataset,
        collectively."""
        slab = BYTES_PER_VALUE * int(self.arg(params, "particles_per_rank"))
        return {"layer": "hdf5", "files": 1,
                "datasets": DATASETS * int(self.arg(params, "timesteps")),
                "bytes_per_rank_per_dataset": slab, "pattern": "contiguous",
                "collective": self.collective_default or None, "request_bytes": slab}

    def pattern_defaults(self) -> PatternDefaults:
        return PatternDefaults(api="hdf5", collective=self.collective_default,
                               variables=DATASETS,
                               fixed=("transfer_size", "file_per_process"))

    def sim_pattern(self, ranks: int, params: Mapping[str, Any],
                    nodes: int | None = None) -> Pattern:
        """All timesteps as one write of ``DATASETS`` variables (the model has no groups)."""
        return self.pattern(ranks, self.bytes_per_rank(params), nodes=nodes)

    def darshan_file(self, args: Mapping[str, Any], ranks: int,
                     collective: bool) -> FileCounters:
        """One shared HDF5 file; a group and ``DATASETS`` datasets per timestep."""
        timesteps = int(args["timesteps"])
        per_rank = DATASETS * timesteps
        size = BYTES_PER_VALUE * int(args["particles_per_rank"])
        # With several ranks each slab is its own run (the other ranks' slabs lie between).
        runs = 1 if ranks == 1 else per_rank
        write = request_pattern(ranks, per_rank, size, runs, zero_start_ranks=0)
        # access read|both reads each rank's slab of every dataset back, like the write.
        access = self.access(args)
        return modelled_file("vpic.h5", ranks, ranks, api="hdf5",
                             write=None if access == "read" else write,
                             read=write if args["verify"] else None,
                             timed_read=None if access == "write" else write,
                             collective=collective,
                             fsync=bool(args["fsync"]), objects=(DATASETS + 1) * timesteps,
                             datasets=per_rank)

    def match_variants(self, size: int, requests_per_rank: int, access: str,
                       syncs: bool) -> list[Variant]:
        args = {"particles_per_rank": max(1, size // BYTES_PER_VALUE),
                "timesteps": max(1, round(requests_per_rank / DATASETS)),
                "verify": False, "fsync": syncs, **access_arg(access)}
        return [Variant("vpic-collective", dict(args), True),
                Variant("vpic-independent", dict(args), False)]

    def proxy_genes(self, hints: LogHints) -> list[Gene]:
        particles = {s // BYTES_PER_VALUE for s in (*SIZE_GRID, *hints.sizes)
                     if s >= BYTES_PER_VALUE}
        steps = {max(1, round(hints.requests_per_rank / DATASETS))}
        return [Gene("particles_per_rank", tuple(sorted(particles))),
                Gene("timesteps", tuple(sorted(set(_TIMESTEP_GRID) | steps))),
                switch("collective"), switch("verify"), switch("fsync"),
                Gene("access", ACCESS_MODES, False)]

    def proxy_seed(self, size: int, hints: LogHints) -> dict[str, Any]:
        return {"particles_per_rank": size // BYTES_PER_VALUE, "access": hints.access}

    def proxy_args(self, values: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        args = {"particles_per_rank": int(values["particles_per_rank"]),
                "timesteps": int(values["timesteps"]),
                "verify": values["verify"], "fsync": values["fsync"],
                **access_arg(str(values["access"]))}
        return args, bool(values["collective"])


VPIC = register_kernel(VpicKernel(
    "vpic", "vpicio.py", "VPIC-IO particle write: 8 1-D datasets per timestep (HDF5)",
    VPIC_PARAMS, collective_default=True,
))


def vpic_pattern(ranks: int, particles_per_rank: int = _PARTICLES.default,
                 nodes: int | None = None) -> Pattern:
    """The simulated pattern of the ``vpic`` kernel with ``particles_per_rank`` particles
    (by default the kernel's) in one timestep."""
    particles = normalise_value(_PARTICLES.type, particles_per_rank, "pattern.particles_per_rank")
    return VPIC.sim_pattern(ranks, {"particles_per_rank": particles, "timesteps": 1}, nodes)
