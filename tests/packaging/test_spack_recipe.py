"""The Spack recipe parses and names the dependencies pyproject.toml names."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RECIPE = REPO / "packaging" / "spack" / "package.py"
#: Spack's package names for the Python distributions whose names differ beyond ``py-``.
SPACK_NAMES: dict[str, str] = {}


def _pyproject_requirements() -> dict[str, str]:
    """Distribution -> minimum version, of the core dependencies and the mpi and parquet
    extras (the recipe's variants)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    found = {}
    extras = project["optional-dependencies"]
    for requirement in [*project["dependencies"], *extras["mpi"], *extras["parquet"]]:
        name, minimum = re.fullmatch(r"([A-Za-z0-9_.-]+)>=([0-9.]+)", requirement).groups()
        found[name.lower()] = minimum
    return found


def _recipe_requirements() -> dict[str, str]:
    """Spack package -> minimum version of every ``depends_on("py-...@X:")`` call."""
    tree = ast.parse(RECIPE.read_text(), filename=str(RECIPE))
    found = {}
    for node in ast.walk(tree):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "depends_on"
                and node.args and isinstance(node.args[0], ast.Constant)):
            spec = str(node.args[0].value)
            match = re.fullmatch(r"py-([a-z0-9-]+)@([0-9.]+):(\+mpi)?", spec)
            if match and match.group(1) != "setuptools":
                found[match.group(1)] = match.group(2)
    return found


def test_the_recipe_is_valid_python_with_one_package_class():
    tree = ast.parse(RECIPE.read_text(), filename=str(RECIPE))
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    assert [c.name for c in classes] == ["PyIotune"]
    assert [b.id for b in classes[0].bases if isinstance(b, ast.Name)] == ["PythonPackage"]


def test_the_recipe_and_pyproject_name_the_same_dependencies_and_versions():
    wanted = {SPACK_NAMES.get(name, name): minimum
              for name, minimum in _pyproject_requirements().items()}
    assert _recipe_requirements() == wanted


def test_the_recipe_asks_for_the_python_and_setuptools_pyproject_does():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())
    python = project["project"]["requires-python"].removeprefix(">=")
    setuptools = project["build-system"]["requires"][0].removeprefix("setuptools>=")
    text = RECIPE.read_text()
    assert f'depends_on("python@{python}:"' in text
    assert f'depends_on("py-setuptools@{setuptools}:"' in text
