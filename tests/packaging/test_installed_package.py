"""A non-editable install finds its kernels without the source tree."""

import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def wheel_build(tmp_path_factory):
    """The wheel of this tree, built without isolation; returns (wheel, build output)."""
    wheels = tmp_path_factory.mktemp("wheels")
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-v", "-w", str(wheels), str(REPO)],
                           check=True, capture_output=True, text=True, timeout=300)
    (wheel,) = wheels.glob("iotune-*.whl")
    return wheel, built.stdout + built.stderr


@pytest.fixture(scope="module")
def installed(tmp_path_factory, wheel_build):
    """The wheel unpacked as an install target (its deps come from the venv)."""
    target = tmp_path_factory.mktemp("site")
    with zipfile.ZipFile(wheel_build[0]) as archive:
        archive.extractall(target)
    return target


def _env(target):
    env = dict(os.environ)
    env["PYTHONPATH"] = str(target)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def test_wheel_ships_kernels_and_configs(installed):
    assert (installed / "iotune_kernels" / "vpicio.py").is_file()
    assert (installed / "iotune_kernels" / "ior.py").is_file()
    assert (installed / "iotune_kernels" / "kit" / "harness.py").is_file()
    assert (installed / "iotune" / "sim" / "systems" / "hopper.yaml").is_file()


def test_the_build_prints_no_packaging_warning(wheel_build):
    # setuptools' warnings are classes (SetuptoolsDeprecationWarning, BuildBackendWarning,
    # ...); distutils' "warning: byte-compiling is disabled" lines are only notes.
    warnings = [line.strip() for line in wheel_build[1].splitlines()
                if re.search(r"[A-Za-z]+Warning\b", line)]
    assert not warnings


def test_wheel_ships_every_data_file_the_code_loads(installed):
    files = [p.relative_to(REPO) for p in (REPO / "iotune").rglob("*")
             if p.is_file() and p.suffix not in (".py", ".pyc") and "__pycache__" not in p.parts]
    assert any(p.suffix == ".c" for p in files) and any(p.suffix == ".j2" for p in files)
    missing = sorted(str(p) for p in files if not (installed / p).is_file())
    assert not missing  # list each in pyproject.toml's [tool.setuptools.package-data]


def test_wheel_ships_every_package_and_the_starter_config(installed):
    packages = {p.parent.relative_to(REPO) for p in (REPO / "iotune").rglob("__init__.py")}
    assert len(packages) > 10
    missing = sorted(str(p) for p in packages if not (installed / p / "__init__.py").is_file())
    assert not missing  # list each in pyproject.toml's [tool.setuptools] packages
    assert (installed / "iotune" / "templates" / "iotune.yaml").is_file()


@pytest.mark.mpi
def test_installed_iotune_runs_a_kernel_from_its_own_files(installed, tmp_path):
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    (tmp_path / "iotune.yaml").write_text(
        f"system: {{scratch: {scratch}, cores_per_node: 2}}\nstore: s.jsonl\n"
        "kernel: {name: vpic, args: {particles_per_rank: 1024}}\n")
    command = [sys.executable, "-m", "iotune", "run", "--cores", "2", "--format", "json"]
    out = subprocess.run(command,
                         cwd=tmp_path, env=_env(installed), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    record = json.loads(out.stdout)
    assert record["status"] == "ok", record.get("error")
    kernel_path = Path(record["command"][record["command"].index("-n") + 3])
    assert kernel_path == installed / "iotune_kernels" / "vpicio.py"
