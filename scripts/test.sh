#!/usr/bin/env bash
# Runs lint, type checks and the test suite in the project venv (set up by scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${IOTUNE_VENV:-.venv}/bin/python
export PATH="$(dirname "$PY"):$PATH"
# The suite starts many Python processes (the CLI, the kernels under mpiexec), and each
# would compile iotune's modules again (about 0.4 s of CPU) were their bytecode not kept:
# it is written (to __pycache__, which git ignores) even where PYTHONDONTWRITEBYTECODE
# asks for none. (PYTHONPYCACHEPREFIX would not do: Python then looks for all bytecode
# there, and would compile numpy, pandas and scipy again too.)
unset PYTHONDONTWRITEBYTECODE
echo "== ruff" >&2
"$PY" -m ruff check .
echo "== mypy" >&2
"$PY" -m mypy
echo "== pytest" >&2
# Two workers (pytest-xdist, from the dev extra), one per core of the 2-core machines the
# suite is sized for (IOTUNE_TEST_WORKERS=0: one process), each taking whole files, so a
# fixture a file's tests share (a real campaign, a built program) runs once; then, alone,
# the tests marked serial (a real run under a deadline of seconds, a real Slurm:
# tests/conftest.py), which a test on the other core could push past their deadline or
# disturb. The files are handed out in the order tests/conftest.py gives them (the
# slow ones first), not re-sorted by xdist. --durations: the slowest tests, to keep the
# suite fast. Exit status 5 (no test selected) only when neither part ran a test.
"$PY" -c "import xdist" 2>/dev/null \
  || { echo "test: pytest-xdist is missing: run scripts/setup.sh --test" >&2; exit 1; }
parallel=0
"$PY" -m pytest -q -n "${IOTUNE_TEST_WORKERS:-2}" --dist loadfile --no-loadscope-reorder \
  -m "not serial" --durations=25 "$@" || parallel=$?
[ "$parallel" -eq 0 ] || [ "$parallel" -eq 5 ] || exit "$parallel"
serial=0
"$PY" -m pytest -q -m serial --durations=5 "$@" || serial=$?
[ "$serial" -eq 0 ] || [ "$serial" -eq 5 ] || exit "$serial"
if [ "$parallel" -eq 5 ] && [ "$serial" -eq 5 ]; then exit 5; fi
