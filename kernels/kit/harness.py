"""The harness: the contract every kernel shares, around the kernel's own body.

* Every tunable setting has a flag named after the setting (``cb_nodes`` -> ``--cb-nodes``)
  taking one value; the layers add them (:mod:`.rundir`, :mod:`.mpiio`, :mod:`.hdf5`), the
  harness adds the run-control flags (``--verify``, ``--collective``, ``--fsync``).
* The run: rank 0 checks the hints and creates the run directory, every rank runs the
  body, and rank 0 prints exactly one JSON object (one line) on stdout; everything else
  goes to stderr. The run directory is removed afterwards unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.kernel_args import FSYNC, VERIFY
from iotune.settings.catalogue import SETTINGS
from iotune.settings.units import MIB

from . import hdf5, mpiio, rundir
from .arguments import add_param, add_setting, check_requirements, given_settings, param_value
from .errors import EXIT_FAILED, EXIT_OK, KernelError
from .mpi import Phases, max_phases, mpi, mpi_library_version, node_names

SCHEMA_VERSION = 1

COMMON_EPILOG = """\
units:
  Byte values take a plain integer or a unit: K or KiB = 1024, M or MiB = 1024^2, G or GiB,
  T or TiB (so 1M = 1048576); KB, MB, GB and TB are decimal. Bandwidth is reported in MiB/s
  (2^20 bytes/s). Settings follow the same rules as in an iotune config.

scratch directory:
  The kernel creates <scratch>/iotune-<kernel>-<run id>/, writes only there and removes
  that directory when done unless --keep is given. Nothing else is touched. On Lustre the
  directory gets `lfs setstripe -c <stripe count> -S <stripe size>`; elsewhere striping is
  recorded as not applicable.

hints:
  MPI-IO hints come from, in increasing precedence: --hints-file, --hint, the dedicated
  flags (--cb-nodes ...). A --hint that contradicts a dedicated flag is an error. The
  result reports the hints requested and the hints in effect, read back from the open file
  with MPI_File_get_info. ROMIO also applies the file named by $ROMIO_HINTS, if set.

timing and output:
  All ranks meet at a barrier, then each rank times open, write and close (the close phase
  includes the flush/fsync when --fsync yes). total = open + write + close per rank; left
  out are only the bookkeeping steps between them (reading back the hints, filling ior's
  transfer buffers). The result reports the maximum over ranks of each, and bandwidth =
  all bytes written / max total time (MiB/s). Rank 0 prints one JSON object on one line on
  stdout; diagnostics go to stderr.

exit codes:
  0 success; 1 verification mismatch or I/O failure; 2 bad arguments or unusable scratch.
"""


def add_common_arguments(parser: argparse.ArgumentParser, *, collective_default: bool) -> None:
    """Add the flags every kernel shares: run control, then each layer's.

    Settings (and ``--fsync``) default to ``None`` so that the result can list only the
    settings given.
    """
    run = parser.add_argument_group("run control")
    add_param(run, VERIFY)
    add_setting(run, SETTINGS["collective"],
                f"; default: {'yes' if collective_default else 'no'}")
    add_param(run, FSYNC, given_only=True)
    rundir.add_arguments(parser)
    mpiio.add_arguments(parser)
    hdf5.add_arguments(parser)


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Cross-checks of the common flags; ``parser.error`` (exit 2) on a broken rule."""
    check_requirements(parser, args)


