"""What kernel specs describe their Darshan features with: the genes ``iotune proxy``
searches and the value grids they are built on, the hints a log gives them, and the
variants ``iotune match`` compares.

It imports no kernel (and nothing heavier than the standard library), so the kernel specs
(:mod:`iotune.kernel_specs`) build on it. The search (:mod:`iotune.darshan.search`) and
the match (:mod:`iotune.darshan.match`), above the specs, use what the specs build from
it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

if TYPE_CHECKING:
    from iotune.workload.counters import FileCounters

#: The value grids kernel specs build their genes on.
SIZE_GRID = tuple(2**k for k in range(6, 31))          # 64 B .. 1 GiB
COUNT_GRID = tuple(2**k for k in range(0, 17))         # 1 .. 65536


@dataclass(frozen=True)
class Gene:
    """One searchable argument: its name, allowed values and whether they are ordered."""

    name: str
    values: tuple[Any, ...]
    ordered: bool = True


def switch(name: str) -> Gene:
    """An on/off gene."""
    return Gene(name, (False, True), False)


@dataclass(frozen=True)
class LogHints:
    """Values read off the target file that widen the gene value lists.

    ``sizes`` are its most common request sizes and mean read and write sizes;
    ``requests_per_rank`` is per accessing rank; ``ranks`` is the job's rank count, which
    every candidate uses (for a file per process, each rank writes its own file);
    ``access`` is ``write``, ``read`` or ``both`` as the file was written, read or both.
    """

    sizes: tuple[int, ...]
    requests_per_rank: int
    ranks: int
    access: str = "write"

    @classmethod
    def from_file(cls, fc: FileCounters) -> LogHints:
        """The hints of one file's counters (a log's, or a kernel's analytic ones)."""
        sizes: set[int] = set()
        for prefix, c in (("POSIX", fc.posix), ("MPIIO", fc.mpiio)):
            for i in range(1, 5):
                size = int(c.get(f"{prefix}_ACCESS{i}_ACCESS", 0))
                if size > 0:
                    sizes.add(size)
        for moved, count in ((fc.bytes_written, fc.writes), (fc.bytes_read, fc.reads)):
            if count > 0 and moved > 0:
                sizes.add(max(1, round(moved / count)))
        per_rank = max(1, round(max(fc.writes, fc.reads) / max(fc.ranks, 1)))
        return cls(tuple(sorted(sizes)), per_rank, max(fc.nprocs, fc.ranks, 1),
                   access_of(fc.bytes_written, fc.bytes_read))


def access_arg(access: str) -> dict[str, str]:
    """The kernel argument for an access mode: none for ``write`` (the default), so a
    write's arguments, and its configuration key, stay what they were before reads."""
    return {} if access == "write" else {"access": access}


def access_of(written: float, read: float) -> str:
    """``read`` when only reads moved bytes, ``both`` when reads and writes did, else
    ``write``."""
    if read > 0:
        return "both" if written > 0 else "read"
    return "write"


class Variant(NamedTuple):
    """One catalogued kernel variant: its name, kernel arguments and ``collective``."""

    name: str
    args: dict[str, Any]
    collective: bool
