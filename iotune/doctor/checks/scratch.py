"""The scratch directory: writable, and the file system it is on (Lustre: ``lfs`` and the
number of OSTs; GPFS; anything else is local to the tuner: striping does not apply)."""

from __future__ import annotations

import re
import shutil
import subprocess

from iotune.doctor.context import DoctorContext
from iotune.doctor.registry import OK, PROBLEM, WARNING, Finding, register_check
from iotune.errors import ConfigError
from iotune.execution.fsinfo import filesystem_of, is_lustre
from iotune.execution.scratch import check_scratch

NAME = "scratch"
#: An OST's line of ``lfs osts``: ``0: lustre-OST0000_UUID ACTIVE``.
_OST = re.compile(r"^\s*\d+:\s+\S+-OST[0-9a-fA-F]+_UUID\b")
#: Seconds ``lfs osts`` may take (it asks the metadata server).
LFS_TIMEOUT_S = 30
NOT_STRIPED = "striping does not apply; the MPI-IO and HDF5 settings are tuned"


def ost_count(mount: str, env: dict[str, str]) -> int | None:
    """The OSTs of the Lustre file system at ``mount`` (``lfs osts``); None when lfs fails."""
    try:
        done = subprocess.run(["lfs", "osts", mount], capture_output=True, text=True,
                              timeout=LFS_TIMEOUT_S, env=env, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    count = sum(1 for line in done.stdout.splitlines() if _OST.match(line))
    return count if done.returncode == 0 and count else None


@register_check(NAME)
def check(context: DoctorContext) -> Finding:
    """:func:`~iotune.execution.scratch.check_scratch` (a file created and removed), then
    :func:`~iotune.execution.fsinfo.filesystem_of`; on Lustre, ``lfs osts`` counted and
    compared with ``system.ost_count``."""
    try:
        where = check_scratch(context.scratch, "system.scratch")
    except ConfigError as exc:
        return Finding(PROBLEM, str(exc), "make it a directory this user can write, or set "
                       "system.scratch in iotune.yaml to one on the file system to tune")
    fstype, mount = filesystem_of(where, context.mounts)
    if not is_lustre(fstype):
        kind = "GPFS" if fstype == "gpfs" else fstype
        return Finding(OK, f"{where} is writable, on {kind} ({mount or 'mount unknown'}): "
                           f"{NOT_STRIPED}")
    if shutil.which("lfs", path=context.env.get("PATH")) is None:
        return Finding(WARNING, f"{where} is writable, on Lustre ({mount}), but lfs is not on "
                                "PATH: striping can be neither set nor read back",
                       "load the Lustre client tools (lfs)")
    count = ost_count(mount, context.env)
    if count is None:
        return Finding(WARNING, f"{where} is writable, on Lustre ({mount}), but `lfs osts "
                                f"{mount}` listed no OST", "check the Lustre client (lfs osts)")
    told = context.ost_count
    found = f"{where} is writable, on Lustre ({mount}, {count} OSTs)"
    if told is None:
        return Finding(WARNING, f"{found}; system.ost_count is not set, so stripe counts are "
                                "not checked against it", f"set system.ost_count: {count} in "
                       "iotune.yaml")
    if told != count:
        return Finding(WARNING, f"{found}, but system.ost_count is {told}",
                       f"set system.ost_count: {count} in iotune.yaml")
    return Finding(OK, found)
