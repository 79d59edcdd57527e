"""Fuzz: every value that reaches a job script or a printed shell line, set to each hostile
value, through every command that writes one: ``train --emit-sbatch`` (``--partition``,
``--account``, ``--time``, ``--array``, the config's directory), ``tune --emit-sbatch``
(the same, ``-o``, the script's path and the working directory), ``apply --dir`` and the
lines ``job start`` prints for ``eval`` (``--tag``, ``--job-id``).

Each case is either refused in one line (non-zero exit, no traceback, within 2 s, every
file of the directory as it was) or its script or lines are run by bash in the directory
with hostile variables in the environment (``X='$(touch pwned)/out'``, ...), a ``touch``
on PATH that records any call, and a stand-in for iotune (or ``lfs``) that records the
arguments it was given: no command of a value may run, no file named for one may appear,
and the value must reach the program as the one literal argument it was.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import pytest

from tests.cli_result import error_line, invoke, isolate

#: Values that would run a command, add a line, or expand into something else if they
#: reached a script unchecked, and a few ordinary ones that must be accepted as they are.
HOSTILE = [
    "x\ntouch pwned\nexit 0", "x\rtouch pwned", "x\x00touch pwned", "$(touch pwned)",
    "`touch pwned`", "${X@P}", "${!X}", "${X:-$(touch pwned)}", "$((1+1))", "$X", "${X}",
    "x'; touch pwned; '", 'x"; touch pwned; "', "x; touch pwned", "x && touch pwned",
    "x | touch pwned", "<(touch pwned)", "x #y", "a\\b", "'", '"', "\u202etouch pwned",
    "x\u2028touch pwned", "x\x85touch pwned", "x\x1b[2J", "1" + "0" * 30, "-1", "nan",
    "inf", "1e20", "", " ", "%j", "*", "~", "x" * 5000,
]
#: Ordinary values each option takes as they are.
ORDINARY = {"--partition": "debug", "--account": "proj_1.x-2", "--time": "1-12:30:00",
            "--array": "8", "--dir": "lustre/out", "--tag": "ckpt-512", "--job-id": "1234_7",
            "-o": "tuned.yaml", "--emit-sbatch": "job.sbatch"}
#: The environment of every script run: a value that reached the script unquoted or
#: evaluated would run a command through one of these.
HOSTILE_ENV = {"X": "$(touch pwned)/out", "SCRATCH": "`touch pwned`", "PS4": "$(touch pwned)",
               "SLURM_JOB_ID": "$(touch pwned)", "SLURM_RESTART_COUNT": "a[$(touch pwned)]",
               "IFS": "/ x", "PROMPT_COMMAND": "touch pwned", "CDPATH": "/"}
CONFIG = ("store: st.jsonl\nbackend: {name: sim}\nspace: {cb_nodes: [1, 2]}\n"
          "train: {repetitions: 1, scales: [{cores: 2}]}\n")
TUNED = "kernel: vpic\ncores: 4\nsettings: {stripe_count: 4, stripe_size: 1MiB}\n"
SIM = ("--backend", "sim", "--system", "hopper")
#: Options click reads as paths (it stats them): their values come from a command line,
#: whose words end at a NUL, so a NUL in them is not tried.
PATH_OPTIONS = ("-o", "--emit-sbatch")
#: Outcomes by command and option, for the summary printed at the end (``-s``).
OUTCOMES: Counter[tuple[str, str]] = Counter()


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A directory with a config, a tuned file, a ``bin`` of recording stand-ins (touch,
    lfs, iotune's Python), no config to find elsewhere and no Slurm job around."""
    directory = tmp_path / "w"
    directory.mkdir()
    (directory / "c.yaml").write_text(CONFIG)
    (directory / "t.yaml").write_text(TUNED)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("touch", "lfs", "python"):
        (bin_dir / name).write_text(
            f"#!/bin/sh\nprintf '%s\\0' \"$@\" >> {shlex.quote(str(tmp_path / name))}.log\n")
        (bin_dir / name).chmod(0o755)
    monkeypatch.chdir(directory)
    isolate(monkeypatch, tmp_path / "xdg")
    return directory


def _snapshot(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): p.read_bytes() if p.is_file() else None
            for p in sorted(root.rglob("*"))}


