"""The project's import graph, read from the source (every ``import`` statement, also lazy ones inside
functions and ``TYPE_CHECKING`` blocks): cycles between modules, and who imports ``ray``.

Run it: ``python -m tests.support.import_graph`` prints the cycles and the modules importing ray (exit 1 on
a cycle or a ray import outside the allowed places).
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import networkx as nx

__all__ = ["PACKAGES", "RAY_ALLOWED", "cycles", "import_edges", "import_graph", "modules_importing", "main"]

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("agents", "planning", "dag", "prompts", "benchmarks")
RAY_ALLOWED = ("agents.cluster", "agents.llm.local.actor")
"""Ray lives in agents/cluster/ and the local model server's
actor."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _source_files() -> Iterator[Path]:
    for package in PACKAGES:
        yield from (p for p in (ROOT / package).rglob("*.py") if "__pycache__" not in p.parts)


def _imports(path: Path, module: str) -> Iterator[str]:
    yield from (target for target, _ in _imports_placed(path, module))


def _top_level_nodes(tree: ast.Module) -> set[int]:
    """The import statements that run when the module is imported: in its body, or under a module-level
    ``if``/``try`` (not inside a function or class body)."""
    found: set[int] = set()
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.add(id(node))
        elif isinstance(node, (ast.If, ast.Try)):
            pending.extend(node.body + node.orelse + getattr(node, "finalbody", []))
            pending.extend(h for handler in getattr(node, "handlers", []) for h in handler.body)
    return found


def _imports_placed(path: Path, module: str) -> Iterator[tuple[str, bool]]:
    """(imported name, lazy): lazy is True for an import inside a function (it runs only when called)."""
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top = _top_level_nodes(tree)
    for node in ast.walk(tree):
        lazy = id(node) not in top
        if isinstance(node, ast.Import):
            yield from ((alias.name, lazy) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")[: len(module.split(".")) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            yield target, lazy
            # ``from pkg import sub`` imports the submodule pkg.sub when there is one.
            yield from ((f"{target}.{alias.name}", lazy) for alias in node.names)


def import_edges() -> Iterator[tuple[str, str, bool]]:
    """(module, imported project module or third-party top-level name, lazy) for every import statement."""
    files = {_module_name(p): p for p in _source_files()}
    for module, path in files.items():
        for target, lazy in _imports_placed(path, module):
            if target.split(".")[0] not in PACKAGES:
                yield module, target.split(".")[0], lazy
                continue
            while target and target not in files:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                yield module, target, lazy


def import_graph() -> nx.DiGraph:
    """Project module → project module it imports (names resolved to the modules that exist)."""
    files = {_module_name(p): p for p in _source_files()}
    graph = nx.DiGraph()
    graph.add_nodes_from(files)
    for module, path in files.items():
        for target in _imports(path, module):
            while target and target not in files:
                target = target.rpartition(".")[0]
            if target and target != module and not module.startswith(target + "."):
                graph.add_edge(module, target)
    return graph


def cycles(graph: nx.DiGraph | None = None) -> list[list[str]]:
    graph = import_graph() if graph is None else graph
    return [sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1]


def modules_importing(name: str) -> list[str]:
    found = []
    for path in _source_files():
        module = _module_name(path)
        if any(t == name or t.startswith(name + ".") for t in _imports(path, module)):
            found.append(module)
    return sorted(found)


def _allowed_ray(module: str) -> bool:
    return any(module == a or module.startswith(a + ".") for a in RAY_ALLOWED) or module.startswith("benchmarks.")


def main() -> int:
    found_cycles = cycles()
    ray_users = modules_importing("ray")
    strays = [m for m in ray_users if not _allowed_ray(m)]
    print(f"import cycles: {len(found_cycles)}")
    for c in found_cycles:
        print("  " + " <-> ".join(c))
    print("modules importing ray: " + ", ".join(ray_users))
    if strays:
        print("NOT ALLOWED to import ray: " + ", ".join(strays))
    return 1 if found_cycles or strays else 0


if __name__ == "__main__":
    sys.exit(main())
