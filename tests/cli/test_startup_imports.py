"""What ``iotune`` imports before it answers: its help and a refusal of bad input load none
of the heavy libraries (pandas, scipy, matplotlib, scikit-learn, optuna, pydarshan, jinja2,
pyarrow, duckdb); the commands that compute import them when they run. Read from
``python -X importtime`` of a real ``python -m iotune`` process, not from timings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.importtime import imported_modules

#: Libraries a start-up that computes nothing must not load (each costs 0.1 s to 0.5 s of
#: every command's start-up). numpy and rich are not here: the strategies' registry, which
#: a config is checked against, needs numpy, and rich draws the help.
HEAVY = ("pandas", "scipy", "matplotlib", "sklearn", "optuna", "darshan", "jinja2",
         "pyarrow", "duckdb")
#: A config whose ``tune.strategy`` names no strategy: refused when the config is checked.
BAD_STRATEGY = "tune: {strategy: nonsense}\n"
#: A config whose ``system.mpi_io`` is not one of its words.
BAD_MPI_IO = "system: {mpi_io: ompio}\n"
#: Four runs of two settings: a one-term model fits them.
SMALL_CSV = "cores,cb_nodes,write_time\n4,1,2.0\n4,1,2.1\n4,2,1.0\n4,2,1.1\n"


def iotune_imports(work: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], set[str]]:
    """``python -X importtime -m iotune ARGS`` in ``work`` (no user config, no Slurm job);
    the finished process and the modules it imported."""
    env = {key: value for key, value in os.environ.items()
           if key != "IOTUNE_CONFIG" and not key.startswith("SLURM_")}
    env["XDG_CONFIG_HOME"] = str(work / "xdg")
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "iotune", *args],
                          cwd=work, env=env, capture_output=True, text=True, timeout=120)
    modules = imported_modules(done.stderr)
    assert "iotune.cli.main" in modules, done.stderr  # the parse sees the run's own imports
    return done, modules


def heavy(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if name.split(".")[0] in HEAVY)


@pytest.mark.parametrize("args", [("--help",), ("tune", "--help")],
                         ids=" ".join)
def test_help_loads_nothing_heavy(tmp_path: Path, args: tuple[str, ...]) -> None:
    done, modules = iotune_imports(tmp_path, *args)
    assert done.returncode == 0, done.stderr
    assert "Usage:" in done.stdout
    assert heavy(modules) == []


@pytest.mark.parametrize(("args", "files", "says"), [
    (("tune", "--kernel", "vpic", "--cores", "abc"), {}, "'--cores'"),
    (("tune", "-c", "bad.yaml", "--kernel", "vpic", "--cores", "4"),
     {"bad.yaml": BAD_STRATEGY}, "unknown strategy 'nonsense'"),
    (("run", "-c", "bad.yaml"), {"bad.yaml": BAD_MPI_IO}, "system.mpi_io"),
    (("profile", "missing.darshan"), {}, "missing.darshan"),
], ids=lambda value: " ".join(value) if isinstance(value, tuple) else None)  # fmt: skip
def test_a_refusal_of_bad_input_loads_nothing_heavy(tmp_path: Path, args: tuple[str, ...],
                                                     files: dict[str, str], says: str) -> None:
    for name, body in files.items():
        (tmp_path / name).write_text(body)
    done, modules = iotune_imports(tmp_path, *args)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("iotune: error:")]
    assert len(errors) == 1 and says in errors[0], done.stderr
    assert heavy(modules) == []


def test_a_command_that_reads_a_table_does_load_pandas(tmp_path: Path) -> None:
    # The same check on a command that needs pandas: the tests above can fail.
    (tmp_path / "runs.csv").write_text(SMALL_CSV)
    done, modules = iotune_imports(tmp_path, "fit", "runs.csv", "--params", "cb_nodes",
                                   "--target", "write_time", "--max-terms", "1", "--output",
                                   "model.yaml")
    assert done.returncode == 0, done.stderr
    assert "pandas" in modules, done.stderr
