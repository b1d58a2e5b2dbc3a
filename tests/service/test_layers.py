"""The service's layering: the parser only through its public surface, tree-sitter never,
and the console-script entry points free of server dependencies."""

from __future__ import annotations

import ast
from pathlib import Path

import service

PACKAGE = Path(service.__file__).parent


def _imports(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names += [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    return names


def test_the_parser_only_through_its_front_end() -> None:
    for path in PACKAGE.rglob("*.py"):
        for name in _imports(path):
            top = name.split(".")[0]
            assert top not in ("tree_sitter", "tree_sitter_rust"), f"{path} imports {name}"
            if top == "parser":
                assert name.startswith("parser.front_end"), f"{path} imports {name}"


def test_entry_points_import_only_the_standard_library() -> None:
    for name in _imports(PACKAGE / "cli" / "entry_points.py"):
        assert name.split(".")[0] not in ("service", "grpc", "parser", "lowering"), name
