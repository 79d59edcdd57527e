"""Shared machinery of the iotune I/O kernels.

A kernel is a standalone MPI program (``mpiexec -n 4 python kernels/vpicio.py ...``). This
module gives every kernel the same command-line contract, the same scratch-directory rules,
the same way of turning settings into MPI-IO hints and HDF5 property lists, the same timing
and the same one-line JSON result. Contracts:

* Every tunable setting has a flag named after the setting (``cb_nodes`` -> ``--cb-nodes``)
  taking one value. Bad values end the program with exit code 2 and one line on stderr
  that names the flag and the rule.
* The kernel writes only inside a fresh ``<scratch>/iotune-<kernel>-<runid>/`` and removes
  exactly that directory afterwards unless ``--keep`` is given.
* Rank 0 prints exactly one JSON object (one line) on stdout; everything else goes to stderr.

Importing this module does not import mpi4py or h5py (``--help`` must not start MPI); the
functions that need them import them when called.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import textwrap
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

SCHEMA_VERSION = 1
MIB = 1 << 20

#: Exit codes shared by all kernels.
EXIT_OK = 0
EXIT_FAILED = 1  # verification mismatch or an I/O failure during the run
EXIT_USAGE = 2  # bad command line or unusable scratch directory

ENABLE_WORDS = ("enable", "disable", "automatic")
YES_NO = ("yes", "no")

#: Settings passed straight through as ROMIO hints: setting name -> hint key.
ROMIO_HINT_SETTINGS = {
    "cb_nodes": "cb_nodes",
    "cb_buffer_size": "cb_buffer_size",
    "romio_cb_write": "romio_cb_write",
    "romio_ds_write": "romio_ds_write",
    "cb_config_list": "cb_config_list",
}
#: Lustre settings, passed as the ROMIO striping hints (and to ``lfs setstripe`` on Lustre).
STRIPING_HINT_SETTINGS = {"stripe_count": "striping_factor", "stripe_size": "striping_unit"}
#: HDF5 file-access settings.
HDF5_SETTINGS = (
    "alignment",
    "alignment_threshold",
    "sieve_buf_size",
    "meta_block_size",
    "coll_metadata",
)
#: Every setting a tuner may pass, in the order they appear in ``settings``.
SETTING_NAMES = (
    *STRIPING_HINT_SETTINGS,
    *ROMIO_HINT_SETTINGS,
    "hint",
    "hints_file",
    *HDF5_SETTINGS,
    "collective",
    "fsync",
)

LUSTRE_STRIPE_QUANTUM = 64 * 1024
_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_BYTES_RE = re.compile(r"^\s*(\d+)\s*([KMG](?:iB)?)?\s*$", re.IGNORECASE)
_BYTE_FACTORS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}


class KernelError(Exception):
    """A failure every rank knows about, reported as one line on stderr.

    Raise it only at points that all ranks reach together (after a broadcast or a
    reduction), so that all ranks leave through the same path and nobody waits forever.
    """

    def __init__(self, message: str, exit_code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.exit_code = exit_code


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def launcher_rank() -> int:
    """Rank of this process as told by the launcher's environment, without starting MPI.

    Used so that ``--help`` and argument errors print once, not once per rank. Returns 0
    when no known launcher variable is set (a plain ``python kernel.py`` run).
    """
    for name in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "MV2_COMM_WORLD_RANK"):
        value = os.environ.get(name)
        if value is not None and value.isdigit():
            return int(value)
    value = os.environ.get("SLURM_PROCID")
    if value is not None and value.isdigit() and "SLURM_STEP_ID" in os.environ:
        return int(value)
    return 0


class KernelArgumentParser(argparse.ArgumentParser):
    """argparse parser that prints only on rank 0 and reports errors in one line.

    The description is wrapped to 88 columns; the epilog is printed as written.
    """

    def __init__(self, *, description: str = "", **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(description=textwrap.fill(description, width=88), **kwargs)

    def _print_message(self, message: str, file: Any = None) -> None:
        if launcher_rank() == 0:
            super()._print_message(message, file)

    def error(self, message: str) -> NoReturn:
        """Print ``<prog>: error: <message>`` once and exit with code 2."""
        if launcher_rank() == 0:
            sys.stderr.write(f"{self.prog}: error: {message} (see --help)\n")
        sys.exit(EXIT_USAGE)


def parse_bytes(text: str) -> int:
    """Parse a byte count: a plain integer or one with a binary suffix.

    Suffixes (case-insensitive): ``K``/``KiB`` = 1024, ``M``/``MiB`` = 1024**2,
    ``G``/``GiB`` = 1024**3. Raises ``ValueError`` on anything else, including negatives.
    """
    match = _BYTES_RE.match(text)
    if match is None:
        raise ValueError(
            f"{text!r} is not a byte count (an integer, optionally with K, M, G, KiB, MiB "
            "or GiB; K = KiB = 1024)"
        )
    suffix = (match.group(2) or "")[:1].lower()
    return int(match.group(1)) * _BYTE_FACTORS[suffix]


def byte_size(minimum: int = 1) -> Callable[[str], int]:
    """argparse ``type=`` for a byte count of at least ``minimum``."""

    def convert(text: str) -> int:
        try:
            value = parse_bytes(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{text!r} is below the minimum of {minimum} bytes")
        return value

    convert.__name__ = "byte count"
    return convert


def stripe_size(text: str) -> int:
    """argparse ``type=`` for a Lustre stripe size: a positive multiple of 64 KiB."""
    value = byte_size(1)(text)
    if value % LUSTRE_STRIPE_QUANTUM:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a multiple of 64 KiB (65536 bytes), which Lustre requires"
        )
    return value


def count(minimum: int = 1) -> Callable[[str], int]:
    """argparse ``type=`` for an integer count of at least ``minimum``."""

    def convert(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < minimum:
            rule = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
            raise argparse.ArgumentTypeError(f"{value} is not {rule}")
        return value

    convert.__name__ = "count"
    return convert


def choice_word(words: Sequence[str]) -> Callable[[str], str]:
    """argparse ``type=`` accepting exactly one of ``words`` (case-insensitive)."""

    def convert(text: str) -> str:
        word = text.strip().lower()
        if word not in words:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(words)}")
        return word

    convert.__name__ = "word"
    return convert


def yes_no(text: str) -> bool:
    """argparse ``type=`` for ``yes``/``no`` (also accepts true/false, on/off, 1/0)."""
    word = text.strip().lower()
    if word in ("yes", "true", "on", "1"):
        return True
    if word in ("no", "false", "off", "0"):
        return False
    raise argparse.ArgumentTypeError(f"{text!r} is not yes or no")


def _check_hint(key: str, value: str, where: str) -> tuple[str, str]:
    if not key or any(ch.isspace() for ch in key):
        raise argparse.ArgumentTypeError(f"{where}: hint key {key!r} is empty or has spaces")
    if not value:
        raise argparse.ArgumentTypeError(f"{where}: hint {key!r} has an empty value")
    return key, value


def key_value(text: str) -> tuple[str, str]:
    """argparse ``type=`` for ``KEY=VALUE`` (an MPI-IO hint); both parts non-empty."""
    key, sep, value = text.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE")
    return _check_hint(key.strip(), value.strip(), repr(text))


def hints_file(text: str) -> tuple[str, dict[str, str]]:
    """argparse ``type=`` reading a ROMIO hints file: ``key value`` per line.

    Blank lines and lines starting with ``#`` are skipped. Returns (path, hints).
    """
    try:
        lines = Path(text).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {exc.strerror}") from None
    hints: dict[str, str] = {}
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        if len(parts) != 2:
            raise argparse.ArgumentTypeError(
                f"{text}:{number}: {line!r} is not 'key value' (ROMIO hints file format)"
            )
        key, value = _check_hint(parts[0], parts[1].strip(), f"{text}:{number}")
        hints[key] = value
    return text, hints


COMMON_EPILOG = """\
units:
  Byte values take a plain integer or a binary suffix: K or KiB = 1024, M or MiB = 1024^2,
  G or GiB = 1024^3 (so 1M = 1048576). Bandwidth is reported in MiB/s (2^20 bytes/s).

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
    """Add the flags every kernel shares (scratch, settings, run control).

    Settings default to ``None`` so that the result can list only the settings given.
    """
    run = parser.add_argument_group("run control")
    run.add_argument(
        "--scratch",
        required=True,
        metavar="DIR",
        help="existing writable directory; the kernel works in a fresh subdirectory of it",
    )
    run.add_argument(
        "--run-id",
        type=run_id,
        metavar="ID",
        help="name part of the run subdirectory (letters, digits, . _ -); default: "
        "a timestamp plus random characters chosen on rank 0",
    )
    run.add_argument("--keep", action="store_true", help="keep the run subdirectory and its files")
    run.add_argument(
        "--verify",
        action="store_true",
        help="after the timed region, read everything back and check every value "
        "(exit code 1 on a mismatch)",
    )
    run.add_argument(
        "--collective",
        type=yes_no,
        metavar="yes|no",
        help="collective (yes) or independent (no) data writes; default: "
        + ("yes" if collective_default else "no"),
    )
    run.add_argument(
        "--fsync",
        type=yes_no,
        metavar="yes|no",
        help="flush and fsync the file(s) inside the timed region, before close; default: no",
    )

    lustre = parser.add_argument_group("Lustre striping")
    lustre.add_argument(
        "--stripe-count",
        type=count(1),
        metavar="N",
        help="number of OSTs per file (hint striping_factor; lfs setstripe -c on Lustre)",
    )
    lustre.add_argument(
        "--stripe-size",
        type=stripe_size,
        metavar="BYTES",
        help="stripe size, a multiple of 64 KiB (hint striping_unit; lfs setstripe -S)",
    )

    romio = parser.add_argument_group("MPI-IO (ROMIO) hints")
    romio.add_argument(
        "--cb-nodes", type=count(1), metavar="N", help="number of collective-buffering aggregators"
    )
    romio.add_argument(
        "--cb-buffer-size",
        type=byte_size(1),
        metavar="BYTES",
        help="collective buffer size per aggregator",
    )
    romio.add_argument(
        "--romio-cb-write",
        type=choice_word(ENABLE_WORDS),
        metavar="WORD",
        help="collective buffering for writes: enable, disable or automatic",
    )
    romio.add_argument(
        "--romio-ds-write",
        type=choice_word(ENABLE_WORDS),
        metavar="WORD",
        help="data sieving for writes: enable, disable or automatic",
    )
    romio.add_argument(
        "--cb-config-list",
        metavar="STR",
        help="where aggregators may run, e.g. '*:1' (one per node) or '*:*' "
        "(ROMIO's default '*:1' caps cb_nodes at the node count)",
    )
    romio.add_argument(
        "--hint",
        type=key_value,
        action="append",
        metavar="KEY=VALUE",
        help="any other MPI-IO hint; repeatable",
    )
    romio.add_argument(
        "--hints-file",
        type=hints_file,
        metavar="FILE",
        help="ROMIO hints file: one 'key value' per line, # starts a comment",
    )

    hdf5 = parser.add_argument_group("HDF5 file access (HDF5 files only)")
    hdf5.add_argument(
        "--alignment",
        type=byte_size(1),
        metavar="BYTES",
        help="H5Pset_alignment: objects of at least --alignment-threshold bytes start at "
        "multiples of this",
    )
    hdf5.add_argument(
        "--alignment-threshold",
        type=byte_size(0),
        metavar="BYTES",
        help="H5Pset_alignment threshold (default 1 when --alignment is given)",
    )
    hdf5.add_argument(
        "--sieve-buf-size", type=byte_size(1), metavar="BYTES", help="H5Pset_sieve_buf_size"
    )
    hdf5.add_argument(
        "--meta-block-size",
        type=byte_size(0),
        metavar="BYTES",
        help="H5Pset_meta_block_size (0 turns metadata aggregation off)",
    )
    hdf5.add_argument(
        "--coll-metadata",
        type=yes_no,
        metavar="yes|no",
        help="collective metadata reads and writes "
        "(H5Pset_all_coll_metadata_ops + H5Pset_coll_metadata_write)",
    )


