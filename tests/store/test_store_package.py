"""The store package's parts import downwards only: no circle, each importable alone."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "iotune" / "store"
#: The parts, lowest first: a part may import only parts before it.
ORDER = ("damage", "location", "lock", "journal", "source", "targets", "claims", "columns",
         "records", "segments", "cache", "views", "index", "check")


def _imported_parts(path: Path) -> set[str]:
    """The store parts ``path`` imports, anywhere in it (inside functions too)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("iotune.store."):
                found.add(node.module.split(".")[2])
            elif node.module == "iotune.store":
                found.update(alias.name for alias in node.names if alias.name in ORDER)
    return found


def test_every_part_is_listed_and_imports_only_parts_below_it():
    parts = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert parts == set(ORDER)
    for position, part in enumerate(ORDER):
        above = _imported_parts(PACKAGE / f"{part}.py") - set(ORDER[:position])
        assert not above, f"iotune.store.{part} imports {sorted(above)}, which are above it"


def test_each_part_imports_alone_in_a_fresh_interpreter():
    for part in ("", *(f".{p}" for p in ORDER)):
        done = subprocess.run([sys.executable, "-c", f"import iotune.store{part}"],
                              capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