def requested_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line, by setting name (absent ones left out):
    catalogue settings (booleans as yes/no), ``hint``, ``hints_file`` and ``fsync``."""
    settings: dict[str, Any] = {
        name: SETTINGS[name].to_argument(value) if isinstance(value, bool) else value
        for name, value in given_settings(args).items()
    }
    if args.hint:
        settings["hint"] = dict(args.hint)
    if args.hints_file is not None:
        settings["hints_file"] = args.hints_file[0]
    if args.fsync is not None:
        settings["fsync"] = "yes" if args.fsync else "no"
    return settings


@dataclass
class RunContext:
    """What a kernel body gets: the communicator, its run directory and requested hints."""

    comm: Any
    kernel: str
    args: argparse.Namespace
    run_dir: Path
    filesystem: dict[str, Any]
    hints: dict[str, str]
    info: Any
    collective: bool
    fsync: bool

    @property
    def rank(self) -> int:
        """This process's rank in ``comm``."""
        return int(self.comm.rank)

    @property
    def size(self) -> int:
        """Number of ranks in ``comm``."""
        return int(self.comm.size)


@dataclass
class Outcome:
    """What a kernel body returns; the common fields are added by ``run_kernel``."""

    bytes_written: int
    phases: Phases
    params: dict[str, Any]
    hints_in_effect: dict[str, str]
    hints_source: str
    verify: dict[str, Any] | None
    extra: dict[str, Any] = field(default_factory=dict)


def _collective_check(comm: Any, action: Callable[[], Any]) -> Any:
    """Run ``action`` on rank 0; broadcast its value, or raise its KernelError everywhere."""
    payload: tuple[str, Any]
    if comm.rank == 0:
        try:
            payload = ("ok", action())
        except KernelError as exc:
            payload = ("error", (str(exc), exc.exit_code))
    else:
        payload = ("ok", None)
    payload = comm.bcast(payload, root=0)
    if payload[0] == "error":
        message, code = payload[1]
        raise KernelError(message, code)
    return payload[1]


