"""Every benchmark command the README and docs/*.md name runs, in its quick mode.

The commands are read from the docs, so a newly documented command is covered without
touching this file: each ``benchmarks/NAME.py ARGS`` in a code block line or an inline
code span (``python`` before it or not). Each runs with ``--quick`` added
(``benchmarks/quick_mode.py``: the options that make a run long take small values) and
must exit 0 and print the line its script's ``SUMMARY`` pattern describes.

Data outside the repository (the shared landscapes and production runs) is never needed:
a script whose default data lies outside names the option in ``DATA_OPTION`` (the docs
must pass it or name the shared data on the same line), and a path the docs give that is
not in the repository is replaced by a small landscape generated here.
"""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.benchmarks.synthetic import write_landscape

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_SCRIPT = re.compile(r"(?<![\w/])benchmarks/(\w+)\.py\b")
_SPAN = re.compile(r"`([^`]+)`")
#: Seconds one quick command may take before it counts as hung (a quick run takes a few
#: seconds; this only stops a hang from blocking the suite).
TIMEOUT_S = 300


@dataclass(frozen=True)
class Documented:
    script: str
    args: tuple[str, ...]
    where: str
    line: str
    in_block: bool

    @property
    def id(self) -> str:
        return " ".join((self.script, *self.args))


def _after(text: str, script_end: int) -> tuple[str, ...]:
    """The arguments after a script path: up to a comment or the end of the text."""
    rest = text[script_end:].split("#", 1)[0]
    return tuple(shlex.split(rest.replace("\\\n", " ")))


def _commands_in(path: Path) -> list[Documented]:
    found: list[Documented] = []
    text = path.read_text()
    blocks = text.split("```")
    for i, block in enumerate(blocks):
        if i % 2:  # inside a fenced code block: one command per line (\ continues it)
            for line in block.replace("\\\n", " ").splitlines():
                for match in _SCRIPT.finditer(line):
                    found.append(Documented(match.group(1), _after(line, match.end()),
                                            path.name, line.strip(), True))
            continue
        for span in _SPAN.finditer(block):
            code = span.group(1).replace("\n", " ")
            for match in _SCRIPT.finditer(code):
                found.append(Documented(match.group(1), _after(code, match.end()),
                                        path.name, code, False))
    return found


def _is_program(script: str) -> bool:
    path = BENCHMARKS / f"{script}.py"
    return path.is_file() and 'if __name__ == "__main__":' in path.read_text()


def documented_commands() -> list[Documented]:
    """Each distinct documented command of a benchmark program, in the docs' order
    (commands that differ only by ``--quick`` are one). A script named in prose without
    arguments (a heading, a sentence: "`python benchmarks/x.py` measures ...") counts only
    when the docs give no command of it."""
    seen: dict[tuple[str, frozenset[str]], Documented] = {}
    named: dict[str, Documented] = {}
    for doc in DOCS:
        for command in _commands_in(doc):
            if not _is_program(command.script):
                continue
            if not command.args and not command.in_block:
                named.setdefault(command.script, command)
                continue
            key = (command.script, frozenset(command.args) | {"--quick"})
            seen.setdefault(key, command)
    scripts = {script for script, _ in seen}
    return [*seen.values(), *(c for s, c in named.items() if s not in scripts)]


def constants(script: str) -> dict[str, object]:
    """The literal module constants of a benchmark (SUMMARY, DATA_OPTION), read without
    importing it."""
    tree = ast.parse((BENCHMARKS / f"{script}.py").read_text())
    values: dict[str, object] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                continue
    return values


COMMANDS = documented_commands()


def _outside(value: str) -> bool:
    """A path the docs give that this repository does not hold."""
    looks_like_path = "/" in value or value.endswith(".csv")
    place = (ROOT / value).resolve()
    return looks_like_path and not (place.is_relative_to(ROOT) and place.exists())


def quick_argv(command: Documented, tmp: Path) -> list[str]:
    """The command with generated data for paths outside the repository, and --quick."""
    args = list(command.args)
    data_option = constants(command.script).get("DATA_OPTION")
    for i, value in enumerate(args[1:], start=1):
        if args[i - 1].startswith("--") and _outside(value):
            folder = tmp / "landscapes"
            wants_folder = value.endswith("/") or args[i - 1].endswith("-dir")
            csv = write_landscape(folder)
            args[i] = str(folder if wants_folder else csv)
    if isinstance(data_option, tuple) and data_option[0] not in args:
        csv = write_landscape(tmp / "landscapes")
        args += [data_option[0], str(csv.parent if data_option[1] == "dir" else csv)]
    if "--quick" not in args:
        args.append("--quick")
    return [sys.executable, str(BENCHMARKS / f"{command.script}.py"), *args]


def test_the_docs_name_benchmark_commands():
    scripts = {c.script for c in COMMANDS}
    # a sample of what the docs name; the run below covers all of them
    assert {"estimate_phases", "real_landscapes", "strategies", "bounds"} <= scripts
    assert any(c.args == ("--direct", "yes", "--mib-per-rank", "256", "--reps", "7")
               for c in COMMANDS if c.script == "estimate_phases")  # across a line break
    assert not any(c.script == "landscapes_lib" for c in COMMANDS)  # a library, not a program
    assert [c.id for c in COMMANDS].count("strategies") == 1  # "--quick" added or not


@pytest.mark.parametrize("command", COMMANDS, ids=[c.id for c in COMMANDS])
def test_documented_command_runs_quick(command, tmp_path):
    values = constants(command.script)
    summary = values.get("SUMMARY")
    assert isinstance(summary, str), f"benchmarks/{command.script}.py has no SUMMARY pattern"
    data_option = values.get("DATA_OPTION")
    if isinstance(data_option, tuple):
        assert data_option[0] in command.args or "shared/data" in command.line, (
            f"{command.where}: '{command.line}' needs data outside the repository; the docs "
            f"must pass {data_option[0]} or name the shared data")
    argv = quick_argv(command, tmp_path)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=TIMEOUT_S, check=False)
    output = done.stdout + done.stderr
    assert done.returncode == 0, f"{shlex.join(argv[1:])} exited {done.returncode}:\n" \
        + output[-3000:]
    assert re.search(summary, output, re.MULTILINE), \
        f"{shlex.join(argv[1:])}: no line matching {summary!r} in:\n{output[-3000:]}"
    assert not (BENCHMARKS / "data" / "quick-local-vpic.csv").exists()
