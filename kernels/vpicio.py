"""VPIC-IO: write particle data the way the VPIC plasma code does, through parallel HDF5.

One HDF5 file; per timestep ``t`` a group ``Timestep_<t>`` holding eight 1-D datasets
``x y z id_1 id_2 px py pz`` (``id_1`` int32, the others float32), each as long as the
total particle count. Rank ``r`` writes its ``particles_per_rank`` particles as one
contiguous slab at the exclusive-scan offset of the counts of ranks below it.

Values are a pure function of (global particle index ``g``, timestep ``t``, dataset), with
``m = g mod 2**20``, all exactly representable for ``t < 2**20``::

    x = 0.5 m + t        y = 0.25 m + 2t      z = 0.125 m + 3t      id_1 = (g + t) mod 2**31
    id_2 = m + 0.5 t     px = -0.5 m - t      py = 0.5 m + 0.25 + t pz = m + 4t

With ``--access read`` or ``both`` the file is read back the way h5bench's read benchmark
and BD-CATS read it: each rank reads its slab of each of the eight datasets of every
timestep (see :mod:`kit.readback`).

Run ``mpiexec -n 4 python vpicio.py --help`` for the command line. ``write_particles``
is the timed write path, ``read_particles`` the timed read path, each importable on its own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

try:
    from kit import arguments, harness, hdf5, mpi, readback
except ImportError:  # imported as iotune_kernels.vpicio
    from iotune_kernels.kit import arguments, harness, hdf5, mpi, readback

from iotune.kernel_args import VPIC_PARAMS, own_params

KERNEL = "vpic"
FILE_NAME = "vpic.h5"
#: Dataset name -> element type, in creation order (as VPIC-IO / h5bench write them).
DATASETS: tuple[tuple[str, np.dtype], ...] = (
    ("x", np.dtype("<f4")),
    ("y", np.dtype("<f4")),
    ("z", np.dtype("<f4")),
    ("id_1", np.dtype("<i4")),
    ("id_2", np.dtype("<f4")),
    ("px", np.dtype("<f4")),
    ("py", np.dtype("<f4")),
    ("pz", np.dtype("<f4")),
)
BYTES_PER_PARTICLE = sum(dtype.itemsize for _, dtype in DATASETS)  # 32
_MASK = (1 << 20) - 1
#: Float datasets: value = scale * m + offset + step * t.
_FLOAT_FORMULA = {
    "x": (0.5, 0.0, 1.0),
    "y": (0.25, 0.0, 2.0),
    "z": (0.125, 0.0, 3.0),
    "id_2": (1.0, 0.0, 0.5),
    "px": (-0.5, 0.0, -1.0),
    "py": (0.5, 0.25, 1.0),
    "pz": (1.0, 0.0, 4.0),
}

StepData = Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Layout:
    """Where this rank's particles go: ``count`` particles at ``offset`` of ``total``."""

    offset: int
    count: int
    total: int


def particle_values(name: str, start: int, count: int, timestep: int) -> np.ndarray:
    """Values of dataset ``name`` for global particles ``start .. start+count-1``."""
    return values_at(name, np.arange(start, start + count, dtype=np.int64), timestep)


def values_at(name: str, index: np.ndarray, timestep: int) -> np.ndarray:
    """Values of dataset ``name`` for the global particles ``index`` (int64 array)."""
    if name == "id_1":
        return ((index + timestep) % (1 << 31)).astype("<i4")
    scale, offset, step = _FLOAT_FORMULA[name]
    m = (index & _MASK).astype(np.float32)
    values = m * np.float32(scale)
    values += np.float32(offset + step * timestep)
    return values.astype("<f4", copy=False)


def make_step_data(layout: Layout, timestep: int) -> dict[str, np.ndarray]:
    """All eight arrays this rank writes at ``timestep``."""
    return {
        name: particle_values(name, layout.offset, layout.count, timestep) for name, _ in DATASETS
    }


def compute_layout(comm: Any, particles_per_rank: int) -> Layout:
    """This rank's slab: offset by MPI_Exscan of the counts, total by MPI_Allreduce."""
    offset = mpi.exclusive_offset(comm, particles_per_rank)
    total = int(comm.allreduce(particles_per_rank))
    return Layout(offset=offset, count=particles_per_rank, total=total)


