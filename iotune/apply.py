"""What to put in a job script to use a tuned configuration.

Formats: ``lustre`` (``lfs setstripe`` on the output directory), ``romio`` (a hints file and
``ROMIO_HINTS``), ``cray`` (``MPICH_MPIIO_HINTS``), ``ior`` (``IOR_HINT__MPI__`` variables),
``h5py`` (a Python snippet passing the hints and HDF5 settings), ``preload`` (iotune's
preload library for an unmodified program: the hints and the HDF5 settings reach its own
``MPI_Info`` and ``H5Fcreate``, see docs/applications.md). ``all`` prints each that
applies, ``auto`` (the default of ``iotune apply``) what the MPI in use reads
(:func:`auto_formats`). Settings that a format cannot express are named in a comment, never
dropped silently.

Nothing is exported: the lines write their files and define the shell function
:data:`RUN_FUNCTION`, which starts the program's launch line with the variables of every
mechanism printed (``iotune_run srun ./app``), so the rest of the job script runs without
them (an ``h5dump`` after the program does not load the preload library).

Every line that embeds a value (of the tuned file, of a flag, of the machine) is built by
:func:`iotune.printable.printed`, which refuses control characters and quotes each value
for where it lands (a shell word, a Python literal, a comment).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from iotune.errors import ConfigError
from iotune.kernel_specs import KERNELS
from iotune.preload.mpi_flavour import detect_mpi_flavour
from iotune.printable import Literal, Name, Plain, ShellPath, Word, Words, one_line, printed
from iotune.settings.catalogue import cray_hints, lfs_setstripe_args, romio_hints_text
from iotune.settings.values import HINT_PREFIX, SETTINGS, mpiio_hints
from iotune.tuned import read_tuned_file

FORMATS = ("auto", "all", "lustre", "romio", "cray", "ior", "h5py", "preload")
#: The shell function the printed lines define: ``iotune_run srun ./app`` starts the program
#: with the settings' variables in its environment alone.
RUN_FUNCTION = "iotune_run"
#: The shell variable (not exported) holding the directory the printed lines write their
#: files to, so the program finds them wherever the job script has changed directory to.
DIR_VARIABLE = "iotune_dir"


@dataclass(frozen=True)
class Section:
    """One mechanism's lines: ``lines`` run where printed (files written, checks), ``env``
    the ``NAME=value`` shell words the program's launch alone gets (:func:`run_function`)."""

    lines: list[str]
    env: list[str] = field(default_factory=list)


def load_tuned(path: Path) -> dict[str, Any]:
    """Read a tuned YAML file (every field checked, see :mod:`iotune.tuned`) and return its
    canonical settings and identity; a field the file leaves out is None."""
    doc = read_tuned_file(path)
    settings = doc["settings"]
    return {"settings": settings, "files": doc.get("files") or {},
            "kernel": doc.get("kernel"), "cores": doc.get("cores"),
            "kernel_args": doc.get("kernel_args"),
            "provenance": doc.get("provenance"),
            "recommendation": doc.get("recommendation",
                                      "tuned" if settings or doc.get("files") else "default"),
            "reason": doc.get("reason")}


def write_lines(lines: Sequence[str], path: str, where: str = "settings") -> str:
    """A shell command that writes ``lines`` to ``path``, every word quoted (never a
    here-document, which a value holding its end marker would close)."""
    return printed("printf '%s\\n' {lines} > {path}", lines=Words(lines, where),
                   path=Word(path, where))


#: The output directory of the printed lines unless ``--dir`` names another: the job
#: script's ``OUTPUT_DIR``, and a clear failure when it is not set.
DEFAULT_DIRECTORY = '"${OUTPUT_DIR:?set OUTPUT_DIR to the directory the program writes to}"'


class OutputDirectory(ShellPath):
    """The output directory of the Lustre lines: ``--dir`` as a
    :class:`~iotune.printable.ShellPath`, or (``value`` None) :data:`DEFAULT_DIRECTORY`."""

    def text(self) -> str:
        return DEFAULT_DIRECTORY if self.value is None else super().text()


