#!/usr/bin/env bash
# Installs everything iotune needs, idempotently: a venv in .venv, mpi4py built against
# the MPI found, h5py built with that MPI's parallel HDF5, and iotune itself (editable,
# with its development tools). Each step checks first, so a second run is fast.
#
# Where MPI and parallel HDF5 come from:
#   1. already present (a cluster's modules, or installed before): the MPI compiler is
#      $MPICC or mpicc on PATH; parallel HDF5 is $HDF5_DIR, or the h5pcc on PATH.
#      Nothing is installed system-wide then: no apt, no sudo.
#   2. nothing usable found, on Debian as root (or with sudo): MPICH and its parallel
#      HDF5 from apt, with Open MPI and its HDF5 beside them (for the tests that show what
#      Open MPI does with hints; MPICH stays the default) and Slurm (for the Slurm tests).
#   3. otherwise: one message saying what is missing and how to provide it.
# IOTUNE_APT=no never installs packages; IOTUNE_APT=yes installs the Debian packages even
# when an MPI is present.
#
# Where Debian's Open MPI is installed beside MPICH, a second venv (.venv-openmpi,
# $IOTUNE_OPENMPI_VENV) gets mpi4py and h5py built against it, for the tests that run the
# kernels under Open MPI.
#
# mpi4py and h5py are built once per MPI and HDF5 into a wheel cache
# ($IOTUNE_WHEELHOUSE, default ~/.cache/iotune/wheels), so another clone or venv on the
# same machine installs them in seconds.
#
# Usage: scripts/setup.sh
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
VENV=${IOTUNE_VENV:-.venv}
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
APT=${IOTUNE_APT:-auto}
APT_PACKAGES=(mpich libmpich-dev libhdf5-mpich-dev hdf5-tools pkg-config slurm-wlm munge
              openmpi-bin libopenmpi-dev libhdf5-openmpi-dev)
WHEELHOUSE=${IOTUNE_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/iotune/wheels}

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

case "$APT" in auto|yes|no) ;; *) die "IOTUNE_APT=$APT: must be auto, yes or no" ;; esac

# --- MPI and parallel HDF5 -------------------------------------------------------------

mpi_compiler() {  # the MPI C compiler that works, or nothing
  local cc=${MPICC:-mpicc}
  command -v "$cc" >/dev/null 2>&1 && "$cc" -show >/dev/null 2>&1 && command -v "$cc"
}

# Prints "include-dir lib-dir" of a parallel HDF5, or nothing.
parallel_hdf5() {
  if [ -n "${HDF5_DIR:-}" ]; then
    grep -qs 'define H5_HAVE_PARALLEL 1' "$HDF5_DIR/include/H5pubconf.h" \
      && echo "$HDF5_DIR/include $HDF5_DIR/lib"
    return 0
  fi
  command -v h5pcc >/dev/null 2>&1 || return 0
  h5pcc -showconfig 2>/dev/null | grep -qi 'Parallel HDF5: *yes' || return 0
  local words inc="" lib="" w
  read -r -a words <<< "$(h5pcc -show 2>/dev/null)"
  for w in "${words[@]}"; do
    case "$w" in
      -I*) [ -z "$inc" ] && inc=${w#-I} ;;
      -L*) [ -z "$lib" ] && lib=${w#-L} ;;
      */libhdf5.so|*/libhdf5.a) [ -z "$lib" ] && lib=$(dirname "$w") ;;
    esac
  done
  [ -n "$inc" ] && [ -n "$lib" ] && echo "$inc $lib"
  return 0
}

can_install() {  # Debian packages may be installed: apt-get there, and root or sudo
  command -v apt-get >/dev/null 2>&1 || return 1
  [ "$(id -u)" -eq 0 ] || sudo -n true 2>/dev/null
}
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo -n "$@"; fi; }

install_packages() {
  local missing=() p
  for p in "${APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
  # Installing Open MPI makes it the default in Debian's alternatives (higher priority):
  # keep MPICH the one that mpicc, mpiexec and h5pcc name.
  pin_mpich mpi /usr/bin/mpicc.mpich
  pin_mpich mpirun /usr/bin/mpirun.mpich
  pin_mpich h5pcc /usr/bin/h5pcc.mpich
  pin_mpich "mpi-$(uname -m)-linux-gnu" "/usr/include/$(uname -m)-linux-gnu/mpich"
}
pin_mpich() {
  local name=$1 want=$2
  [ -e "$want" ] && command -v update-alternatives >/dev/null 2>&1 || return 0
  [ "$(readlink -f "/etc/alternatives/$name" 2>/dev/null)" = "$(readlink -f "$want")" ] && return 0
  say "making MPICH the default for $name"
  as_root update-alternatives --set "$name" "$want" >/dev/null
}

MPICC_FOUND=$(mpi_compiler || true)
HDF5_FOUND=$(parallel_hdf5)
if [ "$APT" = yes ] || { [ "$APT" = auto ] && { [ -z "$MPICC_FOUND" ] || [ -z "$HDF5_FOUND" ]; } && can_install; }; then
  install_packages
  MPICC_FOUND=$(mpi_compiler || true)
  HDF5_FOUND=$(parallel_hdf5)