def check_arguments(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """Cross-checks of the common flags; ``parser.error`` (exit 2) on a broken rule."""
    if args.alignment_threshold is not None and args.alignment is None:
        parser.error("--alignment-threshold needs --alignment (H5Pset_alignment)")


def run_id(text: str) -> str:
    """argparse ``type=`` for a run id: safe as one path component."""
    if not _RUN_ID_RE.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} must be 1-64 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return text


def requested_settings(args: argparse.Namespace) -> dict[str, Any]:
    """The settings given on the command line, by setting name (absent ones left out)."""
    settings: dict[str, Any] = {}
    for name in SETTING_NAMES:
        value = getattr(args, name, None)
        if value is None:
            continue
        if name == "hint":
            value = dict(value)
        elif name == "hints_file":
            value = value[0]
        elif isinstance(value, bool):
            value = "yes" if value else "no"
        settings[name] = value
    return settings


def requested_hints(args: argparse.Namespace) -> dict[str, str]:
    """MPI-IO hints from the hints file, ``--hint`` and the dedicated flags, merged.

    Precedence (lowest first): hints file, ``--hint``, dedicated flags. Raises
    ``KernelError`` when a ``--hint`` contradicts a dedicated flag.
    """
    hints: dict[str, str] = {}
    if args.hints_file is not None:
        hints.update(args.hints_file[1])
    extra = dict(args.hint or [])
    hints.update(extra)
    for setting, key in {**STRIPING_HINT_SETTINGS, **ROMIO_HINT_SETTINGS}.items():
        value = getattr(args, setting)
        if value is None:
            continue
        flag = "--" + setting.replace("_", "-")
        if key in extra and extra[key] != str(value):
            raise KernelError(
                f"--hint {key}={extra[key]} contradicts {flag} {value}; give the value once"
            )
        hints[key] = str(value)
    return hints