def lustre_lines(settings: Mapping[str, Any], directory: str | None) -> list[str]:
    """``lfs setstripe`` on ``directory`` (shell syntax, printed by
    :class:`~iotune.printable.ShellPath`; None: :data:`DEFAULT_DIRECTORY`) where ``lfs``
    exists; elsewhere one line on stderr saying striping does not apply (not a Lustre
    system)."""
    args = lfs_setstripe_args(settings)
    if not args:
        return ["# Lustre: no striping settings were tuned"]
    where = OutputDirectory(directory, "--dir")
    return ["# Lustre striping for new files in the output directory",
            "if command -v lfs >/dev/null 2>&1; then",
            printed("  mkdir -p -- {dir}", dir=where),
            printed("  lfs setstripe {args} {dir}", args=Words(args, "settings"), dir=where),
            "else",
            '  echo "iotune: no lfs command (not a Lustre system): striping not applied" >&2',
            "fi"]


def romio_lines(settings: Mapping[str, Any], hints_file: str) -> Section:
    text = romio_hints_text(settings)
    if not text:
        return Section(["# MPI-IO: no hints were tuned"])
    return Section(["# ROMIO hints file, read by MPICH/ROMIO at MPI_File_open",
                    write_lines(text.splitlines(), hints_file)],
                   [printed('ROMIO_HINTS="${{{dir}}}"/{file}', dir=Name(DIR_VARIABLE, "dir"),
                            file=Word(hints_file, "hints file"))])


def cray_lines(settings: Mapping[str, Any]) -> Section:
    value = cray_hints(settings)
    if not value:
        return Section(["# Cray MPICH: no hints were tuned"])
    return Section(["# Cray MPICH: hints for every file (*), in MPICH_MPIIO_HINTS"],
                   [printed("MPICH_MPIIO_HINTS={value}", value=Word(value, "settings"))])


def ior_lines(settings: Mapping[str, Any]) -> Section:
    hints = mpiio_hints(settings)
    if not hints:
        return Section(["# IOR: no hints were tuned"])
    return Section(["# IOR reads MPI-IO hints from IOR_HINT__MPI__<key> variables"],
                   [printed("IOR_HINT__MPI__{key}={value}", key=Name(k, "settings"),
                            value=Word(v, "settings")) for k, v in hints.items()])


def h5py_lines(settings: Mapping[str, Any]) -> list[str]:
    hints = mpiio_hints(settings)
    lines = ["# h5py (parallel build): pass the hints and HDF5 settings at file creation",
             "from mpi4py import MPI", "import h5py", "", "info = MPI.Info.Create()"]
    lines += [printed("info.Set({key}, {value})", key=Literal(k, "settings"),
                      value=Literal(v, "settings")) for k, v in hints.items()]
    fapl = []
    if "alignment" in settings:
        fapl.append(printed("fapl.set_alignment({threshold}, {alignment})",
                            threshold=Literal(settings.get("alignment_threshold", 1),
                                              "settings.alignment_threshold"),
                            alignment=Literal(settings["alignment"], "settings.alignment")))
    for name in ("sieve_buf_size", "meta_block_size"):
        if name in settings:
            fapl.append(printed("fapl.set_{name}({value})", name=Name(name, "settings"),
                                value=Literal(settings[name], f"settings.{name}")))
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
        lines.append("# write datasets in collective mode (with dset.collective: "
                     "dset[...] = data)" if settings["collective"]
                     else "# write datasets in independent mode")
    return lines


def preload_text(settings: Mapping[str, Any], files: Mapping[str, Mapping[str, Any]]) -> str:
    """The preload settings file of ``settings`` (for files no pattern matches) and the
    per-file ``files`` (glob -> settings): the lines of ``settings``, then a ``file:<glob>``
    section per pattern in order, empty ones too (such files get no setting)."""
    from iotune.execution.application import preload_settings_text

    text = preload_settings_text(settings)
    for glob, own in files.items():
        text += f"file:{one_line(glob, 'files')}\n"
        text += preload_settings_text(own)
    return text


