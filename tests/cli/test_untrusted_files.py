"""A 100 MiB tuned file and a named pipe, run through the installed command as a user would.

``apply``, ``job start --candidate`` and ``results -c`` refuse both in one line and leave
the directory as it was. They decide from the file's status alone (its size, its kind), so
no byte of the 100 MiB is read and no pipe is opened for reading; the subprocess timeout is
a guard against a hang, far above what the refusal takes, not a measure of its speed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

#: Seconds before a command that should refuse at once counts as hung: room for the
#: interpreter to start on a loaded machine.
HANG_GUARD_S = 120

COMMANDS = {
    "apply": ("apply", "{}"),
    "job start": ("job", "start", "--tag", "x", "--job-id", "1", "--candidate", "{}"),
    "results -c": ("results", "-c", "{}"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding ``big.yaml`` (a tuned file whose ``reason:`` is 100 MiB) and
    ``pipe.yaml`` (a named pipe)."""
    base = tmp_path_factory.mktemp("untrusted")
    with (base / "big.yaml").open("w") as out:
        out.write("kernel: vpic\ncores: 4\nsettings: {cb_nodes: 2}\nreason: ")
        chunk = "x" * 2**20
        for _ in range(100):
            out.write(chunk)
        out.write("\n")
    os.mkfifo(base / "pipe.yaml")
    return base


def _listing(root: Path) -> dict[str, tuple[int, int]]:
    return {p.name: (p.stat().st_size, p.stat().st_mtime_ns) for p in root.iterdir()}


@pytest.mark.parametrize("name, says", [
    ("big.yaml", "over the limit of 4 MiB"),
    ("pipe.yaml", "is a named pipe (FIFO), not a regular file"),
])
@pytest.mark.parametrize("command", COMMANDS)
def test_refused_in_one_line_without_reading(files: Path, subprocess_env: dict[str, str],
                                             command: str, name: str, says: str) -> None:
    before = _listing(files)
    args = [part.format(name) for part in COMMANDS[command]]
    env = {**subprocess_env, "XDG_CONFIG_HOME": str(files / "xdg")}
    env.pop("IOTUNE_CONFIG", None)
    done = subprocess.run([sys.executable, "-m", "iotune", *args], cwd=files, env=env,
                          capture_output=True, text=True, timeout=HANG_GUARD_S,
                          stdin=subprocess.DEVNULL, check=False)
    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.startswith("iotune: error:")]
    assert len(lines) == 1, done.stderr
    assert name in lines[0] and says in lines[0], lines[0]
    assert _listing(files) == before