# --------------------------------------------------------------------------------------
# File systems, scratch and the run directory
# --------------------------------------------------------------------------------------


def _unescape_mount(field_text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_text)


def detect_filesystem(path: str | os.PathLike[str], mounts_file: str = "/proc/mounts") -> dict:
    """File-system type and mount point holding ``path``.

    Uses the longest mount-point prefix of the real (symlink-free) path in ``mounts_file``;
    among equal mount points the last one listed wins (it shadows earlier ones). Returns
    ``{"type": ..., "mount": ...}``; type ``"unknown"`` when the table cannot be read.
    """
    real = os.path.realpath(path)
    best: tuple[str, str] | None = None
    try:
        with open(mounts_file, encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) < 3:
                    continue
                mount, fstype = _unescape_mount(fields[1]), fields[2]
                inside = mount == "/" or real == mount or real.startswith(mount.rstrip("/") + "/")
                if inside and (best is None or len(mount) >= len(best[0])):
                    best = (mount, fstype)
    except OSError:
        best = None
    if best is None:
        return {"type": "unknown", "mount": None}
    return {"type": best[1], "mount": best[0]}


def is_lustre(fstype: str) -> bool:
    """True for the Lustre client file-system type."""
    return fstype.lower() == "lustre"


def check_scratch(scratch: str) -> Path:
    """Return the real path of ``scratch`` or raise ``KernelError`` saying which rule broke.

    The rule: the scratch directory must already exist, be a directory, and be writable.
    """
    rule = "the scratch directory must be an existing, writable directory"
    path = Path(scratch)
    if not path.exists():
        raise KernelError(f"--scratch {scratch}: does not exist ({rule})")
    if not path.is_dir():
        raise KernelError(f"--scratch {scratch}: is not a directory ({rule})")
    if not os.access(path, os.W_OK | os.X_OK):
        raise KernelError(f"--scratch {scratch}: is not writable ({rule})")
    return path.resolve()