def preload_lines(settings: Mapping[str, Any], settings_file: str,
                  library: Path | None,
                  files: Mapping[str, Mapping[str, Any]] | None = None) -> Section:
    """Lines that load the preload library (``library``, an absolute path resolved when
    ``apply`` runs) with the tuned MPI-IO hints and HDF5 settings, per file pattern for
    ``files`` (:func:`preload_text`). The job fails with one line when the library is gone
    by then: a program run without the settings it was tuned for is an error, not a silent
    default. ``library`` None: it could not be built here, which the lines say instead of
    loading anything."""
    body = preload_text(settings, files or {}).rstrip("\n")
    if not body:
        return Section(["# preload library: no MPI-IO or HDF5 settings were tuned"])
    if library is None:
        return Section(["# preload library: not built on this machine (python -m "
                        "iotune.preload says why); the HDF5 settings are not applied by "
                        "these lines" + (", nor the per-file settings (files:)" if files
                                         else "")])
    path = Word(str(library), "preload library")
    rebuild = Word(f"{sys.executable} -m iotune.preload", "python")
    per_file = (["# per file: the first files: pattern a file's path matches gives its "
                 "settings, the others get the top-level ones"] if files else [])
    return Section(
        ["# iotune's preload library: the settings reach an unmodified program's own",
         "# MPI_Info and HDF5 file access", *per_file,
         write_lines(body.split("\n"), settings_file),
         printed("if [ ! -r {path} ]; then", path=path),
         printed('  echo "iotune: the preload library "{path}" is missing; rebuild it '
                 'with: "{rebuild} >&2', path=path, rebuild=rebuild),
         "  exit 1",
         "fi"],
        [printed('IOTUNE_SETTINGS="${{{dir}}}"/{file}', dir=Name(DIR_VARIABLE, "dir"),
                 file=Word(settings_file, "settings file")),
         printed('LD_PRELOAD={path}"${{LD_PRELOAD:+ $LD_PRELOAD}}"', path=path)])


def preload_library(required: bool, flavour: str | None = None) -> Path | None:
    """The preload library's absolute path for the MPI ``flavour`` the program runs under
    (None: the one ``mpiexec`` starts), built now if needed. When it cannot be built:
    ConfigError if ``required`` (``--format preload``), else None."""
    from iotune.preload import build_library

    try:
        return build_library(flavour=flavour).resolve()
    except ConfigError:
        if required:
            raise
        return None


def commented(lines: list[str]) -> list[str]:
    """``lines`` as shell comments (a Python snippet inside a shell fragment)."""
    return [f"# {line}" if line else "#" for line in lines]


def header_line(tuned: Mapping[str, Any]) -> str:
    """``# iotune tuned settings for KERNEL at CORES cores (PROVENANCE)``, each part only
    when the tuned file gives it."""
    parts = {"kernel": " for {kernel}", "cores": " at {cores} cores",
             "provenance": " ({provenance})"}
    given = {k: Plain(tuned[k], k) for k in parts if tuned.get(k) is not None}
    return printed("# iotune tuned settings" + "".join(parts[k] for k in given), **given)


#: Which mechanisms ``auto`` prints for the MPI ``mpiexec --version`` names, with the one
#: comment line that says why (docs/mpi-libraries.md has the measurements behind it).
AUTO_HINTS: dict[str, tuple[tuple[str, ...], str]] = {
    "mpich": (("romio",), "MPICH (mpiexec --version) reads MPI-IO hints from the "
              "ROMIO_HINTS file"),
    "openmpi": (("romio", "ompio"), "Open MPI (mpiexec --version) reads the ROMIO_HINTS "
                "file in its ROMIO layer, selected for the program (OMPIO ignores hints)"),
    "unknown": (("romio", "cray"), "MPI not identified (no mpiexec --version): ROMIO_HINTS "
                "for ROMIO-based MPIs and MPICH_MPIIO_HINTS for Cray MPICH"),
}


