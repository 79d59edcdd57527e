"""The HDF5 layer: file-access settings onto a property list, and back from the open file.

Flags: the catalogue's ``hdf5`` settings (``--alignment``, ``--alignment-threshold``,
``--sieve-buf-size``, ``--meta-block-size``, ``--coll-metadata``). They are applied to the
file-access property list the file is created with and read back from the open file's own
access property list; the MPI-IO hints of an HDF5 file are read back from its ``MPI_File``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from iotune.settings.catalogue import settings_in_layer

from .arguments import add_layer
from .errors import EXIT_FAILED, KernelError
from .mpi import mpi
from .mpiio import file_hints

#: The catalogue settings this layer applies.
SETTINGS = settings_in_layer("hdf5")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The HDF5 file-access flags."""
    add_layer(parser.add_argument_group("HDF5 file access (HDF5 files only)"), "hdf5")


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
        """The HDF5 flags of a parsed (and checked) command line."""
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
        import ctypes

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
        import ctypes

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
        import ctypes

        pointer = ctypes.c_void_p()
        if self.lib.H5Fget_vfd_handle(file_id, fapl_id, ctypes.byref(pointer)) < 0:
            raise KernelError("H5Fget_vfd_handle failed", EXIT_FAILED)
        if not pointer.value:
            raise KernelError("H5Fget_vfd_handle returned no handle", EXIT_FAILED)
        value = ctypes.c_void_p.from_address(pointer.value).value
        return int(value or 0)


def load() -> Any:
    """Import h5py (which starts the HDF5 library and MPI) and return it.

    Kernels call this before their timed region: the first import costs a tenth of a second
    or more, which must not count as opening the file. Importing this module does not
    import h5py, so runs of other apis never load it.
    """
    import h5py

    return h5py


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
        return file_hints(MPI.File.fromhandle(value)), HINTS_FROM_VFD
    second = MPI.File.Open(comm, os.fspath(path), MPI.MODE_RDONLY, info)
    try:
        hints = file_hints(second)
    finally:
        second.Close()
    return hints, HINTS_FROM_SECOND_OPEN


def hdf5_version() -> str:
    """Version of the HDF5 library h5py uses."""
    import h5py

    return str(h5py.version.hdf5_version)


def transfer_plist(collective: bool) -> Any:
    """A dataset-transfer property list for collective or independent MPI-IO."""
    import h5py

    dxpl = h5py.h5p.create(h5py.h5p.DATASET_XFER)
    dxpl.set_dxpl_mpio(h5py.h5fd.MPIO_COLLECTIVE if collective else h5py.h5fd.MPIO_INDEPENDENT)
    return dxpl


class Slabs:
    """Transfer-sized hyperslabs of a 1-D dataset, written or read with one transfer
    property list; the memory space of each transfer size is made once."""

    def __init__(self, dset: Any, collective: bool) -> None:
        self.dset = dset
        self.selection = dset.get_space()
        self.dxpl = transfer_plist(collective)
        self._memory_spaces: dict[int, Any] = {}

    def _select(self, offset: int, size: int) -> Any:
        import h5py

        memory = self._memory_spaces.get(size)
        if memory is None:
            memory = self._memory_spaces[size] = h5py.h5s.create_simple((size,))
        self.selection.select_hyperslab((offset,), (size,))
        return memory

    def write(self, offset: int, buf: Any) -> None:
        """Write ``buf`` (1-D) at element ``offset``."""
        self.dset.write(self._select(offset, buf.shape[0]), self.selection, buf, dxpl=self.dxpl)

    def read(self, offset: int, buf: Any) -> None:
        """Read ``buf.shape[0]`` elements at ``offset`` into ``buf``."""
        self.dset.read(self._select(offset, buf.shape[0]), self.selection, buf, dxpl=self.dxpl)