def make_run_id() -> str:
    """A fresh run id: UTC timestamp, process id and random characters."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return f"{stamp}-{os.getpid()}-{secrets.token_hex(3)}"


def create_run_dir(scratch: str, kernel: str, wanted_id: str | None) -> Path:
    """Create ``<scratch>/iotune-<kernel>-<id>/`` (must not exist yet) and return it."""
    base = check_scratch(scratch)
    rid = wanted_id or make_run_id()
    run_dir = base / f"iotune-{kernel}-{rid}"
    try:
        run_dir.mkdir(mode=0o755)
    except FileExistsError:
        raise KernelError(
            f"--scratch {scratch}: {run_dir.name} already exists (each run needs a fresh "
            "run directory; choose another --run-id)"
        ) from None
    except OSError as exc:
        raise KernelError(
            f"--scratch {scratch}: cannot create a directory in it: {exc.strerror} "
            "(the scratch directory must be an existing, writable directory)"
        ) from None
    return run_dir


def remove_run_dir(run_dir: Path, scratch: str, kernel: str) -> None:
    """Remove the run directory made by ``create_run_dir`` and nothing else.

    Refuses (silently leaves it) unless ``run_dir`` is a real directory, not a link, whose
    parent is the scratch directory and whose name has the ``iotune-<kernel>-`` prefix.
    """
    expected_parent = Path(scratch).resolve()
    if run_dir.parent != expected_parent or not run_dir.name.startswith(f"iotune-{kernel}-"):
        return
    if run_dir.is_symlink() or not run_dir.is_dir():
        return
    shutil.rmtree(run_dir)


def apply_striping(
    run_dir: Path, fs: Mapping[str, Any], stripe_count: int | None, stripe_bytes: int | None
) -> dict[str, Any]:
    """Set Lustre striping on the fresh run directory, or record why it does not apply.

    On Lustre with a stripe count or size given, runs ``lfs setstripe -c N -S BYTES`` on
    ``run_dir`` (files created in it inherit the layout) and reads the layout back with
    ``lfs getstripe -d``. Raises ``KernelError`` if ``lfs`` fails. On other file systems
    returns ``{"applicable": False, "reason": "<type> is not Lustre"}``.
    """
    if not is_lustre(str(fs["type"])):
        return {"applicable": False, "reason": f"{fs['type']} is not Lustre"}
    record: dict[str, Any] = {"applicable": True, "requested": None, "command": None}
    if stripe_count is not None or stripe_bytes is not None:
        command = ["lfs", "setstripe"]
        if stripe_count is not None:
            command += ["-c", str(stripe_count)]
        if stripe_bytes is not None:
            command += ["-S", str(stripe_bytes)]
        command.append(str(run_dir))
        _run_lfs(command)
        record["requested"] = {"stripe_count": stripe_count, "stripe_size": stripe_bytes}
        record["command"] = " ".join(command)
    record["layout"] = _run_lfs(["lfs", "getstripe", "-d", str(run_dir)]).strip()
    return record


def _run_lfs(command: list[str]) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KernelError(f"{' '.join(command)} failed: {exc}", EXIT_FAILED) from None
    if done.returncode != 0:
        raise KernelError(
            f"{' '.join(command)} failed with exit code {done.returncode}: {done.stderr.strip()}",
            EXIT_FAILED,
        )
    return done.stdout


# --------------------------------------------------------------------------------------
# MPI helpers (import mpi4py lazily)
# --------------------------------------------------------------------------------------


def mpi() -> Any:
    """The ``mpi4py.MPI`` module (imported on first use; this starts MPI)."""
    from mpi4py import MPI

    return MPI


def make_info(hints: Mapping[str, str]) -> Any:
    """An ``MPI.Info`` holding ``hints`` (``MPI.INFO_NULL`` when empty)."""
    MPI = mpi()
    if not hints:
        return MPI.INFO_NULL
    info = MPI.Info.Create()
    for key, value in hints.items():
        info.Set(key, value)
    return info


def info_to_dict(info: Any) -> dict[str, str]:
    """All key/value pairs of an ``MPI.Info`` as a dict (empty for ``INFO_NULL``)."""
    MPI = mpi()
    if info == MPI.INFO_NULL:
        return {}
    keys = [info.Get_nthkey(i) for i in range(info.Get_nkeys())]
    return {key: str(info.Get(key)) for key in keys}


def hints_not_in_effect(requested: Mapping[str, str], in_effect: Mapping[str, str]) -> dict:
    """Requested hints that the open file does not report with the requested value."""
    return {
        key: {"requested": value, "in_effect": in_effect.get(key)}
        for key, value in requested.items()
        if in_effect.get(key) != value
    }


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


class Stopwatch:
    """Accumulates ``MPI.Wtime`` intervals into named phases of a ``Phases``."""

    def __init__(self) -> None:
        self.phases = Phases()
        self._wtime: Callable[[], float] = mpi().Wtime

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Add the time spent inside the ``with`` block to phase ``name``."""
        start = self._wtime()
        try:
            yield
        finally:
            setattr(self.phases, name, getattr(self.phases, name) + self._wtime() - start)


