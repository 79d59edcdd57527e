#!/bin/sh
# Run a small REAL production campaign and take a screenshot of its report in headless
# Chromium: 24 jobs of a parallel HDF5 program at 2 ranks, each started under
# 'iotune job start' and 'iotune job finish' as a user's job script is (docs/production.md),
# one after the other in one directory as jobs submitted from it are.
#
#   sh examples/report/production_screenshot.sh [OUTDIR]   (default: ./iotune-production-demo)
#
# The program is tests/production/programs/columns_h5.c: it writes one column per rank of
# a 2 MiB dataset through MPI-IO hints of its own that disable data sieving. The campaign
# (tag columns-h5) is offered two candidates: tuned.yaml (romio_ds_write: enable, injected
# over the program's hint by the preload library) and tuned-2nd.yaml (restating the
# program's own hint). The tenth job is submitted with a bad input (ROWS=0): its program
# exits non-zero and the job script records it with 'job finish --failed'. The last job
# is killed with -9 while its program writes: it never finishes, so it counts as running
# (a job counts as lost only 10 minutes after its time limit).
#
# Writes OUTDIR/iotune-production.jsonl (the journal), OUTDIR/report/index.html (with the
# figure and CSV tables) and OUTDIR/page.png. Needs mpiexec, h5pcc (parallel HDF5) and
# Debian's chromium package (apt-get install chromium); the numbers are MEASURED, on the
# machine that runs it. The screenshot is reduced to 64 colours when Pillow is installed.
# About 3-4 minutes on two cores.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
script=production_screenshot.sh
default_out=iotune-production-demo
. "$here/common.sh"

for tool in mpiexec h5pcc; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "production_screenshot.sh: $tool not found (an MPI and parallel HDF5 are needed)" >&2
        exit 1
    fi
done

cd "$out"
rm -f iotune-production.jsonl  # a fresh campaign
# The job scripts call 'iotune' as a user's do: this checkout's, first on PATH. Nothing of
# the caller's MPI-IO settings or Slurm job leaks into the jobs.
mkdir -p bin
printf '#!/bin/sh\nexec "%s" -m iotune "$@"\n' "$python" > bin/iotune
chmod +x bin/iotune
PATH="$out/bin:$PATH"
export PATH
unset ROMIO_HINTS MPICH_MPIIO_HINTS IOTUNE_SETTINGS LD_PRELOAD IOTUNE_PRELOAD_OUT \
    IOTUNE_CONFIG SLURM_JOB_ID ROWS 2>/dev/null || true

h5pcc -shlib -O2 -Wall -o columns_h5 "$root/tests/production/programs/columns_h5.c"
rm -f columns_h5.o
"$python" -m iotune.preload >/dev/null  # build the preload library once, before the jobs

# The candidates, best-ranked first, as 'iotune tune -o' would have written them.
printf 'settings:\n  romio_ds_write: enable\n' > tuned.yaml
printf 'settings:\n  romio_ds_write: disable\n' > tuned-2nd.yaml

# The job script of docs/production.md, with the program's failure recorded as such.
cat > columns-h5.sh <<'EOF'
#!/bin/bash
set -euo pipefail
STORE=iotune-production.jsonl
eval "$(iotune job start --store $STORE --tag columns-h5 \
          --candidate tuned.yaml --candidate tuned-2nd.yaml)"
if seconds=$(iotune_run mpiexec -n 2 ./columns_h5 out-$SLURM_JOB_ID.h5 "${ROWS:-131072}" \
             | sed -n 's/.*"io_time_s": \([0-9.]*\).*/\1/p'); then
    iotune job finish --store $STORE --tag columns-h5 --seconds "$seconds"
    rm -f out-$SLURM_JOB_ID.h5
else
    iotune job finish --store $STORE --tag columns-h5 --failed
    rm -f out-$SLURM_JOB_ID.h5
    exit 1
fi
EOF

# Jobs 8001-8023, one after the other; 8010 with a bad input.
i=1
while [ "$i" -le 23 ]; do
    job=$((8000 + i))
    if [ "$i" -eq 10 ]; then
        if SLURM_JOB_ID=$job ROWS=0 bash columns-h5.sh >"job-$job.log" 2>&1; then
            echo "production_screenshot.sh: job $job was meant to fail" >&2
            exit 1
        fi
    elif ! SLURM_JOB_ID=$job bash columns-h5.sh >"job-$job.log" 2>&1; then
        echo "production_screenshot.sh: job $job failed; see $out/job-$job.log" >&2
        exit 1
    fi
    i=$((i + 1))
done

# Job 8024 writes 64 MiB per rank and is killed with -9 once its output file exists: the
# job script, mpiexec and the ranks (which mpiexec starts in sessions of their own), found
# as the job's descendants.
descendants() {
    for child in $(ps -o pid= --ppid "$1"); do
        echo "$child"
        descendants "$child"
    done
}
SLURM_JOB_ID=8024 ROWS=8388608 bash columns-h5.sh >job-8024.log 2>&1 &
pid=$!
waited=0
while [ ! -e out-8024.h5 ] && kill -0 "$pid" 2>/dev/null && [ "$waited" -lt 600 ]; do
    sleep 0.1
    waited=$((waited + 1))
done
if ! kill -0 "$pid" 2>/dev/null; then
    echo "production_screenshot.sh: job 8024 ended before it could be killed" >&2
    exit 1
fi
sleep 0.5
tree="$pid $(descendants "$pid")"
# shellcheck disable=SC2086  # one pid per word
kill -9 $tree 2>/dev/null || true
wait "$pid" 2>/dev/null || true
rm -f out-8024.h5
if grep '"event": "finish"' iotune-production.jsonl | grep -q '"job_id": "8024"'; then
    echo "production_screenshot.sh: job 8024 finished before the kill reached it" >&2
fi

iotune job status --store iotune-production.jsonl --tag columns-h5 >status.txt
iotune report --store iotune-production.jsonl -o report --no-color

screenshot 1500,1800
# 64 colours keep the text sharp and the file a third of the size.
"$python" - "$out/page.png" <<'EOF' 2>/dev/null || true
import sys
from PIL import Image
Image.open(sys.argv[1]).convert("RGB").quantize(64, dither=Image.Dither.NONE).save(
    sys.argv[1], optimize=True)
EOF
cat status.txt
echo "production_screenshot.sh: wrote $out/page.png and $out/report/index.html" >&2