def write_particles(
    comm: Any,
    path: Path,
    info: Any,
    options: hdf5.Hdf5Options,
    steps: Sequence[StepData],
    layout: Layout,
    *,
    collective: bool,
    fsync: bool,
    on_open: Callable[[Any], None] | None = None,
) -> mpi.Phases:
    """Write all timesteps to a new HDF5 file at ``path``; collective over ``comm``.

    Times (per rank, MPI.Wtime) open = file create; write = groups, datasets and data;
    close = flush (fsync through MPI_File_sync) when ``fsync``, then close. A barrier
    precedes the open. ``on_open(h5file)`` runs untimed right after the open (to read
    hints). Returns the phases of this rank.
    """
    import h5py

    watch = mpi.Stopwatch(mpi.Phases())
    comm.Barrier()
    with watch.phase("open"):
        h5file = hdf5.create_h5file(path, comm, info, options)
    if on_open is not None:
        on_open(h5file)
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_fill_time(h5py.h5d.FILL_TIME_NEVER)
    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE if collective else h5py.h5fd.MPIO_INDEPENDENT)
    with watch.phase("write"):
        for timestep, data in enumerate(steps):
            _write_timestep(h5file.id, timestep, data, layout, dcpl, dxpl)
    with watch.phase("close"):
        if fsync:
            h5file.flush()
        h5file.close()
    return watch.phases


def _write_timestep(
    fid: Any, timestep: int, data: StepData, layout: Layout, dcpl: Any, dxpl: Any
) -> None:
    """Create ``Timestep_<t>`` with its eight datasets and write this rank's slab."""
    import h5py

    group = h5py.h5g.create(fid, f"Timestep_{timestep}".encode())
    file_space = h5py.h5s.create_simple((layout.total,))
    memory_space = h5py.h5s.create_simple((layout.count,))
    selection = h5py.h5s.create_simple((layout.total,))
    selection.select_hyperslab((layout.offset,), (layout.count,))
    for name, dtype in DATASETS:
        file_type = h5py.h5t.py_create(dtype)
        dset = h5py.h5d.create(group, name.encode(), file_type, file_space, dcpl=dcpl)
        dset.write(memory_space, selection, data[name], dxpl=dxpl)
        dset.close()
    group.close()


def read_particles(
    comm: Any,
    path: Path,
    info: Any,
    options: hdf5.Hdf5Options,
    layout: Layout,
    timesteps: int,
    *,
    collective: bool,
    on_open: Callable[[Any], None] | None = None,
) -> tuple[readback.ReadPhases, dict[str, Any]]:
    """Timed read of this rank's slab of every dataset of every timestep; collective.

    The file must have been written by :func:`write_particles` and settled
    (:func:`kit.readback.settle`). Reads go collective or independent like the writes.
    A sample of every read is compared with the formulas (untimed); a mismatch on any rank
    raises ``KernelError`` (exit 1) on every rank. Returns this rank's phases and the
    ``read_check`` report.
    """
    check = readback.ReadCheck(int(comm.rank))
    names = [(f"Timestep_{t}/{name}", dtype) for t in range(timesteps) for name, dtype in DATASETS]

    def expected(where: str, numbers: np.ndarray) -> np.ndarray:
        group, name = where.split("/")
        return values_at(name, numbers, int(group.removeprefix("Timestep_")))

    phases = readback.read_datasets(
        comm, path, info, options, names,
        readback.Slab(layout.offset, layout.count, layout.total), check, expected,
        collective=collective, on_open=on_open,
    )
    return phases, check.finish(comm)


def verify_particles(comm: Any, path: Path, layout: Layout, timesteps: int) -> dict[str, Any]:
    """Read back every dataset (each rank its own slab) and compare with the formulas.

    Collective. Returns ``harness.verify_report``'s dict; the first mismatch is the
    lowest (timestep, dataset, particle) over all ranks, or ``None``.
    """
    checked = bad_total = 0
    mismatch: dict[str, Any] | None = None
    h5file = hdf5.open_h5file_readonly(path, comm)
    try:
        for timestep in range(timesteps):
            for order, (name, dtype) in enumerate(DATASETS):
                where = f"Timestep_{timestep}/{name}"
                problem, values = _read_slab(h5file, where, dtype, layout)
                if problem is None:
                    checked += layout.count
                    problem = _compare(values, name, layout, timestep)
                if problem is None:
                    continue
                bad_total += problem.pop("bad")
                if mismatch is None:
                    position = [timestep, order, problem.get("index", -1)]
                    mismatch = {"dataset": where, **problem, "_order": position}
    finally:
        h5file.close()
    return harness.verify_report(comm, checked, bad_total, mismatch)


