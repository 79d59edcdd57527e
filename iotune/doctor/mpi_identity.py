"""Which MPI, and which version, a piece of text names: ``mpiexec --version``'s output or
the first line of ``MPI_Get_library_version``. Both say the same of one installation, so
comparing the two tells whether mpi4py loads the MPI that the launcher starts."""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The families told apart, by words their texts contain (lower case).
FAMILIES = (("Open MPI", ("open mpi", "open-mpi", "openrte")),
            ("MPICH", ("mpich", "hydra")),
            ("Intel MPI", ("intel(r) mpi", "intel mpi")),
            ("MVAPICH", ("mvapich",)))
#: A version after ``Version:`` (MPICH, Hydra, MVAPICH), ``v`` (Open MPI's library),
#: ``Library`` (Intel MPI) or a closing parenthesis (``mpiexec (OpenRTE) 4.1.4``).
_VERSION = re.compile(r"(?:version\s*:?\s*|library\s+|\bv|\)\s+)(\d+(?:\.\d+)+[a-z0-9]*)",
                      re.IGNORECASE)


@dataclass(frozen=True)
class MpiIdentity:
    """An MPI family (``MPICH``, ``Open MPI``...; ``unknown``) and version (or ``""``)."""

    family: str
    version: str

    def __str__(self) -> str:
        return f"{self.family} {self.version}".strip()


def identify(text: str) -> MpiIdentity:
    """The MPI family and version that ``text`` names. MVAPICH is tested before MPICH's
    words, which its texts also contain."""
    lower = text.lower()
    family = "unknown"
    for name, words in (FAMILIES[3], *FAMILIES[:3]):
        if any(word in lower for word in words):
            family = name
            break
    match = _VERSION.search(text)
    return MpiIdentity(family, match.group(1) if match else "")


def same_mpi(a: MpiIdentity, b: MpiIdentity) -> bool:
    """Whether two identities are one MPI: the same family, and the same version where
    both give one."""
    return a.family == b.family and (not a.version or not b.version or a.version == b.version)
