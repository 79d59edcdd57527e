#!/bin/sh
# Print Table 3 of Behzad et al. (HPDC'14, VPIC-IO on Hopper) beside the same table
# computed by iotune's simulated Hopper (an analytic model: simulated, not measured).
#
#   sh examples/paper/reproduce_table3.sh [--system hopper] [--format table|csv|json]
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
