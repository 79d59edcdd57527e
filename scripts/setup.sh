#!/usr/bin/env bash
# Installs everything iotune needs on Debian 12 with Python 3.11, idempotently:
#   MPICH + parallel HDF5 (apt), a venv in .venv, mpi4py built against that MPICH,
#   h5py built with MPI, and iotune itself (editable, with its dev tools).
#   Open MPI and its parallel HDF5 are installed beside MPICH for the tests that show what
#   Open MPI does with MPI-IO hints; MPICH stays the default MPI (mpicc, mpiexec, h5pcc).
# Each step checks first and does nothing when already done, so a second run is fast.
# Usage: scripts/setup.sh            (run as root, or with sudo available)
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
VENV=${IOTUNE_VENV:-.venv}
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
APT_PACKAGES=(mpich libmpich-dev libhdf5-mpich-dev hdf5-tools pkg-config slurm-wlm munge
              openmpi-bin libopenmpi-dev libhdf5-openmpi-dev)
HDF5_DIR=/usr/lib/x86_64-linux-gnu/hdf5/mpich
[ -d "$HDF5_DIR" ] || HDF5_DIR=/usr/lib/$(uname -m)-linux-gnu/hdf5/mpich

say() { printf 'setup: %s\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Installing Open MPI makes it the default MPI in Debian's alternatives (higher priority):
# keep MPICH the one that mpicc, mpiexec and h5pcc name.
pin_mpich() {
  local name=$1 want=$2
  [ -e "$want" ] || return 0
  [ "$(readlink -f "/etc/alternatives/$name" 2>/dev/null)" = "$(readlink -f "$want")" ] && return 0
  say "making MPICH the default for $name"
  as_root update-alternatives --set "$name" "$want" >/dev/null
}
if command -v update-alternatives >/dev/null 2>&1; then
  pin_mpich mpi /usr/bin/mpicc.mpich
  pin_mpich mpirun /usr/bin/mpirun.mpich
  pin_mpich h5pcc /usr/bin/h5pcc.mpich
  pin_mpich "mpi-$(uname -m)-linux-gnu" "/usr/include/$(uname -m)-linux-gnu/mpich"
fi

if [ ! -x "$VENV/bin/python" ]; then
  say "creating virtual environment $VENV with $PY"
  "$PY" -m venv "$VENV"
  "$VENV/bin/python" -m pip install -q -U pip
fi
vpy="$VENV/bin/python"

if ! "$vpy" -c "import mpi4py.MPI" 2>/dev/null; then
  # -O1: at the default -O3 compiling MPI.c needs >20 GB of memory on this class of machine.
  say "building mpi4py against MPICH (about 90 s)"
  CFLAGS=-O1 MPICC=mpicc "$vpy" -m pip install -q --no-binary=mpi4py mpi4py
fi

if ! "$vpy" -c "import h5py, sys; sys.exit(0 if h5py.get_config().mpi else 1)" 2>/dev/null; then
  say "building h5py with MPI against $HDF5_DIR (about 2 min)"
  "$vpy" -m pip install -q -U "setuptools>=77" "cython>=3" pkgconfig numpy
  "$vpy" -m pip uninstall -q -y h5py 2>/dev/null || true
  # --no-build-isolation: otherwise pip rebuilds mpi4py at -O3 inside the build env.
  HDF5_MPI=ON CC=mpicc HDF5_DIR="$HDF5_DIR" \
    "$vpy" -m pip install -q --no-build-isolation --no-binary=h5py h5py
fi

# Reinstall iotune only when its packaging metadata changed since the last install.
stamp="$VENV/.iotune-installed"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || ! "$vpy" -c "import iotune" 2>/dev/null; then
  say "installing iotune (editable) with its development tools"
  "$vpy" -m pip install -q --no-build-isolation -e ".[dev]"
  echo "$want" > "$stamp"
fi
lib=$("$vpy" -m iotune.preload); say "preload library: $lib"  # builds it once per source change
say "ready: $VENV ($("$vpy" -c 'import mpi4py, h5py; print("mpi4py", mpi4py.__version__, "h5py", h5py.__version__)'))"