def auto_formats(tuned: Mapping[str, Any], flavour: str) -> tuple[list[str], str]:
    """The mechanisms ``auto`` prints for ``tuned`` under the MPI ``flavour`` and the one
    comment line naming them and why: Lustre striping when tuned; the hints mechanism the
    MPI reads (:data:`AUTO_HINTS`); IOR's variables for the IOR kernel only (no other
    program reads them); the preload library when HDF5 settings were tuned (nothing else
    reaches an unmodified program's HDF5) or the tune ran a program with it (``command``
    kernel without ``preload: no``: it may pass its own MPI_Info, which only the library
    reaches)."""
    settings = tuned["settings"]
    hints, why = AUTO_HINTS.get(flavour, AUTO_HINTS["unknown"])
    chosen = ["lustre"] if lfs_setstripe_args(settings) else []
    chosen += list(hints)
    spec = KERNELS.get(str(tuned.get("kernel")))
    if spec is not None and spec.reads_ior_hint_variables:
        chosen.append("ior")
        why += "; IOR_HINT__MPI__ variables, read by IOR"
    args = tuned.get("kernel_args") or {}
    hdf5 = any(k in SETTINGS and SETTINGS[k].layer == "hdf5" for k in settings)
    program = spec is not None and spec.loads_preload(args)
    if tuned.get("files"):
        chosen.append("preload")
        why += "; the preload library, for the per-file settings (files:)"
    elif hdf5 or program:
        chosen.append("preload")
        why += ("; the preload library, for the HDF5 settings" if hdf5
                else "; the preload library, as the tune ran the program")
    return chosen, f"# {why}; --format all prints every mechanism"


def ompio_lines() -> Section:
    """Open MPI: ROMIO selected for the program alone (its OMPIO ignores ROMIO's hints)."""
    return Section(["# Open MPI: its ROMIO layer, which reads the hints, for the program"],
                   ["OMPI_MCA_io=^ompio"])


def run_function(env: Sequence[str]) -> list[str]:
    """The shell function :data:`RUN_FUNCTION` that starts its arguments (the program's
    launch line) with ``env`` in their environment and nothing else's: the variables are
    assignments before the command, never exported, so a tool run later in the job
    (h5dump, a copy) sees none of them."""
    words = " ".join([*env, '"$@"'])
    return [f"# Put {RUN_FUNCTION} before the program's launch line: "
            f"{RUN_FUNCTION} srun ./app args",
            "# (only that launch gets the settings, not the rest of the job script)",
            f"{RUN_FUNCTION}() {{ {words}; }}"]


