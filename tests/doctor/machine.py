"""Running ``iotune doctor`` as a user would, and reading its lines back."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

#: Seconds one doctor run may take (the MPI checks take a few seconds each here).
TIMEOUT_S = 600


@dataclass(frozen=True)
class Line:
    status: str
    name: str
    text: str


@dataclass(frozen=True)
class Doctor:
    code: int
    lines: dict[str, Line]
    summary: str
    stdout: str
    stderr: str

    def with_status(self, status: str) -> list[str]:
        return [name for name, line in self.lines.items() if line.status == status]


def parse(stdout: str) -> tuple[dict[str, Line], str]:
    """The check lines by name (``status``, ``name``, the rest) and the closing line."""
    *body, last = stdout.rstrip("\n").splitlines()
    lines = {}
    for raw in body:
        line = Line(raw[:8].strip(), raw[9:22].strip(), raw[23:])
        lines[line.name] = line
    return lines, last


def write_config(path: Path, scratch: Path, store: Path, **system: object) -> Path:
    path.write_text(yaml.safe_dump({"system": {"scratch": str(scratch), **system},
                                    "store": str(store)}))
    return path


def run_doctor(config: Path, *args: str, env: dict[str, str] | None = None,
               cwd: Path | None = None) -> Doctor:
    """``python -m iotune doctor -c CONFIG ARGS`` in a subprocess (its own PATH, so the
    launcher it finds is the one ``env`` puts first)."""
    done = subprocess.run([sys.executable, "-m", "iotune", "doctor", "-c", str(config), *args],
                          capture_output=True, text=True, timeout=TIMEOUT_S,
                          env=env if env is not None else dict(os.environ), cwd=cwd,
                          check=False)
    lines, summary = parse(done.stdout)
    return Doctor(done.returncode, lines, summary, done.stdout, done.stderr)
