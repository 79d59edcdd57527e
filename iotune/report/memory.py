"""Keeping the report's peak memory near what it holds, not what it once held.

A report of a big store builds frames of hundreds of thousands of runs, one backend after
another. Two things of the C allocator (glibc's malloc) would keep their memory after
Python lets it go:

- after the first large block is freed, glibc raises its threshold for giving large blocks
  their own mapping (up to 32 MiB), so later arrays land in the heap, where what is freed
  stays with the process and fragments; :func:`large_blocks_mapped` fixes the threshold;
- freed heap is returned only from its top; :func:`return_free_memory` asks for the rest
  back between the report's parts (``malloc_trim``), after a garbage collection.

Both do nothing where the C library is not glibc.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import gc

#: ``mallopt``'s parameter number for the mapping threshold (``M_MMAP_THRESHOLD``).
_M_MMAP_THRESHOLD = -3
#: Blocks at least this large get their own mapping, returned when freed.
MAPPED_BLOCK_BYTES = 256 * 1024


@functools.cache
def _glibc() -> ctypes.CDLL | None:
    """The C library when it is glibc (looked up once: ``find_library`` runs ldconfig)."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    return libc if libc is not None and hasattr(libc, "malloc_trim") else None


def large_blocks_mapped() -> None:
    """Give blocks of :data:`MAPPED_BLOCK_BYTES` and more their own mapping from now on."""
    libc = _glibc()
    if libc is not None:
        libc.mallopt(_M_MMAP_THRESHOLD, MAPPED_BLOCK_BYTES)


def return_free_memory() -> None:
    """Collect garbage and give the allocator's free memory back to the system."""
    gc.collect()
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)