def max_phases(comm: Any, phases: Phases) -> dict[str, float]:
    """Maximum over ranks of open, write, close and total (every rank gets the result)."""
    import numpy as np

    MPI = mpi()
    values = np.array([phases.open, phases.write, phases.close, phases.total], dtype=np.float64)
    comm.Allreduce(MPI.IN_PLACE, values, op=MPI.MAX)
    return dict(zip(("open", "write", "close", "total"), map(float, values), strict=True))


def exclusive_offset(comm: Any, local: int) -> int:
    """Sum of ``local`` over lower ranks (0 on rank 0), via ``MPI_Exscan``."""
    offset = comm.exscan(local)
    return 0 if comm.rank == 0 or offset is None else int(offset)


def node_names(comm: Any) -> list[str]:
    """Distinct processor names of all ranks, sorted (valid on rank 0, [] elsewhere)."""
    names = comm.gather(mpi().Get_processor_name(), root=0)
    return sorted(set(names)) if comm.rank == 0 else []


# --------------------------------------------------------------------------------------
# HDF5 helpers (import h5py lazily)
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Hdf5Options:
    """HDF5 file-access settings; ``None`` leaves the library default."""

    alignment: int | None = None
    alignment_threshold: int | None = None
    sieve_buf_size: int | None = None
    meta_block_size: int | None = None
    coll_metadata: bool | None = None

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> Hdf5Options:
        """Read the HDF5 flags; ``--alignment-threshold`` alone is an error."""
        if args.alignment_threshold is not None and args.alignment is None:
            raise KernelError("--alignment-threshold needs --alignment (H5Pset_alignment)")
        return cls(
            alignment=args.alignment,
            alignment_threshold=args.alignment_threshold,
            sieve_buf_size=args.sieve_buf_size,
            meta_block_size=args.meta_block_size,
            coll_metadata=args.coll_metadata,
        )


