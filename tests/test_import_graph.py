"""The first-party import graph has no cycles between modules.

The graph is built statically (ast) from every `import` and `from ... import` in the
first-party packages, wherever it stands: at module level, inside a function (a lazy import
hides a cycle from Python, not from the design) or under `TYPE_CHECKING`. `from pkg import
name` is an edge to `pkg.name` when that is a module, otherwise to `pkg` itself.

There are none; the test fails on any new one and prints it.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("parser", "lowering", "service", "client_stubs", "protos", "rust_examples", "tests")
SKIPPED_PARTS = frozenset({"generated", "__pycache__"})


def module_files() -> dict[str, Path]:
    """Every first-party module by dotted name (a package by its own name)."""
    modules: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT)
            if SKIPPED_PARTS.intersection(relative.parts):
                continue
            parts = list(relative.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def imported_modules(
    tree: ast.Module, module: str, is_package: bool, known: Mapping[str, Path]
) -> Iterator[str]:
    """The first-party modules one module imports, relative imports resolved."""
    package = module if is_package else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                member = f"{base}.{alias.name}"
                if member in known:
                    yield member
                elif base in known:
                    yield base


def import_graph() -> dict[str, set[str]]:
    """Module -> the first-party modules it imports."""
    files = module_files()
    graph: dict[str, set[str]] = {}
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = set(imported_modules(tree, module, path.name == "__init__.py", files))
        targets.discard(module)
        graph[module] = targets
    return graph


def reachable(graph: Mapping[str, set[str]], start: str) -> set[str]:
    """The modules `start` imports, directly or not."""
    seen: set[str] = set()
    frontier = [start]
    while frontier:
        node = frontier.pop()
        for successor in graph[node] - seen:
            seen.add(successor)
            frontier.append(successor)
    return seen


def strongly_connected(graph: Mapping[str, set[str]]) -> list[frozenset[str]]:
    """The components of more than one module that import one another (the cycles)."""
    reach = {module: reachable(graph, module) for module in graph}
    components: set[frozenset[str]] = set()
    for module in graph:
        if module in reach[module]:
            component = {other for other in reach[module] if module in reach[other]}
            if len(component) > 1:
                components.add(frozenset(component))
    return sorted(components, key=min)


def one_cycle(graph: Mapping[str, set[str]], component: frozenset[str]) -> list[str]:
    """A shortest import cycle through the component's first module, for the message."""
    start = min(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for successor in sorted(graph[node] & component):
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if successor not in previous:
                    previous[successor] = node
                    following.append(successor)
        frontier = following
    return [start]


def describe(graph: Mapping[str, set[str]], component: frozenset[str]) -> str:
    cycle = " -> ".join(one_cycle(graph, component))
    return f"{len(component)} modules {sorted(component)}\n    e.g. {cycle}"


def test_graph_sees_the_packages() -> None:
    graph = import_graph()
    assert "lowering.pipeline" in graph
    assert "parser.typed_kernel" in graph["lowering.pipeline"] or any(
        name.startswith("parser.") for name in graph["lowering.pipeline"]
    )


def test_no_import_cycles() -> None:
    graph = import_graph()
    cycles = strongly_connected(graph)
    assert not cycles, "import cycles:\n  " + "\n  ".join(describe(graph, c) for c in cycles)