def render(tuned: Mapping[str, Any], fmt: str, directory: str | None = None,
           hints_file: str = "iotune-romio-hints", library: Path | None = None,
           flavour: str | None = None,
           settings_file: str = "iotune-preload-settings") -> str:
    """The job-script lines of ``fmt`` for a loaded tuned configuration: bash that runs as
    printed under ``set -euo pipefail`` and defines :data:`RUN_FUNCTION`, except ``h5py``
    alone, which is Python (inside ``all`` it is printed as comments).

    ``auto`` prints what the MPI in use reads (:func:`auto_formats`; ``flavour`` None:
    detected from ``mpiexec --version``). ``library`` is the preload library to load;
    None resolves (and builds) it now. ``hints_file`` and ``settings_file`` name the ROMIO
    hints file and the preload settings file the lines write in the job's directory.
    ``directory`` is ``--dir`` (None: :data:`DEFAULT_DIRECTORY`). ConfigError when a value
    cannot be printed safely (see :mod:`iotune.printable`)."""
    OutputDirectory(directory, "--dir").text()  # refused even when no Lustre line uses it
    settings = tuned["settings"]
    files: Mapping[str, Mapping[str, Any]] = tuned.get("files") or {}
    for own in (settings, *files.values()):
        for value in mpiio_hints(own).values():  # a newline would add a line to a file
            one_line(value, "settings")
    unknown = [k for k in settings if k not in SETTINGS and not k.startswith(HINT_PREFIX)]
    # Per file, only the preload library's settings file can tell files apart.
    not_per_file = sorted({k for own in files.values() for k in own
                           if not k.startswith(HINT_PREFIX) and k in SETTINGS
                           and SETTINGS[k].layer not in ("hdf5", "mpiio")
                           and not SETTINGS[k].hint})

    def preload() -> Section:
        # built against the MPI that mpiexec starts: the library's MPI handles are its
        path = library if library is not None else preload_library(
            fmt == "preload", flavour)
        return preload_lines(settings, settings_file, path, files)

    def every_file(name: str, make: Callable[[], Section]) -> Callable[[], Section]:
        """A mechanism that applies to every file: left out with a comment saying so when
        the tuned file has per-file settings, which the preload library carries."""
        if not files:
            return make
        return lambda: Section([f"# {name}: applies to every file, so not used with per-file "
                                "settings (files:); the preload library carries them"])

    def h5py() -> Section:
        if fmt == "h5py":
            return Section(h5py_lines(settings))
        return Section(["# For a Python program (h5py), in its code:",
                        *commented(h5py_lines(settings))])

    sections: dict[str, Callable[[], Section]] = {
        "lustre": every_file("Lustre striping of the output directory",
                             lambda: Section(lustre_lines(settings, directory))),
        "romio": every_file("ROMIO hints file", lambda: romio_lines(settings, hints_file)),
        "cray": every_file("Cray MPICH_MPIIO_HINTS", lambda: cray_lines(settings)),
        "ior": every_file("IOR_HINT__MPI__ variables", lambda: ior_lines(settings)),
        "h5py": h5py,
        "preload": preload,
        "ompio": ompio_lines,
    }
    header = [header_line(tuned)]
    if fmt == "auto":
        flavour = flavour or detect_mpi_flavour()
        chosen, why = auto_formats(tuned, flavour)
        header.append(why)
    else:
        chosen = [name for name in sections if name != "ompio"] if fmt == "all" else [fmt]
        if fmt in ("romio", "preload") and mpiio_hints(settings) and \
                (flavour or detect_mpi_flavour()) == "openmpi":
            chosen.append("ompio")  # the hints reach Open MPI's ROMIO layer alone
    if files and "preload" not in chosen:
        header.append("# per-file settings (files:) are applied by the preload library "
                      "alone: --format preload")
    if unknown:
        header.append(printed("# not expressible here: {names}",
                              names=Plain(", ".join(unknown), "settings")))
    if not_per_file:
        header.append(printed("# not expressible per file (files:): {names}",
                              names=Plain(", ".join(not_per_file), "files")))
    done = [sections[name]() for name in chosen]
    if fmt == "h5py":
        return "\n\n".join(["\n".join(header), "\n".join(done[0].lines)])
    header.append(printed('{dir}="$PWD"  # where the files below are written',
                          dir=Name(DIR_VARIABLE, "dir")))
    blocks = ["\n".join(block.lines) for block in done if block.lines]
    env = [word for block in done for word in block.env]
    return "\n\n".join(["\n".join(header), *blocks, "\n".join(run_function(env))])


def default_lines(tuned: Mapping[str, Any], python: bool = False) -> str:
    """The lines for a recommendation of the default: :data:`RUN_FUNCTION` starts the
    program as it is, so a job script written for the tuned lines runs unchanged
    (``python``: the comments alone, for the ``h5py`` format)."""
    lines = [header_line(tuned), "# the default configuration: no setting changed"]
    return "\n".join(lines if python else [*lines, *run_function([])])