class Hdf5C:
    """The HDF5 C functions h5py does not wrap, from the libhdf5 h5py itself loaded.

    Finding the library through ``/proc/self/maps`` guarantees the same copy (and so the
    same property lists and files) as h5py's. Raises ``KernelError`` if it cannot be found.
    """

    def __init__(self) -> None:
        import h5py

        path = self._loaded_libhdf5()
        if path is None:
            raise KernelError("cannot locate the HDF5 C library loaded by h5py", EXIT_FAILED)
        lib = ctypes.CDLL(path)
        version = (ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint())
        lib.H5get_libversion(*(ctypes.byref(v) for v in version))
        found = tuple(v.value for v in version)
        if found != tuple(h5py.version.hdf5_version_tuple[:3]):
            raise KernelError(f"{path} is HDF5 {found}, not h5py's", EXIT_FAILED)
        hid, hbool = ctypes.c_int64, ctypes.c_bool
        lib.H5Pset_all_coll_metadata_ops.argtypes = [hid, hbool]
        lib.H5Pset_coll_metadata_write.argtypes = [hid, hbool]
        lib.H5Pget_all_coll_metadata_ops.argtypes = [hid, ctypes.POINTER(hbool)]
        lib.H5Pget_coll_metadata_write.argtypes = [hid, ctypes.POINTER(hbool)]
        lib.H5Fget_vfd_handle.argtypes = [hid, hid, ctypes.POINTER(ctypes.c_void_p)]
        for name in (
            "H5Pset_all_coll_metadata_ops",
            "H5Pset_coll_metadata_write",
            "H5Pget_all_coll_metadata_ops",
            "H5Pget_coll_metadata_write",
            "H5Fget_vfd_handle",
        ):
            getattr(lib, name).restype = ctypes.c_int
        self.lib = lib
        self.path = path

    @staticmethod
    def _loaded_libhdf5() -> str | None:
        try:
            with open("/proc/self/maps", encoding="utf-8") as maps:
                for line in maps:
                    path = line.split()[-1]
                    name = os.path.basename(path)
                    if path.startswith("/") and name.startswith("libhdf5") and "_hl" not in name:
                        return path
        except OSError:
            return None
        return None

    def set_coll_metadata(self, fapl_id: int, on: bool) -> None:
        """Collective metadata reads and writes on a file-access property list."""
        lib = self.lib
        if lib.H5Pset_all_coll_metadata_ops(fapl_id, on) < 0:
            raise KernelError("H5Pset_all_coll_metadata_ops failed", EXIT_FAILED)
        if lib.H5Pset_coll_metadata_write(fapl_id, on) < 0:
            raise KernelError("H5Pset_coll_metadata_write failed", EXIT_FAILED)

    def get_coll_metadata(self, fapl_id: int) -> dict[str, bool]:
        """Collective metadata settings of a file-access property list."""
        ops, write = ctypes.c_bool(), ctypes.c_bool()
        if self.lib.H5Pget_all_coll_metadata_ops(fapl_id, ctypes.byref(ops)) < 0:
            raise KernelError("H5Pget_all_coll_metadata_ops failed", EXIT_FAILED)
        if self.lib.H5Pget_coll_metadata_write(fapl_id, ctypes.byref(write)) < 0:
            raise KernelError("H5Pget_coll_metadata_write failed", EXIT_FAILED)
        return {"coll_metadata_ops": ops.value, "coll_metadata_write": write.value}

    def mpi_file_handle(self, file_id: int, fapl_id: int) -> int:
        """The ``MPI_File`` of an HDF5 file opened with the MPI-IO driver.

        ``H5Fget_vfd_handle`` gives a pointer to the driver's ``MPI_File``; this returns
        the handle value itself.
        """
        pointer = ctypes.c_void_p()
        if self.lib.H5Fget_vfd_handle(file_id, fapl_id, ctypes.byref(pointer)) < 0:
            raise KernelError("H5Fget_vfd_handle failed", EXIT_FAILED)
        if not pointer.value:
            raise KernelError("H5Fget_vfd_handle returned no handle", EXIT_FAILED)
        value = ctypes.c_void_p.from_address(pointer.value).value
        return int(value or 0)


