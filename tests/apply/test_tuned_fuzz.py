"""Fuzz: every field of a tuned file, set to each payload that would run a command if it
reached a job script or a Python snippet unquoted, through every ``apply`` format.

Each case either is refused in one line (non-zero exit, no traceback) or its printed lines
are run for real (bash for the shell formats, with a ``touch`` on PATH that records any
call; the h5py snippet parsed, its names checked, and run with the venv's Python for a
few), and no command of a payload may run.
"""

from __future__ import annotations

import ast
import copy
import io
import os
import subprocess
import sys
import tokenize
from pathlib import Path
from typing import Any

import pytest
import yaml

from iotune.apply import FORMATS, render
from iotune.errors import ConfigError
from iotune.preload import LIBRARY_ENV
from iotune.settings.catalogue import SETTINGS
from tests.cli_result import error_line, invoke

#: Each tries to run ``touch pwned`` when pasted unquoted, in quotes, in a comment, or in a
#: here-document: newline, CR, command substitution both ways, quotes, the end marker, a
#: semicolon, NUL.
PAYLOADS = ["x\ntouch pwned", "x\rtouch pwned", "$(touch pwned)", "`touch pwned`",
            "x'; touch pwned; '", 'x"; touch pwned; "', "EOF\ntouch pwned\nEOF",
            "x; touch pwned", "x\x00touch pwned", "\n touch pwned \n #"]

#: A tuned file with every field ``iotune tune -o`` writes.
TUNED: dict[str, Any] = {
    "schema_version": 1, "iotune_version": "0.1.0", "created_at": "2025-01-02T03:04:05+00:00",
    "kernel": "vpic", "kernel_args": {"particles_per_rank": 8388608, "timesteps": 1},
    "target": "write", "target_time": "write open to close (max over ranks)",
    "cores": 4, "nodes": 1, "system": "local", "backend": "mpi", "provenance": "measured",
    "recommendation": "tuned", "reason": "faster than the default with 90% confidence",
    "settings": {"stripe_count": 4, "stripe_size": "1MiB", "cb_nodes": 2,
                 "cb_config_list": "*:2", "romio_cb_write": "enable", "alignment": "1MiB",
                 "sieve_buf_size": "1MiB", "hint.romio_no_indep_rw": "true"},
    "mpiio_hints": {"cb_nodes": "2"},
    "measured": {"time_s": 1.0, "statistic": "median", "errors": ["x"]},
    "predicted_time_s": 0.9, "default": {"time_s": 2.0}, "speedup": 2.0, "confidence": 0.9,
    "best_found": None, "best_found_speedup": {"estimate": 2.0, "interval": [1.5, 2.5]},
    "runner_up": None, "tied_with_runner_up": False,
    "noise": {"log_sigma": 0.1, "degrees_of_freedom": 3},
    "search": {"strategy": "model", "source": "mpi on local", "runs": 10},
    "not_in_effect": {"romio_ds_write": {"requested": "disable", "why": "ignored"}},
    "unverified": {"coll_metadata": "yes"},
    "model": {"formula": "1 + 2*f", "params": [1.0, 2.0]},
}

#: Where a payload goes: a key path into the document (the last key may be new).
FIELDS: list[tuple[str, ...]] = [
    *((key,) for key in TUNED if key != "settings"),
    ("kernel_args", "particles_per_rank"), ("mpiio_hints", "cb_nodes"),
    ("measured", "errors"), ("measured", "statistic"), ("search", "strategy"),
    ("search", "source"), ("model", "formula"), ("not_in_effect", "romio_ds_write", "why"),
    *(("settings", name) for name in SETTINGS), ("settings", "hint.romio_no_indep_rw"),
]
#: Payloads as keys: of the document, of settings, of a hint.
KEY_FIELDS = [(), ("settings",), ("settings", "hint.")]


def _with(path: tuple[str, ...], payload: str, as_key: bool = False) -> dict[str, Any]:
    doc = copy.deepcopy(TUNED)
    if as_key:
        where = doc
        for key in path[:1]:
            where = where[key]
        prefix = path[1] if len(path) > 1 else ""
        where[prefix + payload] = "1"
        return doc
    where = doc
    for key in path[:-1]:
        where = where[key]
    where[path[-1]] = payload
    return doc


