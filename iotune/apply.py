"""What to put in a job script to use a tuned configuration.

Formats: ``lustre`` (``lfs setstripe`` on the output directory), ``romio`` (a hints file and
``ROMIO_HINTS``), ``cray`` (``MPICH_MPIIO_HINTS``), ``ior`` (``IOR_HINT__MPI__`` variables),
``h5py`` (a Python snippet passing the hints and HDF5 settings), ``preload`` (iotune's
preload library for an unmodified program: the hints and the HDF5 settings reach its own
``MPI_Info`` and ``H5Fcreate``, see docs/applications.md). ``all`` prints each that
applies. Settings that a format cannot express are named in a comment, never dropped silently.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from iotune.errors import ConfigError
from iotune.settings.catalogue import cray_hints, lfs_setstripe_args, romio_hints_text
from iotune.settings.values import HINT_PREFIX, SETTINGS, mpiio_hints, normalise_settings

FORMATS = ("all", "lustre", "romio", "cray", "ior", "h5py", "preload")


def load_tuned(path: Path) -> dict[str, Any]:
    """Read a tuned YAML file and return its canonical settings and identity."""
    try:
        doc = yaml.safe_load(path.read_text())
    except FileNotFoundError:
        raise ConfigError(f"{path}: tuned file not found") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{path}: malformed YAML: {exc}") from None
    if not isinstance(doc, Mapping) or "settings" not in doc:
        raise ConfigError(f"{path}: not a tuned configuration (no 'settings' key); "
                          "produce one with 'iotune tune -o tuned.yaml'")
    settings = normalise_settings(doc.get("settings") or {}, "settings")
    return {"settings": settings, "kernel": doc.get("kernel"), "cores": doc.get("cores"),
            "provenance": doc.get("provenance", "measured"),
            "recommendation": doc.get("recommendation", "tuned" if settings else "default"),
            "reason": doc.get("reason")}


def write_lines(lines: list[str], path: str) -> str:
    """A shell command that writes ``lines`` to ``path``, every word quoted (never a
    here-document, which a value holding its end marker would close)."""
    quoted = " ".join(shlex.quote(line) for line in lines)
    return f"printf '%s\\n' {quoted} > {shlex.quote(path)}"


#: The output directory of the printed lines unless ``--dir`` names another: the job
#: script's ``OUTPUT_DIR``, and a clear failure when it is not set.
DEFAULT_DIRECTORY = '"${OUTPUT_DIR:?set OUTPUT_DIR to the directory the program writes to}"'


def lustre_lines(settings: Mapping[str, Any], directory: str) -> list[str]:
    """``lfs setstripe`` on ``directory`` (a shell word) where ``lfs`` exists; elsewhere one
    line on stderr saying striping does not apply (not a Lustre system)."""
    args = lfs_setstripe_args(settings)
    if not args:
        return ["# Lustre: no striping settings were tuned"]
    return ["# Lustre striping for new files in the output directory",
            "if command -v lfs >/dev/null 2>&1; then",
            f"  mkdir -p {directory}",
            f"  lfs setstripe {' '.join(args)} {directory}",
            "else",
            '  echo "iotune: no lfs command (not a Lustre system): striping not applied" >&2',
            "fi"]


def romio_lines(settings: Mapping[str, Any], hints_file: str) -> list[str]:
    text = romio_hints_text(settings)
    if not text:
        return ["# MPI-IO: no hints were tuned"]
    return ["# ROMIO hints file, read by MPICH/ROMIO at MPI_File_open",
            write_lines(text.splitlines(), hints_file),
            f'export ROMIO_HINTS="$PWD"/{shlex.quote(hints_file)}']


def cray_lines(settings: Mapping[str, Any]) -> list[str]:
    value = cray_hints(settings)
    if not value:
        return ["# Cray MPICH: no hints were tuned"]
    return ["# Cray MPICH: hints for every file (*)",
            f"export MPICH_MPIIO_HINTS={shlex.quote(value)}"]


def ior_lines(settings: Mapping[str, Any]) -> list[str]:
    hints = mpiio_hints(settings)
    if not hints:
        return ["# IOR: no hints were tuned"]
    return ["# IOR reads MPI-IO hints from IOR_HINT__MPI__<key> variables",
            *(f"export IOR_HINT__MPI__{k}={shlex.quote(v)}" for k, v in hints.items())]


def h5py_lines(settings: Mapping[str, Any]) -> list[str]:
    hints = mpiio_hints(settings)
    lines = ["# h5py (parallel build): pass the hints and HDF5 settings at file creation",
             "from mpi4py import MPI", "import h5py", "", "info = MPI.Info.Create()"]
    lines += [f"info.Set({k!r}, {v!r})" for k, v in hints.items()]
    fapl = []
    if "alignment" in settings:
        threshold = settings.get("alignment_threshold", 1)
        fapl.append(f"fapl.set_alignment({threshold}, {settings['alignment']})")
    if "sieve_buf_size" in settings:
        fapl.append(f"fapl.set_sieve_buf_size({settings['sieve_buf_size']})")
    if "meta_block_size" in settings:
        fapl.append(f"fapl.set_meta_block_size({settings['meta_block_size']})")
    if "coll_metadata" in settings:
        lines.append("# coll_metadata: h5py has no H5Pset_all_coll_metadata_ops; set it in C "
                     "or leave HDF5's default")
    if fapl:
        lines += ["fapl = h5py.h5p.create(h5py.h5p.FILE_ACCESS)",
                  "fapl.set_fapl_mpio(MPI.COMM_WORLD, info)", *fapl,
                  "fid = h5py.h5f.create(b'output.h5', h5py.h5f.ACC_TRUNC, fapl=fapl)",
                  "f = h5py.File(fid)"]
    else:
        lines.append("f = h5py.File('output.h5', 'w', driver='mpio', comm=MPI.COMM_WORLD, "
                     "info=info)")
    if "collective" in settings:
        mode = "collective" if settings["collective"] else "independent"
        lines.append(f"# write datasets in {mode} mode"
                     + (" (with dset.collective: dset[...] = data)" if settings["collective"]
                        else ""))
    return lines


def preload_lines(settings: Mapping[str, Any], settings_file: str,
                  library: Path | None) -> list[str]:
    """Lines that load the preload library (``library``, an absolute path resolved when
    ``apply`` runs) with the tuned MPI-IO hints and HDF5 settings. The job fails with one
    line when the library is gone by then: a program run without the settings it was tuned
    for is an error, not a silent default. ``library`` None: it could not be built here,
    which the lines say instead of loading anything."""
    from iotune.execution.application import preload_settings_text

    body = preload_settings_text(settings).rstrip("\n")
    if not body:
        return ["# preload library: no MPI-IO or HDF5 settings were tuned"]
    if library is None:
        return ["# preload library: not built on this machine (python -m iotune.preload says "
                "why); the HDF5 settings are not applied by these lines"]
    path = shlex.quote(str(library))
    rebuild = shlex.quote(f"{sys.executable} -m iotune.preload")
    return ["# iotune's preload library: the settings reach an unmodified program's own",
            "# MPI_Info and HDF5 file access",
            write_lines(body.split("\n"), settings_file),
            f'export IOTUNE_SETTINGS="$PWD"/{shlex.quote(settings_file)}',
            f"if [ ! -r {path} ]; then",
            f'  echo "iotune: the preload library "{path}" is missing; rebuild it with: "'
            f'{rebuild} >&2',
            "  exit 1",
            "fi",
            f'export LD_PRELOAD={path}"${{LD_PRELOAD:+ $LD_PRELOAD}}"']


def preload_library(required: bool) -> Path | None:
    """The preload library's absolute path, built now if needed. When it cannot be built:
    ConfigError if ``required`` (``--format preload``), else None."""
    from iotune.preload import build_library

    try:
        return build_library().resolve()
    except ConfigError:
        if required:
            raise
        return None


def commented(lines: list[str]) -> list[str]:
    """``lines`` as shell comments (a Python snippet inside a shell fragment)."""
    return [f"# {line}" if line else "#" for line in lines]


def render(tuned: Mapping[str, Any], fmt: str, directory: str = DEFAULT_DIRECTORY,
           hints_file: str = "iotune-romio-hints", library: Path | None = None) -> str:
    """The job-script lines of ``fmt`` for a loaded tuned configuration: bash that runs as
    printed under ``set -euo pipefail``, except ``h5py`` alone, which is Python (inside
    ``all`` it is printed as comments).

    ``library`` is the preload library to load; None resolves (and builds) it now."""
    settings = tuned["settings"]
    unknown = [k for k in settings if k not in SETTINGS and not k.startswith(HINT_PREFIX)]

    def preload() -> list[str]:
        path = library if library is not None else preload_library(fmt == "preload")
        return preload_lines(settings, "iotune-preload-settings", path)

    sections = {
        "lustre": lambda: lustre_lines(settings, directory),
        "romio": lambda: romio_lines(settings, hints_file),
        "cray": lambda: cray_lines(settings),
        "ior": lambda: ior_lines(settings),
        "h5py": lambda: (h5py_lines(settings) if fmt == "h5py"
                         else ["# For a Python program (h5py), in its code:",
                               *commented(h5py_lines(settings))]),
        "preload": preload,
    }
    chosen = list(sections) if fmt == "all" else [fmt]
    header = [f"# iotune tuned settings for {tuned.get('kernel')} at {tuned.get('cores')} cores "
              f"({tuned.get('provenance')})"]
    if unknown:
        header.append(f"# not expressible here: {', '.join(unknown)}")
    blocks = ["\n".join(sections[name]()) for name in chosen]
    return "\n\n".join(["\n".join(header), *blocks])
