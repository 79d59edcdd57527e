"""Whether a program links HDF5 statically, which no preloaded library can reach.

The preload library applies HDF5 settings by interposing ``H5Fcreate``/``H5Fopen``; a
program that carries its own copy of HDF5 (built with an ``h5pcc`` that links
``libhdf5.a``, as Debian's does) calls that copy directly. Such a program holds HDF5's
version banner (``HDF5 library version: ...``, the library's ``H5_lib_vers_info_g``) in
its own file, where a program linking the shared library has only the symbol names.
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Iterable

#: The text only a copy of the HDF5 library itself contains.
HDF5_BANNER = b"HDF5 library version:"
#: Bytes read at a time while looking for it (the banner straddling two reads is handled).
CHUNK = 1 << 20
#: Files larger than this are not read (no program is; a data file named on the command
#: line could be).
MAX_PROGRAM_BYTES = 1 << 30
ELF_MAGIC = b"\x7fELF"


def links_hdf5_statically(path: str) -> bool:
    """Whether the ELF executable at ``path`` contains a copy of HDF5; False for anything
    else (a script, a missing or unreadable file)."""
    try:
        status = os.stat(path)
    except OSError:
        return False
    if not os.path.isfile(path) or status.st_size > MAX_PROGRAM_BYTES:
        return False
    return _contains_hdf5(path, status.st_size, status.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _contains_hdf5(path: str, size: int, mtime_ns: int) -> bool:
    """:func:`links_hdf5_statically` of one version of a file (its size and time of last
    change are part of the key), read once however many runs name it."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != ELF_MAGIC:
                return False
            tail = b""
            while chunk := f.read(CHUNK):
                if HDF5_BANNER in tail + chunk:
                    return True
                tail = chunk[-len(HDF5_BANNER):]
    except OSError:
        return False
    return False


def static_hdf5_program(argv: Iterable[str]) -> str | None:
    """The first word of a command line (launcher included) naming an executable that
    links HDF5 statically (a bare name is looked up on ``PATH``), else None."""
    for word in argv:
        path = word if os.sep in word else shutil.which(word)
        if path and links_hdf5_statically(path):
            return path
    return None