def _logged(work: Path, name: str) -> list[str] | None:
    """The arguments the stand-in ``name`` was called with, all calls one after the other
    (None: never called); the log is removed."""
    log = work.parent / f"{name}.log"
    if not log.exists():
        return None
    words = log.read_text().split("\0")[:-1]
    log.unlink()
    return words


def _nothing_ran(work: Path) -> None:
    assert _logged(work, "touch") is None
    assert not [p for p in work.parent.rglob("*pwned*") if p.name.startswith("pwned")]


def _refused_or_run(work: Path, args: Sequence[str], kind: str, option: str,
                    run: object) -> str:
    """``iotune ARGS``: refused in one line within 2 s with nothing changed, or ``run``
    (a callable given the CLI result) checks what it wrote or printed. Returns the
    outcome, ``refused`` or ``ran``, counted in :data:`OUTCOMES`."""
    root = work.parent
    before = _snapshot(root)
    started = time.monotonic()
    result = invoke(*args)
    took = time.monotonic() - started
    if result.exit_code != 0:
        line = error_line(result)  # exactly one, and no traceback
        assert took < 2.0, (args, took)
        assert _snapshot(root) == before, line
        OUTCOMES[(kind, option, "refused")] += 1
        return "refused"
    assert callable(run)
    run(result)
    _nothing_ran(work)
    OUTCOMES[(kind, option, "ran")] += 1
    return "ran"


