"""The program the doctor runs to look at MPI, mpi4py and h5py from inside a real process.

``python probe.py QUESTION [DIR]``, started by the doctor with the interpreter that runs the
kernels, alone or under the launcher. It is never imported by the driver (which must not
load mpi4py or h5py); importing it loads only the standard library. World rank 0 prints one
JSON object on stdout; a failure is one line ``probe: error: ...`` on stderr and exit 1.

Questions:

* ``library``: ``MPI_Get_library_version``'s first line, the world's size, the number of
  ranks that took part in an allreduce, and the MPI library files the process loaded.
* ``h5py``: h5py's and HDF5's versions, whether h5py is parallel, and the MPI and HDF5
  library files loaded once it is imported.
* ``hints DIR``: a file in ``DIR`` opened by every rank with :data:`HINTS`, one collective
  write, and the hints read back from the open file (``MPI_File_get_info``, as the kernels
  read them: ``kit.mpiio``); the file is removed.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

#: The hints the probe asks for: values other than ROMIO's defaults (16 MiB buffer,
#: automatic collective writes), so reading them back shows they reached the file.
HINTS = {"cb_buffer_size": "8388608", "romio_cb_write": "enable"}
#: Bytes each rank writes in the collective write.
WRITE_BYTES = 4096
#: Shared-library names of MPI (``libmpi.so.40``, ``libmpich.so.12``, ``libmpi_mpifh``
#: is Fortran, not counted) and of HDF5.
MPI_LIBRARY = re.compile(r"^lib(mpi|mpich)\.so(\.|$)")
HDF5_LIBRARY = re.compile(r"^libhdf5[_a-z]*\.so(\.|$)")


def _make_iotune_importable() -> None:
    # The interpreter that runs the kernels may lack iotune (system.python): the source
    # tree, or the installed package's parent, holds it beside this file's package.
    if importlib.util.find_spec("iotune") is None:
        sys.path.append(str(Path(__file__).resolve().parents[2]))


def loaded_libraries(pattern: re.Pattern[str]) -> list[str]:
    """Real paths of the shared libraries this process mapped whose file name matches."""
    found: set[str] = set()
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return []
    for line in maps.splitlines():
        path = line.split(None, 5)[-1] if line.count(" ") >= 5 else ""
        if path.startswith("/") and pattern.match(os.path.basename(path)):
            found.add(os.path.realpath(path))
    return sorted(found)


def _first_line(text: Any) -> str:
    # Open MPI counts the string's terminating NUL in its length, so mpi4py returns it.
    lines = str(text).replace("\0", "").strip().splitlines()
    return " ".join(lines[0].split()) if lines else ""


def library() -> dict[str, Any] | None:
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    took_part = comm.allreduce(1)
    if comm.Get_rank() != 0:
        return None
    return {"library_version": _first_line(MPI.Get_library_version()),
            "size": comm.Get_size(), "took_part": took_part,
            "mpi_libraries": loaded_libraries(MPI_LIBRARY)}


def h5py_facts() -> dict[str, Any]:
    import h5py

    return {"h5py_version": h5py.__version__, "hdf5_version": h5py.version.hdf5_version,
            "mpi": bool(h5py.get_config().mpi),
            "mpi_libraries": loaded_libraries(MPI_LIBRARY),
            "hdf5_libraries": loaded_libraries(HDF5_LIBRARY)}


def _mpiio() -> Any:
    """The kernels' MPI-IO layer (``kit.mpiio``): installed, or from the source tree."""
    try:
        from iotune_kernels.kit import mpiio
    except ImportError:
        sys.path.append(str(Path(__file__).resolve().parents[2] / "kernels"))
        from kit import mpiio
    return mpiio


def hints(directory: str) -> dict[str, Any] | None:
    from mpi4py import MPI

    mpiio = _mpiio()
    comm = MPI.COMM_WORLD
    name = comm.bcast(os.path.join(directory, f".iotune-doctor-{os.getpid()}.dat"))
    info = mpiio.make_info(HINTS)
    handle = MPI.File.Open(comm, name, MPI.MODE_CREATE | MPI.MODE_WRONLY, info)
    try:
        handle.Write_at_all(comm.Get_rank() * WRITE_BYTES, bytearray(WRITE_BYTES))
        in_effect = mpiio.file_hints(handle)
    finally:
        handle.Close()
        info.Free()
    comm.Barrier()
    if comm.Get_rank() != 0:
        return None
    os.unlink(name)
    return {"requested": HINTS, "in_effect": in_effect, "size": comm.Get_size(),
            "library_version": _first_line(MPI.Get_library_version()),
            "mpi_io": os.environ.get("OMPI_MCA_io")}  # noqa: SIM112 (Open MPI spells it so)


def main(argv: list[str]) -> int:
    """Answer ``argv[0]``; the exit status."""
    _make_iotune_importable()
    try:
        if argv[:1] == ["library"]:
            answer = library()
        elif argv[:1] == ["h5py"]:
            answer = h5py_facts()
        elif argv[:1] == ["hints"] and len(argv) == 2:
            answer = hints(argv[1])
        else:
            print("probe: error: usage: probe.py library | h5py | hints DIR", file=sys.stderr)
            return 2
    except Exception as exc:  # what failed is the answer: the doctor shows it in one line
        message = " ".join(str(exc).split()) or "no message"
        print(f"probe: error: {type(exc).__name__}: {message}", file=sys.stderr)
        return 1
    if answer is not None:
        print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
