#!/usr/bin/env bash
# The main job on this machine: a real local tune of VPIC-IO end to end.
#   doctor (stop at once, with the fix, when the environment cannot run a tune) ->
#   train (measure a small design at 2 and 4 ranks) -> tune at 4 ranks (default baseline,
#   model-guided prune/explore/refit) -> the tuned YAML -> the job-script lines.
# Works in scratch/demo; rerunning resumes the training and tunes afresh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PWD/${IOTUNE_VENV:-.venv}/bin:$PATH"
work=scratch/demo
mkdir -p "$work"
cp configs/local.yaml "$work/iotune.yaml"
cd "$work"
echo "== iotune doctor (MPI, mpi4py, h5py, scratch, hints, store: can a tune run here?)" >&2
iotune doctor
echo "== iotune train (a small design at 2 and 4 ranks; resumable)" >&2
iotune train
echo "== iotune tune --kernel vpic --cores 4" >&2
iotune tune --kernel vpic --cores 4 --fresh -o tuned.yaml
echo "== tuned.yaml" >&2
cat tuned.yaml
echo "== iotune apply tuned.yaml --format romio" >&2
iotune apply tuned.yaml --format romio
