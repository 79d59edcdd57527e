"""The real programs these tests tune, as ``scripts/setup.sh --test`` builds them from
``vendor/``: where each one is, how it is run small, how its output is read.

A program's build lives in ``$IOTUNE_PROGRAMS`` (default ``~/.cache/iotune/programs``),
below the first 16 hex digits of its archive's sha256 (as setup puts it).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
VENDOR = REPO / "vendor"
#: Where each program is built from, by the name of its executable.
ARCHIVES = {"ior": "ior-*.tar.gz", "ior-h5pcc": "ior-*.tar.gz",
            "h5bench_write": "h5bench-*.tar.gz"}
#: IOR's write time: the last ``write`` row holds it in its 10th column (the results row's
#: ``total(s)``, then the summary's ``Mean(s)``).
IOR_METRIC = r"regex:(?m)^write(?:\s+\S+){8}\s+([0-9.]+)"
#: h5bench's own figure.
H5BENCH_METRIC = r"regex:Observed completion time: ([0-9.]+) s"
#: A strided shared file at 2 ranks (512 KiB): 64 segments of one 4 KiB block per rank,
#: written collectively and fsynced (collective buffering on this kind of file takes
#: seconds on a busy 2-core machine; the size does not change which hints take effect).
IOR_MPIIO = "-a MPIIO -c -w -e -b 4k -t 4k -s 64"
#: IOR through HDF5: 4 segments of 64 KiB per rank, so a 1 MiB alignment stays cheap.
IOR_HDF5 = "-a HDF5 -c -w -b 64k -t 64k -s 4"


def programs_root() -> Path:
    explicit = os.environ.get("IOTUNE_PROGRAMS")
    if explicit:
        return Path(explicit)
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "iotune" / "programs"


def program_path(name: str) -> Path:
    """Where setup builds program ``name`` (it may not be there)."""
    (archive,) = VENDOR.glob(ARCHIVES[name])
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    return programs_root() / digest / name


#: IOR's ``--mpiio.showHints`` block of the hints its open file reports.
SHOWN_HINTS = re.compile(r"hints returned from opened file \{\n(.*?)\n\}", re.S)


def ior_hints(output: str) -> dict[str, str]:
    """The hints IOR printed as in effect on its file (the last such block)."""
    blocks = SHOWN_HINTS.findall(output)
    assert blocks, f"no 'hints returned from opened file' block in IOR's output:\n{output}"
    pairs = (line.strip().split(" = ", 1) for line in blocks[-1].splitlines())
    return {p[0]: p[1].strip() for p in pairs if len(p) == 2}
