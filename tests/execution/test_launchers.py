"""Golden command lines for every launcher."""

import pytest

from iotune.errors import ConfigError
from iotune.execution.launchers import (
    LaunchRequest,
    MpiexecLauncher,
    SrunLauncher,
    TemplateLauncher,
    make_launcher,
)

CMD = ("python", "kernels/vpicio.py", "--scratch", "/scratch/me")


def test_mpiexec_mpich():
    argv = MpiexecLauncher(flavour="mpich").argv(LaunchRequest(4, CMD))
    assert argv == ["mpiexec", "-n", "4", *CMD]


def test_mpiexec_openmpi_as_root():
    argv = MpiexecLauncher(flavour="openmpi", is_root=True).argv(LaunchRequest(2, CMD))
    assert argv == ["mpiexec", "-n", "2", "--oversubscribe", "--allow-run-as-root", *CMD]


def test_mpiexec_openmpi_as_user():
    argv = MpiexecLauncher(flavour="openmpi", is_root=False).argv(LaunchRequest(2, CMD))
    assert argv == ["mpiexec", "-n", "2", "--oversubscribe", *CMD]


def test_srun():
    argv = SrunLauncher().argv(LaunchRequest(48, CMD, nodes=2))
    assert argv == ["srun", "-n", "48", "-N", "2", "--mpi=pmi2", *CMD]


def test_template_aprun():
    launcher = TemplateLauncher("aprun -n {ranks} -N {ranks_per_node} {command}")
    argv = launcher.argv(LaunchRequest(48, (*CMD[:3], "/scratch/my dir"), nodes=2))
    assert argv == ["aprun", "-n", "48", "-N", "24", *CMD[:3], "/scratch/my dir"]


def test_template_without_command_field():
    with pytest.raises(ConfigError, match=r"system.launcher_template: .* must contain \{command\}"):
        TemplateLauncher("aprun -n {ranks}")


def test_template_unknown_field():
    with pytest.raises(ConfigError, match="unknown or bad field"):
        TemplateLauncher("aprun -n {cores} {command}")


def test_unknown_launcher_lists_known():
    with pytest.raises(ConfigError) as info:
        make_launcher("qsub")
    assert str(info.value) == ("system.launcher: unknown launcher 'qsub'; known launchers: "
                               "mpiexec, srun, template")
