"""The run-directory layer: scratch, the run's own directory, and Lustre striping on it.

Flags: ``--scratch``, ``--run-id``, ``--keep`` and the catalogue's ``lustre`` settings
(``--stripe-count``, ``--stripe-size``). The kernel writes only inside a fresh
``<scratch>/iotune-<kernel>-<runid>/`` and removes exactly that directory afterwards unless
``--keep`` is given. On Lustre the directory gets ``lfs setstripe`` from the striping flags
(files created in it inherit the layout), and the layout is read back with
``lfs getstripe -d``; elsewhere striping is recorded as not applicable.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from iotune.errors import ConfigError
from iotune.execution.rundirs import write_marker
from iotune.execution.scratch import SCRATCH_RULE, check_scratch
from iotune.settings.catalogue import lfs_setstripe_args, settings_in_layer

from .arguments import add_layer
from .errors import EXIT_FAILED, KernelError

_RUN_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def run_id(text: str) -> str:
    """argparse ``type=`` for a run id: safe as one path component."""
    if not _RUN_ID_RE.match(text):
        raise argparse.ArgumentTypeError(
            f"{text!r} must be 1-64 characters of letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    return text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The run-directory flags and the Lustre striping flags."""
    run = parser.add_argument_group("run directory")
    run.add_argument(
        "--scratch",
        required=True,
        metavar="DIR",
        help="existing writable directory; the kernel works in a fresh subdirectory of it",
    )
    run.add_argument(
        "--run-id",
        type=run_id,
        metavar="ID",
        help="name part of the run subdirectory (letters, digits, . _ -); default: "
        "a timestamp plus random characters chosen on rank 0",
    )
    run.add_argument("--keep", action="store_true", help="keep the run subdirectory and its files")
    add_layer(parser.add_argument_group("Lustre striping"), "lustre")


def striping_requested(args: argparse.Namespace) -> dict[str, Any]:
    """The striping settings given on the command line, by setting name."""
    return {s.name: getattr(args, s.name) for s in settings_in_layer("lustre")
            if getattr(args, s.name) is not None}


def _unescape_mount(field_text: str) -> str:
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), field_text)


def detect_filesystem(path: str | os.PathLike[str], mounts_file: str = "/proc/mounts") -> dict:
    """File-system type and mount point holding ``path``.

    Uses the longest mount-point prefix of the real (symlink-free) path in ``mounts_file``;
    among equal mount points the last one listed wins (it shadows earlier ones). Returns
    ``{"type": ..., "mount": ...}``; type ``"unknown"`` when the table cannot be read.
    """
    real = os.path.realpath(path)
    best: tuple[str, str] | None = None
    try:
        with open(mounts_file, encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                if len(fields) < 3:
                    continue
                mount, fstype = _unescape_mount(fields[1]), fields[2]
                inside = mount == "/" or real == mount or real.startswith(mount.rstrip("/") + "/")
                if inside and (best is None or len(mount) >= len(best[0])):
                    best = (mount, fstype)
    except OSError:
        best = None
    if best is None:
        return {"type": "unknown", "mount": None}
    return {"type": best[1], "mount": best[0]}


def is_lustre(fstype: str) -> bool:
    """True for the Lustre client file-system type."""
    return fstype.lower() == "lustre"


def usable_scratch(scratch: str) -> Path:
    """The real path of ``scratch``, or KernelError naming ``--scratch`` and the rule
    (:func:`iotune.execution.scratch.check_scratch`, the rule the driver applies too)."""
    try:
        return check_scratch(scratch, "--scratch")
    except ConfigError as exc:
        raise KernelError(str(exc)) from None


def make_run_id() -> str:
    """A fresh run id: UTC timestamp, process id and random characters."""
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
    return f"{stamp}-{os.getpid()}-{os.urandom(3).hex()}"


def create_run_dir(scratch: str, kernel: str, wanted_id: str | None) -> Path:
    """Create ``<scratch>/iotune-<kernel>-<id>/`` (must not exist yet) and return it."""
    base = usable_scratch(scratch)
    rid = wanted_id or make_run_id()
    run_dir = base / f"iotune-{kernel}-{rid}"
    try:
        run_dir.mkdir(mode=0o755)
    except FileExistsError:
        raise KernelError(
            f"--scratch {scratch}: {run_dir.name} already exists (each run needs a fresh "
            "run directory; choose another --run-id)"
        ) from None
    except OSError as exc:
        raise KernelError(
            f"--scratch {scratch}: cannot create a directory in it: {exc.strerror} "
            f"({SCRATCH_RULE})"
        ) from None
    write_marker(run_dir)  # whose run it is, so a later iotune can remove it if orphaned
    return run_dir


def remove_run_dir(run_dir: Path, scratch: str, kernel: str) -> None:
    """Remove the run directory made by ``create_run_dir`` and nothing else.

    Refuses (silently leaves it) unless ``run_dir`` is a real directory, not a link, whose
    parent is the scratch directory and whose name has the ``iotune-<kernel>-`` prefix.
    """
    expected_parent = Path(scratch).resolve()
    if run_dir.parent != expected_parent or not run_dir.name.startswith(f"iotune-{kernel}-"):
        return
    if run_dir.is_symlink() or not run_dir.is_dir():
        return
    shutil.rmtree(run_dir)


def apply_striping(run_dir: Path, fs: Mapping[str, Any],
                   striping: Mapping[str, Any]) -> dict[str, Any]:
    """Set Lustre striping on the fresh run directory, or record why it does not apply.

    ``striping`` holds the given ``lustre`` settings by name. On Lustre, when any is given,
    runs ``lfs setstripe`` with each setting's option on ``run_dir`` and reads the layout
    back with ``lfs getstripe -d``. Raises ``KernelError`` if ``lfs`` fails. On other file
    systems returns ``{"applicable": False, "reason": "<type> is not Lustre"}``.
    """
    if not is_lustre(str(fs["type"])):
        return {"applicable": False, "reason": f"{fs['type']} is not Lustre"}
    record: dict[str, Any] = {"applicable": True, "requested": None, "command": None}
    if striping:
        command = ["lfs", "setstripe", *lfs_setstripe_args(striping), str(run_dir)]
        _run_lfs(command)
        record["requested"] = {s.name: striping.get(s.name) for s in settings_in_layer("lustre")}
        record["command"] = " ".join(command)
    record["layout"] = _run_lfs(["lfs", "getstripe", "-d", str(run_dir)]).strip()
    return record


def _run_lfs(command: list[str]) -> str:
    import subprocess

    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise KernelError(f"{' '.join(command)} failed: {exc}", EXIT_FAILED) from None
    if done.returncode != 0:
        raise KernelError(
            f"{' '.join(command)} failed with exit code {done.returncode}: {done.stderr.strip()}",
            EXIT_FAILED,
        )
    return done.stdout
