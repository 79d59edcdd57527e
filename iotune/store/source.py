"""Where a measurement's numbers come from besides its configuration: its *source*.

Two runs are the same measurement, so that one may stand for the other (reused by a tune,
counted as done by a training campaign, fitted on by the model), when they share

- the configuration key (:func:`iotune.settings.values.config_key`): the kernel, its arguments
  (the access mode, which says what a run times, and a command kernel's command and
  metric among them), the scale and the settings; and
- the source, one line of text that names the backend and what it measures with:

  - ``mpi``: the system's name, the file system type of its scratch, the MPI library
    (the first line of ``MPI_Get_library_version``) and the MPI-IO layer asked for;
  - ``sim``: the simulated system and its noise factor;
  - ``replay``: the sha256 of the recorded data.

Records carry their source in the field ``source``. A record written before that field
existed has it derived from its other fields by :func:`source_of`, the same way; a failed
run of that time may lack the MPI library, and then matches no current source (it is
measured again rather than reused).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The MPI-IO layer of a run as ``system.mpi_io`` names it, from ``OMPI_MCA_io`` as the
#: kernels record it (``^ompio`` excludes OMPIO, leaving ROMIO).
_LAYER_OF_ENV = {"^ompio": "romio"}


def describe_source(backend: str, system: str, *, fs_type: str | None = None,
                    mpi_library: str | None = None, mpi_io: str | None = None,
                    sim_system: str | None = None, noise: float | None = None,
                    data_sha256: str | None = None) -> str:
    """The source line of a backend's runs (see the module docstring)."""
    if backend == "mpi":
        library = " ".join(str(mpi_library or "MPI library unknown").split())
        return (f"mpi on {system}, {fs_type or 'file system unknown'}, {library}, "
                f"MPI-IO {mpi_io or 'default'}")
    if backend == "sim":
        return f"sim of {sim_system or system}, noise {float(noise or 0.0):g}"
    if backend == "replay":
        return f"replay of data sha256 {str(data_sha256 or 'unknown')[:16]}"
    return f"{backend} on {system}"


def source_of(record: Mapping[str, Any]) -> str:
    """The source of a stored record: its ``source`` field, or for an older record one
    derived from its fields as its backend would have described it."""
    given = record.get("source")
    if isinstance(given, str) and given:
        return given
    result = record.get("result") or {}
    preload = result.get("preload") or {}
    layer = result.get("mpi_io") or preload.get("mpi_io")
    return describe_source(
        str(record.get("backend", "")), str(record.get("system", "")),
        fs_type=record.get("fs_type"),
        mpi_library=result.get("mpi_library") or preload.get("mpi_library"),
        mpi_io=_LAYER_OF_ENV.get(str(layer), "default") if layer else None,
        sim_system=result.get("sim_system"), noise=result.get("noise"),
        data_sha256=result.get("source_sha256"))
