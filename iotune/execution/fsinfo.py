"""Which file system a path is on, from ``/proc/mounts`` (longest mount-point prefix)."""

from __future__ import annotations

import os
from pathlib import Path


def _unescape(field: str) -> str:
    # /proc/mounts escapes spaces, tabs, newlines and backslashes as octal.
    return (field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n")
            .replace("\\134", "\\"))


def filesystem_of(path: str | os.PathLike[str], mounts: str = "/proc/mounts") -> tuple[str, str]:
    """``(type, mount point)`` of the file system holding ``path``; ``("unknown", "")`` if
    it cannot be told (no /proc/mounts, e.g. not Linux)."""
    real = os.path.realpath(path)
    best = ("unknown", "")
    try:
        lines = Path(mounts).read_text().splitlines()
    except OSError:
        return best
    for line in lines:
        fields = line.split()
        if len(fields) < 3:
            continue
        mount, fstype = _unescape(fields[1]), fields[2]
        inside = real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best[1]):
            best = (fstype, mount)
    return best


def is_lustre(fstype: str) -> bool:
    return fstype == "lustre"
