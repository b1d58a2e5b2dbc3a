"""The diagnostic text registry (`parser.messages`): entries carry registered codes, and the
packages moved to it build no diagnostic text inline."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from parser import codes, messages
from parser.codes import ALL_CODES
from parser.diagnostics import Severity, warning
from parser.spans import SourceFile, Span

ROOT = Path(__file__).resolve().parents[2]
# packages and modules whose diagnostics all come from the registry
MIGRATED = (
    "lowering",
    "parser/check_messages.py",
    "parser/optimization_hints.py",
    "parser/checks/arch_elements.py",
    "parser/bracket_scan.py",
    "parser/inline_budget.py",
    "parser/statics.py",
    "parser/program.py",
    "parser/specialization.py",
    "parser/persistent_iterables.py",
    "parser/typecheck_memory.py",
    "parser/typecheck_control.py",
    "parser/generics.py",
    "parser/typecheck_ops.py",
    "parser/typecheck_items.py",
    "parser/typecheck_calls.py",
    "parser/type_eval.py",
    "parser/prelude",
    "parser/checks/ownership.py",
    "parser/entry_signature.py",
    "parser/typecheck.py",
    "parser/cst_to_ast.py",
    "parser/typecheck_debug_and_literals.py",
)


def _entries() -> dict[str, messages.Message]:
    return {n: v for n, v in vars(messages).items() if isinstance(v, messages.Message)}


def test_entries_use_registered_codes() -> None:
    assert _entries()
    for name, entry in _entries().items():
        assert ALL_CODES.get(entry.code.id) is entry.code, name


def test_an_entry_fills_its_templates() -> None:
    span = Span(SourceFile("k.rs", "fn f() {}"), 0, 2)
    diagnostic = messages.COORDINATE_OUTSIDE_GRID.at(span, constant=4, axis=1, grid="the grid")
    assert diagnostic.message == "coordinate 4 on axis 1 is not within the grid"
    assert diagnostic.code is codes.PARTITION_OUT_OF_BOUNDS
    assert [label.message for label in diagnostic.labels] == ["out of bounds"]


def test_a_warning_entry_builds_what_warning_builds() -> None:
    span = Span(SourceFile("k.rs", "unsafe { 1 }"), 0, 12)
    entry = messages.Message(
        codes.UNUSED_UNSAFE, "unnecessary `{what}` block", "{what}", severity=Severity.WARNING
    )
    built = warning(codes.UNUSED_UNSAFE, "unnecessary `unsafe` block", span, "unsafe")
    assert entry.at(span, what="unsafe") == built
    assert not built.is_error
    assert messages.COORDINATE_OUTSIDE_GRID.severity is Severity.ERROR
    noted = replace(entry, notes=("a {what} note",), help=("a help",))
    assert noted.at(span, what="unsafe") == replace(
        built, notes=("a unsafe note",), help=("a help",)
    )


def test_migrated_packages_build_no_diagnostics_inline() -> None:
    inline: list[str] = []
    for package in MIGRATED:
        where = ROOT / package
        for path in sorted(where.rglob("*.py")) if where.is_dir() else (where,):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == "parser.diagnostics":
                    names = {alias.name for alias in node.names}
                    if names & {"error", "warning"}:
                        inline.append(str(path.relative_to(ROOT)))
    assert not inline, f"diagnostics built inline (use parser.messages): {inline}"


def test_no_entry_name_is_bound_twice() -> None:
    tree = ast.parse((ROOT / "parser" / "messages.py").read_text(encoding="utf-8"))
    names = [
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    ]
    assert not {n for n in names if names.count(n) > 1}, "an entry is defined twice"