def _setup(comm: Any, kernel: str, args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    """Collectively create the run directory and apply striping; returns (dir, filesystem)."""

    def on_root() -> tuple[str, dict[str, Any]]:
        run_dir = rundir.create_run_dir(args.scratch, kernel, args.run_id)
        try:
            fs = rundir.detect_filesystem(run_dir)
            fs["striping"] = rundir.apply_striping(run_dir, fs, rundir.striping_requested(args))
        except KernelError:
            rundir.remove_run_dir(run_dir, args.scratch, kernel)
            raise
        return str(run_dir), fs

    path_text, fs = _collective_check(comm, on_root)
    run_dir = Path(path_text)
    missing = comm.allreduce(0 if run_dir.is_dir() else 1)
    if missing:
        _collective_check(comm, lambda: rundir.remove_run_dir(run_dir, args.scratch, kernel))
        raise KernelError(
            f"--scratch {args.scratch}: the run directory is not visible on {missing} rank(s) "
            "(the scratch directory must be on a file system shared by all nodes)"
        )
    return run_dir, fs


def run_kernel(
    kernel: str,
    args: argparse.Namespace,
    body: Callable[[RunContext], Outcome],
    *,
    collective_default: bool,
) -> int:
    """Run a kernel body under the common contract and return the exit code.

    Sets up the run directory, calls ``body``, assembles and prints the JSON result on
    rank 0, and removes the run directory unless ``--keep``. ``KernelError`` becomes one
    line on stderr (from rank 0) and its exit code. Any other exception is a bug or an
    I/O failure on some ranks only: its traceback goes to stderr and the job is aborted,
    so that no rank waits forever.
    """
    comm = mpi().COMM_WORLD
    try:
        return _run_collectively(comm, kernel, args, body, collective_default)
    except KernelError as exc:
        if comm.rank == 0:
            sys.stderr.write(f"{kernel}: error: {exc}\n")
            sys.stderr.flush()
        return exc.exit_code
    except Exception:
        import traceback

        sys.stderr.write(f"{kernel}: rank {comm.rank} failed:\n{traceback.format_exc()}")
        sys.stderr.flush()
        comm.Abort(EXIT_FAILED)
        return EXIT_FAILED


def _run_collectively(
    comm: Any,
    kernel: str,
    args: argparse.Namespace,
    body: Callable[[RunContext], Outcome],
    collective_default: bool,
) -> int:
    hints = _collective_check(comm, lambda: mpiio.requested_hints(args))
    run_dir, fs = _setup(comm, kernel, args)
    ctx = RunContext(
        comm=comm,
        kernel=kernel,
        args=args,
        run_dir=run_dir,
        filesystem=fs,
        hints=hints,
        info=mpiio.make_info(hints),
        collective=collective_default if args.collective is None else args.collective,
        fsync=param_value(args, FSYNC),
    )
    try:
        outcome = body(ctx)
    except KernelError:
        comm.Barrier()
        if not args.keep and comm.rank == 0:
            rundir.remove_run_dir(run_dir, args.scratch, kernel)
        raise
    times = max_phases(comm, outcome.phases)
    nodes = node_names(comm)
    comm.Barrier()
    if not args.keep and comm.rank == 0:
        rundir.remove_run_dir(run_dir, args.scratch, kernel)
    comm.Barrier()
    if comm.rank == 0:
        result = build_result(ctx, outcome, times, nodes)
        sys.stdout.write(json.dumps(result, sort_keys=False) + "\n")
        sys.stdout.flush()
    if outcome.verify is not None and not outcome.verify["ok"]:
        if comm.rank == 0:
            sys.stderr.write(f"{kernel}: verification failed: {outcome.verify['first_mismatch']}\n")
        return EXIT_FAILED
    return EXIT_OK


def build_result(
    ctx: RunContext, outcome: Outcome, times: Mapping[str, float], nodes: list[str]
) -> dict[str, Any]:
    """The JSON result (rank 0): common fields, then the kernel's extra fields."""
    total = times["total"]
    bandwidth = outcome.bytes_written / total / MIB if total > 0 else None
    result: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kernel": ctx.kernel,
        "ranks": ctx.size,
        "nodes": len(nodes),
        "node_names": nodes,
        "bytes_written": outcome.bytes_written,
        "times_s": dict(times),
        "bandwidth_mib_s": bandwidth,
        "settings": requested_settings(ctx.args),
        "params": outcome.params,
        "hints_requested": ctx.hints,
        "hints_in_effect": outcome.hints_in_effect,
        "hints_source": outcome.hints_source,
        "hints_not_in_effect": mpiio.hints_not_in_effect(ctx.hints, outcome.hints_in_effect)
        if outcome.hints_in_effect
        else {},
        "romio_hints_env": os.environ.get("ROMIO_HINTS"),
        "filesystem": ctx.filesystem,
        "fsync": ctx.fsync,
        "collective": ctx.collective,
        "verify": outcome.verify,
        "mpi_library": mpi_library_version(),
        # Open MPI's MPI-IO layer as asked for (OMPI_MCA_io); see iotune.settings.in_effect.
        "mpi_io": os.environ.get("OMPI_MCA_io"),  # noqa: SIM112 (Open MPI spells it so)
        "host": socket.gethostname(),
        "output_dir": str(ctx.run_dir),
        "kept": bool(ctx.args.keep),
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    result.update(outcome.extra)
    return result


def verify_report(
    comm: Any, checked: int, mismatched: int, first: dict[str, Any] | None
) -> dict[str, Any]:
    """Combine per-rank verification counts into the ``verify`` field of the result.

    Collective. ``first`` is this rank's first mismatch (or ``None``) carrying an
    ``_order`` key; the reported one has the smallest ``_order`` over all ranks, with
    ``_order`` removed. Returns ``{"ok", "checked_values", "mismatched_values",
    "first_mismatch"}``.
    """
    checked_all = int(comm.allreduce(checked))
    mismatched_all = int(comm.allreduce(mismatched))
    found = [m for m in comm.allgather(first) if m is not None]
    winner = dict(min(found, key=lambda m: m["_order"])) if found else None
    if winner is not None:
        winner.pop("_order")
    return {
        "ok": mismatched_all == 0,
        "checked_values": checked_all,
        "mismatched_values": mismatched_all,
        "first_mismatch": winner,
    }