_HDF5C: Hdf5C | None = None


def hdf5c() -> Hdf5C:
    """The process-wide ``Hdf5C`` (created on first use)."""
    global _HDF5C
    if _HDF5C is None:
        _HDF5C = Hdf5C()
    return _HDF5C


def make_fapl(comm: Any, info: Any, options: Hdf5Options) -> Any:
    """File-access property list: MPI-IO driver with ``info`` plus the HDF5 settings."""
    import h5py

    fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)
    fapl.set_fapl_mpio(comm, info)
    if options.alignment is not None:
        threshold = 1 if options.alignment_threshold is None else options.alignment_threshold
        fapl.set_alignment(threshold, options.alignment)
    if options.sieve_buf_size is not None:
        fapl.set_sieve_buf_size(options.sieve_buf_size)
    if options.meta_block_size is not None:
        fapl.set_meta_block_size(options.meta_block_size)
    if options.coll_metadata is not None:
        hdf5c().set_coll_metadata(fapl.id, options.coll_metadata)
    return fapl


def create_h5file(path: Path, comm: Any, info: Any, options: Hdf5Options) -> Any:
    """Create (truncate) an HDF5 file with the MPI-IO driver; returns an ``h5py.File``."""
    import h5py

    fapl = make_fapl(comm, info, options)
    fid = h5py.h5f.create(os.fsencode(path), h5py.h5f.ACC_TRUNC, fapl=fapl)
    return h5py.File(fid)


def open_h5file_readonly(path: Path, comm: Any) -> Any:
    """Open an HDF5 file read-only with the MPI-IO driver (for verification)."""
    import h5py

    return h5py.File(path, "r", driver="mpio", comm=comm)


def hdf5_in_effect(h5file: Any, options: Hdf5Options) -> dict[str, Any]:
    """The HDF5 settings of the open file's access property list, for the given options."""
    fapl = h5file.id.get_access_plist()
    found: dict[str, Any] = {}
    if options.alignment is not None:
        threshold, alignment = fapl.get_alignment()
        found["alignment"], found["alignment_threshold"] = alignment, threshold
    if options.sieve_buf_size is not None:
        found["sieve_buf_size"] = fapl.get_sieve_buf_size()
    if options.meta_block_size is not None:
        found["meta_block_size"] = fapl.get_meta_block_size()
    if options.coll_metadata is not None:
        found.update(hdf5c().get_coll_metadata(fapl.id))
    return found


