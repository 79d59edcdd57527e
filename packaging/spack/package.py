# ruff: noqa: F403, F405  (Spack's recipe API comes from its star import)
# Spack recipe for iotune. Copy this directory into a Spack repository as
# packages/py-iotune/ (``spack repo create``, ``spack repo add``), then, from a clone:
#
#   spack install py-iotune@main                 # or: spack dev-build py-iotune@main
#   spack load py-iotune
#
# mpi4py and h5py are built against the MPI and parallel HDF5 that Spack chooses (or
# that a site's packages.yaml declares as externals, e.g. Cray MPICH), which is what
# iotune's kernels need. tests/packaging/test_spack_recipe.py checks that this file names
# the same dependencies, at the same minimum versions, as pyproject.toml.

from spack.package import *


class PyIotune(PythonPackage):
    """Model-guided tuning of Lustre striping, MPI-IO hints and HDF5 settings for parallel
    I/O: runs I/O kernels (or your own program) under MPI, fits an empirical model, and
    reports the configuration to put in a job script."""

    # Where your site keeps its clone of iotune: set both before the first install.
    homepage = "https://github.com/iotune/iotune"
    git = "https://github.com/iotune/iotune.git"

    license("BSD-3-Clause")

    version("main", branch="main")

    variant("mpi", default=True,
            description="mpi4py and parallel h5py, for real runs of the kernels")
    variant("parquet", default=False, description="--export to Parquet (pyarrow)")

    depends_on("python@3.11:", type=("build", "run"))
    depends_on("py-setuptools@77:", type="build")

    depends_on("py-numpy@1.24:", type=("build", "run"))
    depends_on("py-scipy@1.10:", type=("build", "run"))
    depends_on("py-pandas@2.0:", type=("build", "run"))
    depends_on("py-click@8.1:", type=("build", "run"))
    depends_on("py-pyyaml@6.0:", type=("build", "run"))
    depends_on("py-rich@13:", type=("build", "run"))
    depends_on("py-rich-click@1.9:", type=("build", "run"))
    depends_on("py-matplotlib@3.7:", type=("build", "run"))
    depends_on("py-scikit-learn@1.6:", type=("build", "run"))
    depends_on("py-darshan@3.4:", type=("build", "run"))
    depends_on("py-jinja2@3.1:", type=("build", "run"))
    depends_on("py-optuna@3.4:", type=("build", "run"))
    depends_on("py-duckdb@1.1:", type=("build", "run"))

    with when("+mpi"):
        depends_on("mpi")
        depends_on("hdf5+mpi")
        depends_on("py-mpi4py@3.1:", type=("build", "run"))
        depends_on("py-h5py@3.8:+mpi", type=("build", "run"))

    depends_on("py-pyarrow@12:", type=("build", "run"), when="+parquet")
