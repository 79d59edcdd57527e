"""Run directories under scratch, their owner marker, and removing the ones left behind.

Every run writes into a fresh directory directly under ``system.scratch`` whose name starts
``iotune-`` (``iotune-vpic-*``, ``iotune-ior-*`` by the kernels, ``iotune-app-*`` for a
user's program) and removes it when it ends. A run killed with its driver (``kill -9``, a
node failure, a job hitting its time limit) cannot, and at scale such a directory holds
terabytes on a shared quota. So each run directory carries a marker, :data:`MARKER`: the
owner's process id, host and process start time (the driver's, passed to the kernels in
:data:`OWNER_ENV`). :func:`remove_orphans` removes the run directories whose owner is gone,
and only those:

- only directories directly under scratch, not symbolic links, named ``iotune-*``;
- only with a readable marker (a directory without one is never touched);
- only when the marker names this host and its process is gone, or a different process
  now has that id (its start time differs); a directory owned by another host is left
  alone, since its owner cannot be checked from here.

Standard library only: the kernels import it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MARKER = ".iotune-owner"
PREFIX = "iotune-"
#: The driver's owner record, JSON, in the environment of the programs it launches.
OWNER_ENV = "IOTUNE_OWNER"


def process_start(pid: int) -> int | None:
    """The start time of process ``pid`` in clock ticks since boot (Linux ``/proc``), or
    None when it is gone or cannot be read."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # The command name (field 2) may hold spaces and parentheses: split after its last ')'.
    fields = stat[stat.rfind(")") + 2:].split()
    try:
        return int(fields[19])  # field 22 of the whole line: starttime
    except (IndexError, ValueError):
        return None


def owner(pid: int | None = None) -> dict[str, Any]:
    """The owner record of process ``pid`` (default: this one) on this host."""
    pid = os.getpid() if pid is None else pid
    return {"pid": pid, "host": socket.gethostname(), "start": process_start(pid)}


def owner_from_environment() -> dict[str, Any]:
    """The driver's owner record from :data:`OWNER_ENV`, else this process's."""
    text = os.environ.get(OWNER_ENV)
    if text:
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if isinstance(value, dict) and isinstance(value.get("pid"), int):
            return value
    return owner()


def write_marker(run_dir: Path, record: Mapping[str, Any] | None = None) -> None:
    """Write the owner marker into ``run_dir`` (default owner: from the environment)."""
    (run_dir / MARKER).write_text(json.dumps(dict(record or owner_from_environment())) + "\n")


def is_alive(record: Mapping[str, Any], host: str | None = None) -> bool:
    """Whether the marker's owner may still be running (True when it cannot be told)."""
    if record.get("host") != (host or socket.gethostname()):
        return True
    pid = record.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # another user's process: it exists
    started = record.get("start")
    now = process_start(pid)
    return started is None or now is None or started == now


@dataclass(frozen=True)
class Cleanup:
    """What :func:`remove_orphans` removed: directories and bytes."""

    removed: tuple[Path, ...]
    bytes: int


def orphans(scratch: Path) -> list[Path]:
    """Run directories directly under ``scratch`` whose owner is gone (see the module)."""
    found = []
    try:
        entries = list(Path(scratch).iterdir())
    except OSError:
        return []
    for entry in entries:
        if not entry.name.startswith(PREFIX) or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            record = json.loads((entry / MARKER).read_text())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict) and not is_alive(record):
            found.append(entry)
    return sorted(found)


def remove_orphans(scratch: Path) -> Cleanup:
    """Remove the orphaned run directories under ``scratch``; what was removed."""
    removed, total = [], 0
    for directory in orphans(scratch):
        size = _size(directory)
        shutil.rmtree(directory, ignore_errors=True)
        if not directory.exists():
            removed.append(directory)
            total += size
    return Cleanup(tuple(removed), total)


def _size(directory: Path) -> int:
    total = 0
    for root, _, files in os.walk(directory):
        for name in files:
            try:
                total += (Path(root) / name).lstat().st_size
            except OSError:
                continue
    return total