fi
if [ -z "$MPICC_FOUND" ] || [ -z "$HDF5_FOUND" ]; then
  what=()
  [ -n "$MPICC_FOUND" ] || what+=("an MPI C compiler (\$MPICC or mpicc on PATH)")
  [ -n "$HDF5_FOUND" ] || what+=("a parallel HDF5 (\$HDF5_DIR, or h5pcc on PATH, built with MPI)")
  die "not found: ${what[*]}. On a cluster, load the modules first (e.g. module load" \
      "openmpi hdf5-parallel) or set MPICC and HDF5_DIR; on Debian, run this as root to" \
      "install MPICH and its HDF5."
fi
read -r HDF5_INCLUDE HDF5_LIB <<< "$HDF5_FOUND"
say "MPI compiler: $MPICC_FOUND; parallel HDF5: $HDF5_INCLUDE, $HDF5_LIB"

# --- the venv, mpi4py and h5py -----------------------------------------------------------

# Installs $2 into venv $1 from the wheel cache of MPI compiler $3 and HDF5 "$4 $5",
# building the wheel there first if it is not (the rest of the arguments: the build's
# environment, as "env VAR=value ...").
from_wheelhouse() {
  local vpy=$1 name=$2 cc=$3 inc=$4 lib=$5; shift 5
  # Wheels built against one MPI and HDF5 are kept apart from those of another.
  local tag wheels
  tag=$(printf '%s\n%s\n%s %s\n' "$cc" "$("$cc" -show 2>/dev/null || true)" "$inc" "$lib" \
        | sha256sum | cut -c1-16)
  wheels="$WHEELHOUSE/$tag"
  if ! ls "$wheels"/"$name"-*.whl >/dev/null 2>&1; then
    mkdir -p "$wheels"
    # --no-cache-dir: pip's own cache keys a built wheel by its source alone, and would
    # hand back a build against another MPI.
    "$@" "$vpy" -m pip wheel -q --no-cache-dir --no-deps --no-build-isolation \
      --no-binary="$name" -w "$wheels" "$name"
  fi
  "$vpy" -m pip install -q --no-deps "$(ls "$wheels"/"$name"-*.whl | tail -n 1)"
}

# A venv at $1 with mpi4py and parallel h5py built against MPI compiler $2 and the HDF5
# in include dir $3 and lib dir $4.
mpi_venv() {
  local venv=$1 cc=$2 inc=$3 lib=$4 vpy="$1/bin/python"
  if [ ! -x "$vpy" ]; then
    say "creating virtual environment $venv with $PY"
    "$PY" -m venv "$venv"
    "$vpy" -m pip install -q -U pip
  fi
  if ! "$vpy" -c "import mpi4py.MPI" 2>/dev/null; then
    # -O1: at the default -O3 compiling MPI.c needs >20 GB of memory on this machine class.
    say "$venv: mpi4py against $cc (building it takes about 90 s the first time)"
    "$vpy" -m pip install -q -U "setuptools>=77" "cython>=3" pkgconfig numpy
    from_wheelhouse "$vpy" mpi4py "$cc" "$inc" "$lib" env CFLAGS=-O1 MPICC="$cc"
  fi
  if ! "$vpy" -c "import h5py, sys; sys.exit(0 if h5py.get_config().mpi else 1)" 2>/dev/null; then
    say "$venv: h5py with MPI against $lib (building it takes about 2 min the first time)"
    "$vpy" -m pip install -q -U "setuptools>=77" "cython>=3" pkgconfig numpy
    "$vpy" -m pip uninstall -q -y h5py 2>/dev/null || true
    # --no-build-isolation: otherwise pip rebuilds mpi4py at -O3 inside the build env.
    from_wheelhouse "$vpy" h5py "$cc" "$inc" "$lib" env HDF5_MPI=ON CC="$cc" \
      HDF5_INCLUDEDIR="$inc" HDF5_LIBDIR="$lib"
  fi
}

mpi_venv "$VENV" "$MPICC_FOUND" "$HDF5_INCLUDE" "$HDF5_LIB"
vpy="$VENV/bin/python"

# Reinstall iotune only when its packaging metadata changed since the last install.
stamp="$VENV/.iotune-installed"
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || ! "$vpy" -c "import iotune" 2>/dev/null; then
  say "installing iotune (editable) with its development tools"
  "$vpy" -m pip install -q --no-build-isolation -e ".[dev]"
  echo "$want" > "$stamp"
fi
lib=$("$vpy" -m iotune.preload); say "preload library: $lib"  # builds it once per source change

# Where Debian's Open MPI and its parallel HDF5 sit beside MPICH (root setup above), a
# second venv runs the kernels under Open MPI, for the tests of what it does with hints.
OPENMPI_VENV=${IOTUNE_OPENMPI_VENV:-.venv-openmpi}
ompi_inc=/usr/include/hdf5/openmpi
ompi_lib=/usr/lib/$(uname -m)-linux-gnu/hdf5/openmpi
if command -v mpicc.openmpi >/dev/null 2>&1 && [ -d "$ompi_inc" ] && [ -d "$ompi_lib" ]; then
  mpi_venv "$OPENMPI_VENV" "$(command -v mpicc.openmpi)" "$ompi_inc" "$ompi_lib"
  if ! "$OPENMPI_VENV/bin/python" -c "import iotune, yaml" 2>/dev/null; then
    say "$OPENMPI_VENV: installing iotune (editable)"
    "$OPENMPI_VENV/bin/python" -m pip install -q --no-build-isolation -e .
  fi
  say "ready: $OPENMPI_VENV (the kernels under Open MPI)"
fi
say "ready: $VENV ($("$vpy" -c 'import mpi4py, h5py; print("mpi4py", mpi4py.__version__, "h5py", h5py.__version__)'))"
