"""iotune's modules import one way: no import circle anywhere in the package, and no module
imports from a layer above its own in :data:`LAYERS`.

Every runtime import counts, those inside functions too (a lazy import that dodges a circle
at run time is still one); imports under ``if TYPE_CHECKING:`` do not, and neither does a
module importing a package it is part of (its ``__init__`` runs first anyway).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "iotune"

#: iotune's layers, top to bottom: each is a package directly under ``iotune/`` or a
#: top-level module, and imports only from itself and the layers below it. The README's
#: "Layout" table lists the same order.
LAYERS = (
    "__main__",
    "cli",
    "doctor",
    "defaults",
    "report",
    "production",
    "apply",
    "tune",
    "knowledge",
    "tuned",
    "train",
    "darshan",
    "backends",
    "variability",
    "sim",
    "config",
    "strategies",
    "model",
    "kernel_specs",
    "workload",
    "kernel_args",
    "store",
    "execution",
    "preload",
    "settings",
    "templates",
    "ui",
    "inputs",
    "printable",
    "errors",
)


def _modules() -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return ((isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
            or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def _imported_names(module: str, path: Path) -> set[str]:
    """The dotted names ``module`` imports at run time, at any depth of its code."""
    names: set[str] = set()
    stack: list[ast.AST] = list(ast.parse(path.read_text(encoding="utf-8")).body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join([*here, base] if base else here)
            names.add(base)
            names.update(f"{base}.{alias.name}" for alias in node.names)
        else:
            stack.extend(ast.iter_child_nodes(node))
    return names


def import_graph() -> dict[str, set[str]]:
    """Each module of iotune -> the modules of iotune it imports."""
    modules = _modules()
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for target in _imported_names(name, path):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and not name.startswith(target + "."):
                graph[name].add(target)
    return graph


def layer_of(module: str) -> str | None:
    """The layer of a dotted module name of iotune: its part right under ``iotune``, or
    None for ``iotune`` itself (the root package, which imports no layer)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def upward_imports(graph: dict[str, set[str]], layers: tuple[str, ...]) -> list[str]:
    """Each import in ``graph`` (module -> modules it imports) of a module from a layer
    above its own in ``layers`` (top to bottom), as ``"<module> imports <module>: ..."``.
    Modules outside ``layers`` are left to :func:`test_every_layer_is_listed_once`."""
    rank = {name: i for i, name in enumerate(layers)}
    found = []
    for module in sorted(graph):
        here = rank.get(layer_of(module) or "")
        for target in sorted(graph[module]):
            there = rank.get(layer_of(target) or "")
            if here is not None and there is not None and there < here:
                found.append(f"{module} imports {target}: {layers[there]} is above "
                             f"{layers[here]}")
    return found


def find_circle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle as ``[a, b, ..., a]``, or None when the graph has none."""
    state: dict[str, int] = {}  # 1: on the current path, 2: finished
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                return [*path[path.index(target):], target]
            if target not in state:
                circle = visit(target)
                if circle is not None:
                    return circle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state:
            circle = visit(start)
            if circle is not None:
                return circle
    return None


def test_the_package_has_no_import_circle() -> None:
    circle = find_circle(import_graph())
    assert circle is None, "import circle: " + " -> ".join(circle or [])


def test_a_circle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_circle(graph) == ["a", "b", "c", "a"]
    assert find_circle({"a": {"b"}, "b": set()}) is None


def test_imports_inside_functions_count_and_type_checking_ones_do_not(tmp_path: Path) -> None:
    source = tmp_path / "mod.py"
    source.write_text("from typing import TYPE_CHECKING\n"
                      "from . import sibling\n"
                      "if TYPE_CHECKING:\n"
                      "    from iotune.hidden import Hint\n"
                      "def late():\n"
                      "    from iotune.lazy import thing\n")
    names = _imported_names("iotune.pkg.mod", source)
    assert {"iotune.pkg.sibling", "iotune.lazy.thing"} <= names
    assert not any(name.startswith("iotune.hidden") for name in names)


def test_every_layer_is_listed_once() -> None:
    present = {layer_of(module) for module in _modules()} - {None}
    assert len(set(LAYERS)) == len(LAYERS), "a layer is listed twice"
    assert not present - set(LAYERS), f"not in LAYERS: {sorted(present - set(LAYERS))}"
    assert not set(LAYERS) - present, f"no such package: {sorted(set(LAYERS) - present)}"


def test_no_module_imports_from_a_layer_above_its_own() -> None:
    upward = upward_imports(import_graph(), LAYERS)
    assert not upward, "imports from a layer above:\n" + "\n".join(upward)


def test_an_upward_import_is_named() -> None:
    graph = {"iotune.low.a": {"iotune.high.b", "iotune.low.c"}, "iotune.low.c": set(),
             "iotune.high.b": {"iotune.low.a"}, "iotune": {"iotune.high"}}
    assert upward_imports(graph, ("high", "low")) == [
        "iotune.low.a imports iotune.high.b: high is above low"]
    assert upward_imports(graph, ("low", "high")) == [
        "iotune.high.b imports iotune.low.a: low is above high"]


def test_the_readme_lists_the_layers_in_order() -> None:
    readme = (PACKAGE.parent / "README.md").read_text(encoding="utf-8")
    layout = readme.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([\w.]+?)(?:/|\.py)?` \|", layout, flags=re.M)
    assert tuple(rows) == LAYERS