def _bash(work: Path, script: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**HOSTILE_ENV, "PATH": f"{work.parent / 'bin'}:/usr/bin:/bin",
           "HOME": str(work.parent), "OUTPUT_DIR": str(work / "out")}
    return subprocess.run(["bash", str(script)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=60, check=False)


def _sbatch_lines_are_plain(text: str) -> None:
    """Every ``#SBATCH`` line is ``--name`` or ``--name=value`` with nothing sbatch reads
    in its own way (a quote, a backslash, ``#``, a space) and no line ends early."""
    for line in text.splitlines():
        if line.startswith("#SBATCH"):
            rest = line[len("#SBATCH "):]
            assert rest.startswith("--") and not any(c in rest for c in "'\"\\# \t"), line


def _run_job_script(work: Path, script: Path, expected: Sequence[str]) -> None:
    """Run the written job script by bash with iotune's Python replaced by the recording
    stand-in: it must reach the stand-in with exactly ``expected`` (the arguments iotune
    would get), in the directory the script names, and run nothing else."""
    text = script.read_text()
    _sbatch_lines_are_plain(text)
    python = shlex.quote(sys.executable)
    assert text.count(python) == 1
    fake = script.with_name(script.name + ".run")
    fake.write_text(text.replace(python, shlex.quote(str(work.parent / "bin" / "python"))))
    done = _bash(work, fake, work.parent)
    fake.unlink()
    assert done.returncode == 0, done.stderr
    assert _logged(work, "python") == list(expected), done.stderr


def _train(work: Path, option: str, value: str) -> None:
    config, extra = Path("c.yaml"), [option, value]
    if option == "config directory":
        if not _file_name(value):
            return
        (work / value).mkdir()
        config, extra = work / value / "c.yaml", []
        config.write_text(CONFIG)
    args = ["train", "-c", str(config), "--emit-sbatch", "s.sh", *extra]

    def run(result: object) -> None:
        _run_job_script(work, work / "s.sh",
                        ["-m", "iotune", "train", "-c", str(config.resolve())])

    _refused_or_run(work, args, "train --emit-sbatch", option, run)


def _tune(work: Path, option: str, value: str,
          monkeypatch: pytest.MonkeyPatch) -> None:
    here, script, extra = work, "s.sh", [option, value]
    if option in PATH_OPTIONS and "\0" in value:
        return  # no command line holds a NUL (see PATH_OPTIONS)
    if option == "working directory":
        if not _file_name(value):
            return
        here = work / value
        here.mkdir()
        monkeypatch.chdir(here)
        extra = []
    elif option == "--emit-sbatch":
        script, extra = value, []
    args = ["tune", *SIM, "--cores", "4", "--budget", "4", "--emit-sbatch", script, *extra]
    expected = ["-m", "iotune", "tune", "--cores", "4", "--budget", "4", *SIM]
    if option == "-o":
        expected += ["--output", value]

    def run(result: object) -> None:
        assert f"sbatch {shlex.quote(script)}" in getattr(result, "output", "")
        _run_job_script(work, here / script, expected)
        (here / script).unlink()

    _refused_or_run(work, args, "tune --emit-sbatch", option, run)
    monkeypatch.chdir(work)


def _apply_dir(work: Path, value: str, expected: str | None = None) -> None:
    def run(result: object) -> None:
        lines = work / "lines.sh"
        lines.write_text("set -euo pipefail\n" + getattr(result, "stdout", ""))
        done = _bash(work, lines, work)
        assert done.returncode == 0, done.stderr
        calls = _logged(work, "lfs") or []
        assert calls[:5] == ["setstripe", "-c", "4", "-S", "1048576"] and len(calls) == 6
        if expected is not None:
            assert calls[5] == expected

    _refused_or_run(work, ["apply", "t.yaml", "--format", "lustre", "--dir", value],
                    "apply", "--dir", run)


def _job_start(work: Path, option: str, value: str) -> None:
    given = {"--tag": "ckpt", "--job-id": "1", option: value}
    args = ["job", "start", "--store", "j.jsonl",
            *(word for pair in given.items() for word in pair)]

    def run(result: object) -> None:
        lines = work / "lines.sh"
        lines.write_text("set -euo pipefail\neval \"$(cat printed)\"\n"
                         "printf '%s\\0' \"$IOTUNE_JOB_ID\" \"$IOTUNE_JOB_TAG\" "
                         ">> \"$HOME/python.log\"\n")
        (work / "printed").write_text(getattr(result, "stdout", ""))
        done = _bash(work, lines, work)
        assert done.returncode == 0, done.stderr
        assert _logged(work, "python") == [given["--job-id"], given["--tag"]]

    _refused_or_run(work, args, "job start", option, run)


def _file_name(value: str) -> bool:
    """Whether ``value`` can name a directory (the directory cases need one)."""
    return bool(value) and value not in (".", "..") and "/" not in value \
        and "\0" not in value and len(value.encode()) <= 255


@pytest.mark.parametrize("option", ["--partition", "--account", "--time", "--array",
                                    "config directory"])
def test_train_emit_sbatch_refuses_or_writes_a_script_that_runs_nothing(work, option):
    for value in [*HOSTILE, ORDINARY.get(option, "plain-dir")]:
        _train(work, option, value)


@pytest.mark.parametrize("option", ["--partition", "--account", "--time", "-o",
                                    "--emit-sbatch", "working directory"])
def test_tune_emit_sbatch_refuses_or_writes_a_script_that_runs_nothing(work, option,
                                                                      monkeypatch):
    for value in [*HOSTILE, ORDINARY.get(option, "plain-dir")]:
        _tune(work, option, value, monkeypatch)


def test_apply_dir_refuses_or_prints_lines_that_expand_only_its_variables(work):
    for value in HOSTILE:  # what is accepted without quotes or variables is taken literally
        _apply_dir(work, value, None if any(c in value for c in "$'\"") else value)
    # quotes and plain variables are kept; a variable's value is taken as it is
    for value, expected in [("lustre/out", "lustre/out"), ("'a b'", "a b"),
                            ('"$X"', "$(touch pwned)/out"),
                            ("$X/run-1", "$(touch pwned)/out/run-1"),
                            ("${SCRATCH}/o", "`touch pwned`/o"),
                            ("x'; touch pwned; '", "x; touch pwned; "),
                            ('"$OUTPUT_DIR/a b"', str(work / "out" / "a b"))]:
        _apply_dir(work, value, expected)
        shutil.rmtree(work / "$(touch pwned)", ignore_errors=True)
        shutil.rmtree(work / "`touch pwned`", ignore_errors=True)


@pytest.mark.parametrize("option", ["--tag", "--job-id"])
def test_job_start_refuses_or_prints_lines_that_eval_to_the_literal_value(work, option):
    for value in [*HOSTILE, ORDINARY[option]]:
        _job_start(work, option, value)


def test_zz_summary():
    """Prints the outcome counts (``pytest -s``): cases refused and cases written and run
    safely, per command and option. Run after the fuzz tests above (file order)."""
    totals = Counter()
    for (kind, option, outcome), n in sorted(OUTCOMES.items()):
        print(f"{kind} {option}: {outcome} {n}")
        totals[outcome] += n
    print(f"fuzz total: {sum(totals.values())} cases, {totals['refused']} refused, "
          f"{totals['ran']} written and run safely")

