"""The ``ior`` kernel: an IOR-style segmented write (``kernels/ior.py``).

Each rank writes ``segments`` blocks of ``block_size`` bytes in requests of
``transfer_size`` bytes, through POSIX (``pwrite``), MPI-IO (``MPI_File_write_at[_all]``)
or HDF5 (one 1-D dataset written by hyperslabs), to one shared file (blocks interleaved by
rank, rank ``i`` owning the ``i``-th block of each segment) or one file per rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from iotune.kernel_args import ACCESS_MODES, APIS, IOR_PARAMS
from iotune.kernel_specs.registry import register_kernel
from iotune.kernel_specs.spec import KernelSpec
from iotune.workload.genes import COUNT_GRID, SIZE_GRID, Gene, Variant, access_arg, switch
from iotune.workload.modelled import modelled_file, request_pattern
from iotune.workload.pattern import PatternDefaults

if TYPE_CHECKING:
    from iotune.workload.counters import FileCounters
    from iotune.workload.genes import LogHints
    from iotune.workload.pattern import Pattern

#: IOR's own defaults (``-a POSIX -t 256k``), which a simulated pattern takes when unset.
IOR_DEFAULT_API = "posix"
IOR_DEFAULT_TRANSFER = 256 * 1024


class IorKernel(KernelSpec):
    """IOR: all three optional features."""

    def bytes_per_rank(self, params: Mapping[str, Any]) -> int:
        return int(self.arg(params, "block_size")) * int(self.arg(params, "segments"))

    def workload(self, params: Mapping[str, Any], ranks: int | None) -> dict[str, Any]:
        """Its ``api`` layer; one shared file, or one per rank with ``file_per_process``;
        strided when a rank writes several segments to a shared file; requests of
        ``transfer_size``."""
        api = str(self.arg(params, "api"))
        per_process = bool(self.arg(params, "file_per_process"))
        hdf5 = api == "hdf5"
        return {"layer": api, "files": (ranks if per_process else 1) if ranks else None,
                "datasets": 1 if hdf5 else None,
                "bytes_per_rank_per_dataset": self.bytes_per_rank(params) if hdf5 else None,
                "pattern": ("contiguous" if per_process or int(self.arg(params, "segments")) == 1
                            else "strided"),
                "request_bytes": int(self.arg(params, "transfer_size"))}

    def pattern_defaults(self) -> PatternDefaults:
        return PatternDefaults(api=IOR_DEFAULT_API, collective=self.collective_default,
                               transfer_size=IOR_DEFAULT_TRANSFER)

    def sim_pattern(self, ranks: int, params: Mapping[str, Any],
                    nodes: int | None = None) -> Pattern:
        """The segments as one block per rank: the model has no segments."""
        return self.pattern(ranks, self.bytes_per_rank(params), nodes=nodes,
                            transfer_size=int(self.arg(params, "transfer_size")),
                            file_per_process=bool(self.arg(params, "file_per_process")),
                            api=str(self.arg(params, "api")))

    def darshan_file(self, args: Mapping[str, Any], ranks: int,
                     collective: bool) -> FileCounters:
        """One shared file, or (``file_per_process``) the file of one rank."""
        api = str(args["api"])
        transfer = int(args["transfer_size"])
        segments = int(args["segments"])
        per_rank = segments * (int(args["block_size"]) // transfer)
        fpp = bool(args["file_per_process"])
        writers = 1 if fpp else ranks
        # A rank's blocks are one run in its own file; in a shared file the other ranks'
        # blocks lie between its segments.
        runs = 1 if fpp or ranks == 1 else segments
        # HDF5 raw data starts after the first metadata block, so no rank starts at 0.
        zero_start = 0 if api == "hdf5" else 1
        write = request_pattern(writers, per_rank, transfer, runs, zero_start)
        name = "ior.00000000" if fpp else "ior"
        # access read|both reads every transfer back at the offsets it was written to.
        access = self.access(args)
        return modelled_file(name + (".h5" if api == "hdf5" else ".dat"), writers, ranks,
                             api=api, write=None if access == "read" else write,
                             read=write if args["verify"] else None,
                             timed_read=None if access == "write" else write,
                             collective=collective and api != "posix",
                             fsync=bool(args["fsync"]), objects=1, datasets=1)

    def match_variants(self, size: int, requests_per_rank: int, access: str,
                       syncs: bool) -> list[Variant]:
        """Every api with a file per process or a shared file; mpiio and hdf5 shared files
        also collectively. An application that reads gets variants that time a read
        (``access`` read or both)."""
        out = []
        for api in APIS:
            for layout, fpp, collective in (("fpp", True, False), ("shared", False, False),
                                            ("shared-collective", False, True)):
                if collective and api == "posix":
                    continue
                args = {"transfer_size": size, "block_size": size * requests_per_rank,
                        "segments": 1, "api": api, "file_per_process": fpp,
                        "verify": False, "fsync": syncs, **access_arg(access)}
                out.append(Variant(f"ior-{api}-{layout}", args, collective))
        return out

    def proxy_genes(self, hints: LogHints) -> list[Gene]:
        """The block is ``transfer_size`` x ``transfers_per_block``, so the transfer size
        always divides it."""
        sizes = tuple(sorted(set(SIZE_GRID) | set(hints.sizes)))
        counts = tuple(sorted(set(COUNT_GRID) | {hints.requests_per_rank}))
        return [Gene("api", APIS, False), Gene("transfer_size", sizes),
                Gene("transfers_per_block", counts), Gene("segments", counts),
                switch("file_per_process"), switch("collective"), switch("verify"),
                switch("fsync"), Gene("access", ACCESS_MODES, False)]

    def proxy_seed(self, size: int, hints: LogHints) -> dict[str, Any]:
        """All the log's requests in one block of ``size`` transfers, accessed as the log
        accesses its file."""
        return {"transfer_size": size, "transfers_per_block": hints.requests_per_rank,
                "segments": 1, "access": hints.access}

    def proxy_args(self, values: Mapping[str, Any]) -> tuple[dict[str, Any], bool]:
        """POSIX has no collective writes, so ``collective`` is off with it."""
        transfer = int(values["transfer_size"])
        args = {"api": values["api"], "transfer_size": transfer,
                "block_size": transfer * int(values["transfers_per_block"]),
                "segments": int(values["segments"]),
                "file_per_process": values["file_per_process"],
                "verify": values["verify"], "fsync": values["fsync"],
                **access_arg(str(values["access"]))}
        return args, bool(values["collective"]) and values["api"] != "posix"


IOR = register_kernel(IorKernel(
    "ior", "ior.py", "IOR-style segmented write: POSIX, MPI-IO or HDF5", IOR_PARAMS,
    reads_ior_hint_variables=True,
))


def ior_pattern(ranks: int, bytes_per_rank: int, *, transfer_size: int | None = None,
                nodes: int | None = None, file_per_process: bool = False,
                api: str | None = None, collective: bool | None = None) -> Pattern:
    """The simulated pattern of IOR writing ``bytes_per_rank`` per rank; unset fields take
    IOR's own defaults (256 KiB transfers, POSIX, independent)."""
    return IOR.pattern(ranks, bytes_per_rank, nodes=nodes, transfer_size=transfer_size,
                       file_per_process=file_per_process, api=api, collective=collective)
