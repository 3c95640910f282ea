"""No import circles among the modules of src/sentforge, and no import up ARCHITECTURE.md's layer table.

The layers are checked by `lint-imports` (import-linter) against the contract in pyproject.toml.

The graph is read from the source with `ast`: every `import sentforge...` and `from sentforge... import`
statement (and relative import) counts, at module level and inside functions or classes, since a
function-level import only postpones a circle to the first call. Imports under `if TYPE_CHECKING:` do not
count: they never run. `from package import name` points at the submodule `package.name` where one exists,
otherwise at the package itself; importing `a.b.c` is not counted as importing the package `a.b`.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import networkx as nx

from conftest import REPO

PACKAGE_ROOT = REPO / "src"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE_ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_type_checking_block(node: ast.AST) -> bool:
    if not isinstance(node, ast.If):
        return False
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def runtime_imports(tree: ast.AST):
    """The Import/ImportFrom nodes of `tree`, anywhere but inside `if TYPE_CHECKING:` blocks."""
    children = ast.iter_child_nodes(tree)
    if is_type_checking_block(tree):
        children = iter(tree.orelse)
    for child in children:
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child
        yield from runtime_imports(child)


def imported_modules(node: ast.Import | ast.ImportFrom, importer: str, is_package: bool, modules: set[str]):
    if isinstance(node, ast.Import):
        yield from (alias.name for alias in node.names)
        return
    base = node.module or ""
    if node.level:
        anchor = importer.split(".")
        anchor = anchor if is_package else anchor[:-1]
        anchor = anchor[:len(anchor) - (node.level - 1)]
        base = ".".join(anchor + ([base] if base else []))
    for alias in node.names:
        submodule = f"{base}.{alias.name}"
        yield submodule if submodule in modules else base


def import_graph() -> nx.DiGraph:
    files = sorted((PACKAGE_ROOT / "sentforge").rglob("*.py"))
    modules = {module_name(path) for path in files}
    graph = nx.DiGraph()
    graph.add_nodes_from(modules)
    for path in files:
        importer = module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in runtime_imports(tree):
            for target in imported_modules(node, importer, path.name == "__init__.py", modules):
                if target in modules and target != importer:
                    graph.add_edge(importer, target, line=node.lineno)
    return graph


def import_circles(graph: nx.DiGraph) -> list[list[str]]:
    """One circle through each group of modules that import each other, as `a -> b -> ... -> a`."""
    circles = []
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            edges = nx.find_cycle(graph.subgraph(group))
            circles.append([importer for importer, _ in edges] + [edges[0][0]])
    return sorted(circles)


def test_the_graph_counts_module_and_function_imports_not_type_checking_ones():
    source = """
from typing import TYPE_CHECKING
import sentforge.io
from sentforge.recipes import registry, Recipe
if TYPE_CHECKING:
    from sentforge.encoder import Encoder
else:
    from . import seed
def build():
    from ..errors import ConfigError
"""
    modules = {"sentforge.io", "sentforge.recipes", "sentforge.recipes.registry", "sentforge.encoder",
               "sentforge.recipes.seed", "sentforge.errors"}
    found = {target for node in runtime_imports(ast.parse(source))
             for target in imported_modules(node, "sentforge.recipes.methods", False, modules)}
    assert found == {"typing", "sentforge.io", "sentforge.recipes.registry", "sentforge.recipes",
                     "sentforge.recipes.seed", "sentforge.errors"}
    assert import_graph().has_edge("sentforge.cli.eval", "sentforge.evaluation.runner")  # inside a function


def test_no_import_circles():
    graph = import_graph()
    circles = import_circles(graph)

    def described(circle: list[str]) -> str:
        steps = (f"{a} (line {graph.edges[a, b]['line']})" for a, b in zip(circle, circle[1:]))
        return " -> ".join(steps) + f" -> {circle[-1]}"

    assert not circles, "import circles:\n" + "\n".join(described(circle) for circle in circles)


def test_imports_follow_the_layers_of_the_architecture():
    """`lint-imports` exits 0 only when every layers contract of pyproject.toml is kept; its report names
    each import that points up the table."""
    lint_imports = Path(sys.executable).with_name("lint-imports")
    result = subprocess.run([str(lint_imports), "--no-cache"], cwd=REPO, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 2 kept, 0 broken." in result.stdout