HINTS_FROM_VFD = "MPI_File_get_info on the HDF5 file's own MPI_File (from H5Fget_vfd_handle)"
HINTS_FROM_SECOND_OPEN = (
    "MPI_File_get_info on a second MPI_File_open of the file with the same info"
)


def h5file_hints(h5file: Any, path: Path, comm: Any, info: Any) -> tuple[dict[str, str], str]:
    """Hints in effect on an open HDF5 file, and how they were obtained.

    ``H5Pget_fapl_mpio`` only echoes the hints passed in, so this asks MPI-IO itself: first
    through the file's own ``MPI_File``; if that is unavailable, through a second
    read-only ``MPI_File_open`` of the same file with the same info (collective on comm).
    """
    MPI = mpi()
    handle_ok = hasattr(MPI.File, "fromhandle")
    value = 0
    if handle_ok:
        try:
            value = hdf5c().mpi_file_handle(h5file.id.id, h5file.id.get_access_plist().id)
        except KernelError:
            value = 0
    if comm.allreduce(0 if value else 1) == 0:
        mpi_file = MPI.File.fromhandle(value)
        got = mpi_file.Get_info()
        hints = info_to_dict(got)
        got.Free()
        return hints, HINTS_FROM_VFD
    second = MPI.File.Open(comm, os.fspath(path), MPI.MODE_RDONLY, info)
    try:
        got = second.Get_info()
        hints = info_to_dict(got)
        got.Free()
    finally:
        second.Close()
    return hints, HINTS_FROM_SECOND_OPEN


def hdf5_version() -> str:
    """Version of the HDF5 library h5py uses."""
    import h5py

    return str(h5py.version.hdf5_version)


# --------------------------------------------------------------------------------------
# The run: setup, result, teardown
# --------------------------------------------------------------------------------------


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
        run_dir = create_run_dir(args.scratch, kernel, args.run_id)
        try:
            fs = detect_filesystem(run_dir)
            fs["striping"] = apply_striping(run_dir, fs, args.stripe_count, args.stripe_size)
        except KernelError:
            remove_run_dir(run_dir, args.scratch, kernel)
            raise
        return str(run_dir), fs

    path_text, fs = _collective_check(comm, on_root)
    run_dir = Path(path_text)
    missing = comm.allreduce(0 if run_dir.is_dir() else 1)
    if missing:
        _collective_check(comm, lambda: remove_run_dir(run_dir, args.scratch, kernel))
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
    MPI = mpi()
    comm = MPI.COMM_WORLD
    try:
        return _run_collectively(comm, kernel, args, body, collective_default)
    except KernelError as exc:
        if comm.rank == 0:
            sys.stderr.write(f"{kernel}: error: {exc}\n")
            sys.stderr.flush()
        return exc.exit_code
    except Exception:
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
    hints = _collective_check(comm, lambda: requested_hints(args))
    run_dir, fs = _setup(comm, kernel, args)
    ctx = RunContext(
        comm=comm,
        kernel=kernel,
        args=args,
        run_dir=run_dir,
        filesystem=fs,
        hints=hints,
        info=make_info(hints),
        collective=collective_default if args.collective is None else args.collective,
        fsync=bool(args.fsync),
    )
    try:
        outcome = body(ctx)
    except KernelError:
        comm.Barrier()
        if not args.keep and comm.rank == 0:
            remove_run_dir(run_dir, args.scratch, kernel)
        raise
    times = max_phases(comm, outcome.phases)
    nodes = node_names(comm)
    comm.Barrier()
    if not args.keep and comm.rank == 0:
        remove_run_dir(run_dir, args.scratch, kernel)
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
        "hints_not_in_effect": hints_not_in_effect(ctx.hints, outcome.hints_in_effect)
        if outcome.hints_in_effect
        else {},
        "romio_hints_env": os.environ.get("ROMIO_HINTS"),
        "filesystem": ctx.filesystem,
        "fsync": ctx.fsync,
        "collective": ctx.collective,
        "verify": outcome.verify,
        "mpi_library": mpi_library_version(),
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
