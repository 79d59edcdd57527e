#!/bin/sh
# Print Table 3 of Behzad et al. (HPDC'14, VPIC-IO on Hopper) beside the same table
# computed by iotune's simulated Hopper (an analytic model: simulated, not measured).
# Three constants of the simulated Hopper were fitted to this table at 128, 512 and 2048
# cores: those rows are in-sample (fitted, not reproduced); 1024 and 8192 cores are
# out-of-sample. Noise is on (ten seeded repetitions per configuration); --noise 0 gives
# the deterministic model alone. See examples/paper/README.md and docs/sim.md.
#
#   sh examples/paper/compare_table3.sh [--system hopper] [--noise 1] [--repetitions 10]
#                                       [--seed 0] [--format table|csv|json]
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
PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}" exec "$python" "$here/table3.py" "$@"
