"""The preload library: settings injected into an unmodified MPI program, writes measured.

``iotune_preload.c`` (shipped with this package) is compiled into a shared library that a
run loads with ``LD_PRELOAD``. It merges the run's MPI-IO hints into every
``MPI_File_open`` and the run's HDF5 settings into every ``H5Fcreate``/``H5Fopen``, and at
``MPI_Finalize`` world rank 0 writes a JSON report: every open of each file with the hints
in effect right after it, the bytes and times written and read through it and who wrote,
and the totals of the MPI-IO calls (:mod:`iotune.preload.report` reads it). The
environment interface:

* ``IOTUNE_SETTINGS``: a settings file (see :func:`settings_text`); unset, nothing is
  applied and the writes are still measured.
* ``IOTUNE_PRELOAD_OUT``: where the JSON report goes; unset, nothing is written.

This module only builds and locates the library; it never imports MPI.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from iotune.errors import ConfigError
from iotune.preload.mpi_flavour import detect_mpi_flavour

__all__ = [
    "COMPILER",
    "COMPILER_ENV",
    "LIBRARY_ENV",
    "OUT_ENV",
    "SETTINGS_ENV",
    "build_command",
    "build_library",
    "compiler",
    "library_path",
    "settings_text",
    "source_path",
]

#: Environment variable naming the settings file the library reads.
SETTINGS_ENV = "IOTUNE_SETTINGS"
#: Environment variable naming the JSON report the library writes.
OUT_ENV = "IOTUNE_PRELOAD_OUT"
#: Environment variable that fixes where the built library lives.
LIBRARY_ENV = "IOTUNE_PRELOAD_LIB"
#: The compiler: parallel HDF5's wrapper around the MPI C compiler.
COMPILER = "h5pcc"
#: Environment variable naming another compiler, for the HDF5 of another MPI (e.g.
#: ``h5pcc.openmpi``): the library must be built against the MPI the program uses.
COMPILER_ENV = "IOTUNE_PRELOAD_CC"
#: Flags besides the output and source. ``-shlib`` makes h5pcc name the shared HDF5 rather
#: than copy a static one in; ``--as-needed`` then drops it, since the library calls no
#: HDF5 function directly (it looks them up in the program's own HDF5 when the program
#: opens an HDF5 file), so a program without HDF5 never loads it.
FLAGS = ("-shlib", "-Wl,--as-needed", "-shared", "-fPIC", "-O2", "-Wall")
LIBS = ("-ldl",)
#: The settings the library understands besides ``hint:<name>``.
HDF5_KEYS = frozenset(
    {"alignment", "alignment_threshold", "meta_block_size", "sieve_buf_size", "coll_metadata"}
)
BUILD_TIMEOUT_S = 300


def source_path() -> Path:
    """The C source shipped with the package."""
    return Path(__file__).resolve().parent / "iotune_preload.c"


#: The parallel HDF5 compiler wrapper of an MPI that Debian installs beside the default
#: one: the library must be built against the MPI the program runs under (built against
#: MPICH, it crashes an Open MPI program at its first MPI_Info call: the handles differ).
FLAVOUR_COMPILERS = {"openmpi": "h5pcc.openmpi"}


def compiler(flavour: str | None = None) -> str:
    """The compiler to build with: ``$IOTUNE_PRELOAD_CC`` when set; else the wrapper of the
    MPI ``flavour`` (None: the one ``mpiexec`` starts,
    :func:`~iotune.preload.mpi_flavour.detect_mpi_flavour`) when it has its own and it is
    installed; else ``h5pcc``."""
    explicit = os.environ.get(COMPILER_ENV)
    if explicit:
        return explicit
    wrapper = FLAVOUR_COMPILERS.get(flavour or detect_mpi_flavour())
    return wrapper if wrapper and shutil.which(wrapper) else COMPILER


def _source_hash(flavour: str | None = None) -> str:
    """First 16 hex digits of the SHA-256 of the source, the compiler and the build flags."""
    digest = hashlib.sha256(source_path().read_bytes())
    digest.update(" ".join((compiler(flavour), *FLAGS, *LIBS)).encode())
    return digest.hexdigest()[:16]


def _cache_dir() -> Path:
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg) if xdg else Path.home() / ".cache"
    return base / "iotune"


def library_path(flavour: str | None = None) -> Path:
    """Where the built library lives (it need not exist yet).

    ``$IOTUNE_PRELOAD_LIB`` when set; otherwise
    ``$XDG_CACHE_HOME/iotune/libiotune_preload-<hash>.so`` (``~/.cache`` when
    ``XDG_CACHE_HOME`` is unset), where ``<hash>`` covers the source and the build flags, so
    a changed source gets a new file and an old library is never used by mistake.
    """
    explicit = os.environ.get(LIBRARY_ENV)
    if explicit:
        return Path(explicit).expanduser()
    return _cache_dir() / f"libiotune_preload-{_source_hash(flavour)}.so"


def build_command(output: Path, flavour: str | None = None) -> list[str]:
    """The compiler command line that builds the library into ``output``."""
    return [compiler(flavour), *FLAGS, "-o", str(output), str(source_path()), *LIBS]


def _is_stale(path: Path) -> bool:
    """Missing, or (for an explicit ``$IOTUNE_PRELOAD_LIB``, whose name carries no hash)
    older than the source."""
    if not path.is_file():
        return True
    if os.environ.get(LIBRARY_ENV):
        return path.stat().st_mtime < source_path().stat().st_mtime
    return False


def build_library(force: bool = False, flavour: str | None = None) -> Path:
    """Compile the library into :func:`library_path` unless it is there and current.

    Returns the path. With ``force`` it is rebuilt regardless. The library is compiled in
    a temporary directory beside the target and renamed into place, so concurrent builds
    and readers never see a half-written file, and nothing is left in the caller's
    working directory.

    Raises :class:`ConfigError` naming the compiler when ``h5pcc`` is not on ``PATH``, and
    with the last line of its stderr when compiling fails.
    """
    target = library_path(flavour)
    if not force and not _is_stale(target):
        return target
    cc = compiler(flavour)
    if shutil.which(cc) is None:
        raise ConfigError(
            f"preload library: compiler {cc!r} not found on PATH "
            "(it comes with parallel HDF5, e.g. Debian's libhdf5-mpich-dev; "
            "scripts/setup.sh installs it)"
        )
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"preload library: cannot create {target.parent}: {exc}") from exc
    # h5pcc leaves the object file in its working directory: build in a scratch directory
    # next to the target, then rename the library into place.
    with tempfile.TemporaryDirectory(prefix=".build-", dir=target.parent) as tmp_dir:
        tmp = Path(tmp_dir) / target.name
        try:
            done = subprocess.run(build_command(tmp, flavour), capture_output=True, text=True,
                                  cwd=tmp_dir, timeout=BUILD_TIMEOUT_S, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ConfigError(f"preload library: {cc} could not run: {exc}") from exc
        if done.returncode != 0 or not tmp.is_file():
            lines = [line for line in done.stderr.splitlines() if line.strip()]
            last = lines[-1].strip() if lines else f"exit status {done.returncode}"
            raise ConfigError(f"preload library: {cc} failed to compile "
                              f"{source_path().name}: {last}")
        os.chmod(tmp, 0o755)
        os.replace(tmp, target)
    return target


def settings_text(hints: Mapping[str, object] | None = None,
                  hdf5: Mapping[str, int | str | bool] | None = None) -> str:
    """The settings file for ``hints`` (MPI-IO hint name -> value) and ``hdf5`` settings
    (``alignment``, ``alignment_threshold``, ``meta_block_size``, ``sieve_buf_size`` in
    bytes; ``coll_metadata`` as a bool or ``"yes"``/``"no"``), one ``key=value`` per line.

    Raises :class:`ConfigError` for an unknown HDF5 key, a size that is not a non-negative
    integer, or a hint the file format cannot carry (an ``=`` in its name, a line break, an
    empty value).
    """
    lines = []
    for name, value in (hints or {}).items():
        text = str(value)
        if not name or "=" in name or "\n" in name or "\n" in text or not text.strip():
            raise ConfigError(f"preload settings: hint {name!r}={text!r} cannot be written")
        lines.append(f"hint:{name}={text}")
    for key, value in (hdf5 or {}).items():
        if key not in HDF5_KEYS:
            raise ConfigError(f"preload settings: unknown HDF5 setting {key!r} "
                              f"(known: {', '.join(sorted(HDF5_KEYS))})")
        if key == "coll_metadata":
            text = ("yes" if value else "no") if isinstance(value, bool) else str(value)
        else:
            try:
                size = int(value)
            except ValueError:
                size = -1
            if size < 0 or isinstance(value, bool):
                raise ConfigError(f"preload settings: hdf5 {key}={value!r} is not a "
                                  "non-negative number of bytes")
            text = str(size)
        lines.append(f"hdf5:{key}={text}")
    return "".join(line + "\n" for line in lines)
