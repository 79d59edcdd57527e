#!/usr/bin/env bash
# Runs lint, type checks and the test suite in the project venv (set up by scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${IOTUNE_VENV:-.venv}/bin/python
export PATH="$(dirname "$PY"):$PATH"
echo "== ruff" >&2
"$PY" -m ruff check .
echo "== mypy" >&2
"$PY" -m mypy
echo "== pytest" >&2
"$PY" -m pytest -q --durations=25 "$@"  # the slowest tests, to keep the suite fast
