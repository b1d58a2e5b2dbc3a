"""The diagnostic text registry (`parser.messages`): entries carry registered codes, and no
module outside it (and `parser.diagnostics`) builds a diagnostic inline."""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from parser import codes, messages
from parser.codes import ALL_CODES
from parser.diagnostics import Severity, warning
from parser.spans import SourceFile, Span

ROOT = Path(__file__).resolve().parents[2]
# every module of these trees takes its diagnostic texts from the registry
TREES = ("parser", "lowering", "service")
# the registry and the diagnostic types it builds on
BUILDERS = ("parser/diagnostics.py", "parser/messages.py")
# trees that build no `Diagnostic` by hand either (service/ turns statuses and exceptions from
# the server, the cache and the batch runner into diagnostics that carry their own text)
COMPILER_TREES = ("parser", "lowering")
SHORTHANDS = frozenset({"error", "warning"})


def _inline_diagnostics(text: str, compiler: bool) -> list[str]:
    """How a module's source builds diagnostics without the registry: `error`/`warning` of
    `parser.diagnostics`, imported or reached through the module, or (in `compiler` trees)
    a `Diagnostic(...)` built by hand."""
    tree = ast.parse(text)
    modules: set[str] = set()  # names `parser.diagnostics` is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            modules.update(
                a.asname for a in node.names if a.name == "parser.diagnostics" and a.asname
            )
        elif isinstance(node, ast.ImportFrom) and node.module == "parser":
            modules.update(a.asname or a.name for a in node.names if a.name == "diagnostics")
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "parser.diagnostics":
            found += [f"imports {a.name}" for a in node.names if a.name in SHORTHANDS]
        elif isinstance(node, ast.Attribute) and node.attr in SHORTHANDS:
            value = node.value
            dotted = ast.unparse(value)
            if dotted == "parser.diagnostics" or (
                isinstance(value, ast.Name) and value.id in modules
            ):
                found.append(f"uses {dotted}.{node.attr}")
        elif compiler and isinstance(node, ast.Call) and ast.unparse(node.func) == "Diagnostic":
            found.append("builds a Diagnostic by hand")
    return found


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


def test_no_module_builds_diagnostics_inline() -> None:
    inline: list[str] = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            if relative in BUILDERS:
                continue
            text = path.read_text(encoding="utf-8")
            for how in _inline_diagnostics(text, compiler=tree in COMPILER_TREES):
                inline.append(f"{relative}: {how}")
    assert not inline, f"diagnostics built inline (use parser.messages): {inline}"


def test_the_scan_sees_each_way_of_building_inline() -> None:
    assert _inline_diagnostics("from parser.diagnostics import Diagnostic, error", True) == [
        "imports error"
    ]
    assert _inline_diagnostics("from parser.diagnostics import warning as w", False) == [
        "imports warning"
    ]
    reached = "from parser import diagnostics as d\nimport parser.diagnostics\nd.error\n"
    assert _inline_diagnostics(reached + "parser.diagnostics.warning", False) == [
        "uses d.error",
        "uses parser.diagnostics.warning",
    ]
    by_hand = "Diagnostic(Severity.WARNING, code, 'text')"
    assert _inline_diagnostics(by_hand, True) == ["builds a Diagnostic by hand"]
    assert _inline_diagnostics(by_hand, False) == []
    assert _inline_diagnostics("log.warning('x')\nfrom parser import messages", True) == []


def test_no_entry_name_is_bound_twice() -> None:
    tree = ast.parse((ROOT / "parser" / "messages.py").read_text(encoding="utf-8"))
    names = [
        node.target.id
        for node in tree.body
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
    ]
    assert not {n for n in names if names.count(n) > 1}, "an entry is defined twice"
