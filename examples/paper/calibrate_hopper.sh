#!/bin/sh
# Refit the three free constants of the simulated Hopper on Table 3 of Behzad et al.
# (HPDC'14) at 128, 512 and 2048 cores, print the fit beside the preset's values and the
# in-sample / out-of-sample errors, and exit 1 if the preset no longer holds the fit.
#
#   sh examples/paper/calibrate_hopper.sh [--write] [--format table|csv|json]
#
# Runs from any directory; uses the repository's .venv if there is one, else python3.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -x "$root/.venv/bin/python" ]; then
    python="$root/.venv/bin/python"
else
    python=python3
fi
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$python" -m iotune.sim.calibrate "$@"
