#!/bin/sh
# Make a report of a small simulated campaign (VPIC-IO on the simulated Hopper: train,
# then a model-guided tune at 512 and 2048 ranks and a random search at 2048) and take a
# screenshot of its HTML page in headless Chromium.
#
#   sh examples/report/screenshot.sh [OUTDIR]        (default: ./iotune-report-demo)
#
# Writes OUTDIR/report/index.html (with the figures and CSV tables) and OUTDIR/page.png.
# Needs Debian's chromium package (apt-get install chromium); the numbers are SIMULATED.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
script=screenshot.sh
default_out=iotune-report-demo
. "$here/common.sh"

iotune() { "$python" -m iotune "$@"; }
if ! iotune report --help >/dev/null 2>&1; then
    # 'report' not yet registered in the iotune group: register it for this run.
    iotune() {
        "$python" -c 'import sys
from iotune.cli.main import cli
from iotune.cli.report_commands import report_command
cli.add_command(report_command)
cli(sys.argv[1:], prog_name="iotune")' "$@"
    }
fi

cd "$out"
# The paper's Hopper config, with noise and two repetitions so the spread shows.
sed -e 's/^store: .*/store: store.jsonl/' -e 's/^  repetitions: 1/  repetitions: 2/' \
    -e 's/^  system: hopper .*/  system: hopper\n  noise: 1.0/' \
    "$root/configs/hopper-vpic.yaml" > hopper.yaml
rm -f store.jsonl
export SCRATCH="$out"
iotune train -c hopper.yaml --backend sim 2>/dev/null
iotune tune -c hopper.yaml --backend sim --cores 512 >/dev/null 2>&1
iotune tune -c hopper.yaml --backend sim --cores 2048 -o tuned.yaml >/dev/null 2>&1
iotune tune -c hopper.yaml --backend sim --cores 2048 --strategy random --budget 30 --fresh \
    >/dev/null 2>&1
iotune report -c hopper.yaml --tuned tuned.yaml -o report --no-color

screenshot 1400,3000
echo "screenshot.sh: wrote $out/page.png and $out/report/index.html" >&2