@pytest.fixture
def job_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with a stand-in preload library (so ``apply`` builds nothing) and a
    ``bin/touch`` that records each call in ``touched``."""
    library = tmp_path / "libiotune_preload-test.so"
    library.write_text("")
    monkeypatch.setenv(LIBRARY_ENV, str(library))
    (tmp_path / "bin").mkdir()
    touch = tmp_path / "bin" / "touch"
    touch.write_text(f"#!/bin/sh\necho \"$@\" >> {tmp_path / 'touched'}\n")
    touch.chmod(0o755)
    return tmp_path


def _no_command_ran(directory: Path) -> None:
    assert not (directory / "touched").exists(), (directory / "touched").read_text()
    assert not list(directory.rglob("pwned"))


def _run_shell(directory: Path, lines: str) -> None:
    """Run ``lines`` as a strict job script; it must end normally, having run nothing else."""
    script = directory / "job.sh"
    script.write_text("set -euo pipefail\n" + lines + "\necho job-ran\n")
    env = {"PATH": f"{directory / 'bin'}:/usr/bin:/bin", "HOME": str(directory),
           "OUTPUT_DIR": str(directory / "out")}
    done = subprocess.run(["bash", str(script)], cwd=directory, env=env, capture_output=True,
                          text=True, timeout=30, check=False)
    assert done.returncode == 0 and done.stdout == "job-ran\n", done.stderr
    _no_command_ran(directory)


#: Every name the h5py snippet may use: nothing a payload could add.
PYTHON_NAMES = {"MPI", "h5py", "info", "Info", "Create", "Set", "fapl", "h5p", "create",
                "FILE_ACCESS", "set_fapl_mpio", "COMM_WORLD", "set_alignment",
                "set_sieve_buf_size", "set_meta_block_size", "fid", "h5f", "ACC_TRUNC", "f",
                "File", "mpi4py"}


def _check_python(snippet: str) -> None:
    """The snippet parses; it uses only the names above and calls only their methods, so
    every value it embeds is a literal; every comment is one line."""
    tree = ast.parse(snippet)
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    names |= {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom | ast.Import)
              for a in n.names}
    assert names <= PYTHON_NAMES, names - PYTHON_NAMES
    tokens = tokenize.generate_tokens(io.StringIO(snippet).readline)
    comments = [t.string for t in tokens if t.type == tokenize.COMMENT]
    assert all("\n" not in c and "\r" not in c for c in comments)


def _check_apply(directory: Path, doc: dict[str, Any], turn: int = 0) -> int:
    """``iotune apply`` of ``doc``: refused in one line, or every format printed and run
    safely (the shell formats' lines in one strict script). A refusal comes from loading
    the file, before any format is looked at, so it is checked with one format, a
    different one at each ``turn``. Returns how many formats printed lines."""
    path = directory / "tuned.yaml"
    path.write_text(yaml.safe_dump(doc))
    first = invoke("apply", str(path), "--format", FORMATS[turn % len(FORMATS)])
    if first.exit_code != 0:
        error_line(first)  # exactly one line, no traceback
        assert len(first.output.strip().splitlines()) == 1, first.output
        _no_command_ran(directory)
        return 0
    shell = []
    for fmt in FORMATS:
        result = invoke("apply", str(path), "--format", fmt)
        assert result.exit_code == 0, result.output
        if fmt == "h5py":
            _check_python(result.stdout)
        else:
            shell.append(result.stdout)
    _run_shell(directory, "\n".join(shell))
    return len(FORMATS)


@pytest.mark.parametrize("field", FIELDS, ids=".".join)
def test_a_payload_in_any_field_runs_no_command(job_dir, field):
    for turn, payload in enumerate(PAYLOADS):
        _check_apply(job_dir, _with(field, payload), turn)


@pytest.mark.parametrize("field", KEY_FIELDS, ids=lambda f: ".".join(f) or "top")
def test_a_payload_as_a_key_is_refused(job_dir, field):
    for turn, payload in enumerate(PAYLOADS):
        assert _check_apply(job_dir, _with(field, payload, as_key=True), turn) == 0


def test_control_characters_in_printed_fields_are_refused_and_the_rest_is_accepted(job_dir):
    """The fields that accept any one line of text do accept the payloads without a
    control character (and those ran above without effect); none accepts the others."""
    for payload in PAYLOADS:
        accepted = _check_apply(job_dir, _with(("reason",), payload))
        assert accepted == (0 if any(c in payload for c in "\n\r\x00") else len(FORMATS))


@pytest.mark.parametrize("field", ["kernel", "cores", "provenance"])
def test_the_printer_refuses_what_bypassed_the_checks(job_dir, field):
    """Defence in depth: ``render`` of a document that was never checked (the header's
    kernel, cores, provenance set to each payload) refuses a control character, and what
    it prints otherwise runs no command."""
    for payload in PAYLOADS:
        tuned = {"settings": {"cb_nodes": 2, "stripe_count": 4, "alignment": 1048576},
                 "kernel": "vpic", "cores": 4, "provenance": "measured", field: payload}
        for fmt in FORMATS:
            try:
                lines = render(tuned, fmt, library=Path(os.environ[LIBRARY_ENV]))
            except ConfigError as exc:
                assert any(c in payload for c in "\n\r\x00"), exc
                assert str(exc).startswith(f"{field}: ") and "control character" in str(exc)
                continue
            if fmt == "h5py":
                _check_python(lines)
            else:
                _run_shell(job_dir, lines)


#: ``--dir`` values that are not one shell word free of commands.
HOSTILE_DIRS = ["x\ntouch pwned", "x\rtouch pwned", "$(touch pwned)", "`touch pwned`",
                "x; touch pwned", "x\x00touch pwned", "\n touch pwned \n #", "a b", "x|y", "x&",
                "x>y", "'unclosed", "<(touch pwned)", '"$(touch pwned)"', "${X@P}", "${!X}",
                "${X:-$(touch pwned)}", '"${X@P}"', "$((1))", "-rf", "~/x"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_dir_flag_is_one_shell_word_without_commands(job_dir, fmt):
    """``--dir`` is shell syntax (a variable, quotes), so it is checked rather than quoted:
    a value with a command, a control character or a second word is refused; a quoted one
    is accepted and the lines run with an ``lfs`` present (so the word is evaluated)."""
    path = job_dir / "tuned.yaml"
    path.write_text(yaml.safe_dump(TUNED))
    for value in [*HOSTILE_DIRS, "x'; touch pwned; '"]:
        result = invoke("apply", str(path), "--format", fmt, "--dir", value)
        if value in HOSTILE_DIRS:
            assert result.exit_code == 2 and error_line(result).startswith("--dir: "), value
    lfs = job_dir / "bin" / "lfs"
    lfs.write_text(f"#!/bin/sh\necho \"$@\" >> {job_dir / 'lfs-calls'}\n")
    lfs.chmod(0o755)
    for value in ['"$OUTPUT_DIR/out"', str(job_dir / "lus"), "${OUTPUT_DIR}/run-1",
                  "'a b'", "x'; touch pwned; '"]:
        result = invoke("apply", str(path), "--format", fmt, "--dir", value)
        assert result.exit_code == 0, result.output
        if fmt != "h5py":
            _run_shell(job_dir, result.stdout)
    if fmt in ("all", "lustre"):
        assert (job_dir / "lfs-calls").read_text().splitlines()[-1] == \
            "setstripe -c 4 -S 1048576 x; touch pwned; "


def test_the_h5py_snippet_of_a_fuzzed_file_runs(job_dir):
    """The snippet with every hostile payload the file accepted runs in the venv's Python
    (a real parallel h5py file), and runs nothing else."""
    doc = copy.deepcopy(TUNED)
    doc.update(reason=PAYLOADS[2], system=PAYLOADS[4],
               search={"strategy": PAYLOADS[3], "source": PAYLOADS[7]})
    path = job_dir / "tuned.yaml"
    path.write_text(yaml.safe_dump(doc))
    result = invoke("apply", str(path), "--format", "h5py")
    assert result.exit_code == 0, result.output
    (job_dir / "snippet.py").write_text(result.stdout + "\nf.close()\n")
    env = {**os.environ, "PATH": f"{job_dir / 'bin'}:{os.environ['PATH']}"}
    done = subprocess.run([sys.executable, "snippet.py"], cwd=job_dir, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert (job_dir / "output.h5").is_file()
    _no_command_ran(job_dir)
