"""The scratch directory rule, one for the driver and the kernels (standard library only).

The driver checks it before launching a run (key ``system.scratch``); a kernel checks it
again on rank 0 before creating its run directory (flag ``--scratch``), since it may run
on another node or be started by hand.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from iotune.errors import ConfigError

SCRATCH_RULE = "the scratch directory must be an existing, writable directory"


def check_scratch(path: str | Path, where: str) -> Path:
    """The real path of ``path``, or ConfigError ``<where>: <path> <what is wrong> (rule)``.

    Writability is tested by creating and removing a file, not with ``os.access``: root,
    ACLs and NFS root-squash make ``access()`` unreliable.
    """
    text = str(path)
    if "$" in text:
        raise ConfigError(f"{where}: {text} names an environment variable that is not set")
    directory = Path(text)
    if not directory.exists():
        raise ConfigError(f"{where}: {text} does not exist ({SCRATCH_RULE})")
    if not directory.is_dir():
        raise ConfigError(f"{where}: {text} is not a directory ({SCRATCH_RULE})")
    try:
        with tempfile.NamedTemporaryFile(dir=directory, prefix=".iotune-probe-"):
            pass
    except OSError as exc:
        raise ConfigError(f"{where}: {text} is not writable by this user ({exc.strerror}; "
                          f"{SCRATCH_RULE})") from None
    return directory.resolve()