def _read_slab(
    h5file: Any, where: str, dtype: np.dtype, layout: Layout
) -> tuple[dict[str, Any] | None, np.ndarray]:
    empty = np.empty(0, dtype=dtype)
    dset = h5file.get(where)
    if dset is None:
        return {"problem": "missing dataset", "bad": layout.count}, empty
    if dset.shape != (layout.total,) or dset.dtype != dtype:
        found = f"shape {dset.shape}, type {dset.dtype}"
        problem = f"expected shape ({layout.total},), type {dtype}; found {found}"
        return {"problem": problem, "bad": layout.count}, empty
    return None, dset[layout.offset : layout.offset + layout.count]


def _compare(values: np.ndarray, name: str, layout: Layout, timestep: int) -> dict[str, Any] | None:
    expected = particle_values(name, layout.offset, layout.count, timestep)
    bad = np.flatnonzero(values.view(np.uint32) != expected.view(np.uint32))
    if bad.size == 0:
        return None
    i = int(bad[0])
    return {
        "index": layout.offset + i,
        "expected": expected[i].item(),
        "found": values[i].item(),
        "bad": int(bad.size),
    }


def build_parser() -> arguments.KernelArgumentParser:
    """The vpicio command line (common flags plus the particle layout)."""
    parser = arguments.KernelArgumentParser(
        prog="vpicio.py",
        description=(
            "VPIC-IO particle write through parallel HDF5. Each timestep adds a group "
            "Timestep_<t> with datasets x y z id_1 id_2 px py pz (32 bytes per particle); "
            "each rank writes its particles as one contiguous slab of every dataset. All "
            "timesteps' data is generated before the timed region, so each rank needs "
            "32 x particles-per-rank x timesteps bytes of memory. With --access read or "
            "both, each rank reads its slab of every dataset back (h5bench's read pattern)."
        ),
        epilog=harness.COMMON_EPILOG + readback.READ_EPILOG,
    )
    arguments.add_params(parser.add_argument_group("particle layout"), own_params(VPIC_PARAMS))
    harness.add_common_arguments(parser, collective_default=True)
    return parser


def run(ctx: harness.RunContext) -> harness.Outcome:
    """The vpic kernel body: generate, write (timed unless ``--access read``), read back
    (timed, with ``--access read|both``), read hints, optionally verify."""
    args = ctx.args
    options = hdf5.Hdf5Options.from_args(args)
    layout = compute_layout(ctx.comm, args.particles_per_rank)
    steps = [make_step_data(layout, t) for t in range(args.timesteps)]
    path = ctx.run_dir / FILE_NAME
    seen: dict[str, Any] = {}

    def on_open(h5file: Any) -> None:
        seen["hints"], seen["source"] = hdf5.h5file_hints(h5file, path, ctx.comm, ctx.info)
        seen["hdf5"] = hdf5.hdf5_in_effect(h5file, options)

    phases = write_particles(
        ctx.comm,
        path,
        ctx.info,
        options,
        steps,
        layout,
        collective=ctx.collective,
        fsync=ctx.fsync or not readback.writes_timed(args.access),
        on_open=on_open,
    )
    del steps
    read_fields: dict[str, Any] = {}
    if readback.reads(args.access):
        cache = readback.settle(ctx.comm, [path])

        def on_read_open(h5file: Any) -> None:
            if not readback.writes_timed(args.access):
                seen["hints"], seen["source"] = hdf5.h5file_hints(h5file, path, ctx.comm,
                                                                  ctx.info)

        read, check = read_particles(ctx.comm, path, ctx.info, options, layout, args.timesteps,
                                     collective=ctx.collective, on_open=on_read_open)
        read_fields = readback.result_fields(
            ctx.comm, args.access, phases, read, BYTES_PER_PARTICLE * layout.total
            * args.timesteps, cache, check)
        if not readback.writes_timed(args.access):
            phases = mpi.Phases()
    verify = verify_particles(ctx.comm, path, layout, args.timesteps) if args.verify else None
    import h5py

    return harness.Outcome(
        bytes_written=BYTES_PER_PARTICLE * layout.total * args.timesteps,
        phases=phases,
        params={
            "particles_per_rank": args.particles_per_rank,
            "timesteps": args.timesteps,
            "particles_total": layout.total,
            "datasets": [name for name, _ in DATASETS],
            "file": FILE_NAME,
            "access": args.access,
        },
        hints_in_effect=seen["hints"],
        hints_source=seen["source"],
        verify=verify,
        extra={
            "hdf5_version": hdf5.hdf5_version(),
            "h5py_version": h5py.version.version,
            "hdf5_settings_in_effect": seen["hdf5"],
            **read_fields,
        },
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` (default ``sys.argv[1:]``), run the kernel, return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    harness.check_arguments(parser, args)
    return harness.run_kernel(KERNEL, args, run, collective_default=True)


if __name__ == "__main__":
    sys.exit(main())
