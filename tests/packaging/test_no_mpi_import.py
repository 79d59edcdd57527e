"""The driver must never import mpi4py or h5py: MPI init can hang on a login node."""

import subprocess
import sys


def test_importing_the_driver_and_cli_loads_no_mpi_or_h5py():
    code = (
        "import sys\n"
        "import iotune, iotune.cli.main, iotune.config, iotune.backends, iotune.store\n"
        "from iotune.backends import make_backend\n"
        "from iotune.config import build_config\n"
        "from pathlib import Path\n"
        "make_backend(build_config({'system': {'scratch': '/tmp'}}, Path('.')))\n"
        "iotune.cli.main.cli(['--help'], standalone_mode=False)\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('mpi4py', 'h5py'))\n"
        "print('LOADED', bad)\n"
        "sys.exit(1 if bad else 0)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "LOADED []" in out.stdout
