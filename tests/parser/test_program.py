"""Linking kernel modules and finding the requested entry."""

from __future__ import annotations

import pytest

from parser import ast_nodes as A
from parser import codes
from parser.cst_to_ast import parse_file
from parser.diagnostics import DiagnosticSink
from parser.program import Program, find_entry, link
from tests.parser.support import line_of, source, where

TWO_MODULES = """#[cutile::module]
mod a {
    #[cutile::entry()]
    fn k() {}
    #[cutile::entry()]
    fn only_a() {}
    fn helper() {}
}

#[cutile::module]
mod b {
    #[cutile::entry()]
    fn k() {}
    mod inner {
        #[cutile::entry()]
        fn deep() {}
    }
}
"""


def program_of(*texts: str) -> Program:
    sink = DiagnosticSink()
    files = tuple(parse_file(source(t, f"f{i}.rs"), sink) for i, t in enumerate(texts))
    assert not sink.has_errors
    return link(files, sink)


def lookup(requested: str, *texts: str) -> tuple[A.Function | None, DiagnosticSink]:
    sink = DiagnosticSink()
    entry = find_entry(program_of(*texts or (TWO_MODULES,)), requested, sink)
    return entry, sink


def test_link_collects_modules_of_every_file_in_order() -> None:
    program = program_of(TWO_MODULES, "#[cutile::module]\nmod c { #[cutile::entry()] fn e() {} }")
    assert [m.path for m in program.modules] == [("a",), ("b",), ("b", "inner"), ("c",)]
    assert [f.qualified_name for f in program.entries] == [
        "a::k",
        "a::only_a",
        "b::k",
        "b::inner::deep",
        "c::e",
    ]
    assert [f.qualified_name for f in program.functions_named("k")] == ["a::k", "b::k"]
    assert [f.name for f in program.functions_named("helper")] == ["helper"]


def test_no_kernel_module_is_an_error_without_a_span() -> None:
    sink = DiagnosticSink()
    parsed = parse_file(source("fn main() {}\nmod plain { fn f() {} }\n", "host.rs"), sink)
    program = link((parsed,), sink)
    assert program.modules == ()
    (diagnostic,) = sink
    assert diagnostic.code is codes.NO_KERNEL_MODULE
    assert "`host.rs`" in diagnostic.message
    assert diagnostic.primary_span is None
    assert any("#[cutile::module]" in h for h in diagnostic.help)


def test_no_kernel_module_is_not_reported_after_syntax_errors() -> None:
    sink = DiagnosticSink()
    parsed = parse_file(source("#[cutile::module]\nmod k { fn f( }\n"), sink)
    before = len(sink)
    link((parsed,), sink)
    assert len(sink) == before
    assert all(d.code is codes.SYNTAX_ERROR for d in sink)


@pytest.mark.parametrize(
    ("requested", "qualified"),
    [
        ("only_a", "a::only_a"),
        ("a::k", "a::k"),
        ("b::k", "b::k"),
        ("deep", "b::inner::deep"),
        ("inner::deep", "b::inner::deep"),
        ("b::inner::deep", "b::inner::deep"),
    ],
)
def test_find_entry_by_name_and_module_path(requested: str, qualified: str) -> None:
    entry, sink = lookup(requested)
    assert list(sink) == []
    assert entry is not None and entry.qualified_name == qualified


def test_an_entry_wins_over_a_device_function_of_the_same_name() -> None:
    text = (
        "#[cutile::module]\nmod a {\n    fn k() {}\n}\n"
        "#[cutile::module]\nmod b {\n    #[cutile::entry()]\n    fn k() {}\n}\n"
    )
    entry, sink = lookup("k", text)
    assert list(sink) == []
    assert entry is not None and entry.qualified_name == "b::k"


def test_ambiguous_entry_names_both_candidates() -> None:
    entry, sink = lookup("k")
    assert entry is None
    (diagnostic,) = sink
    assert diagnostic.code is codes.AMBIGUOUS_ENTRY
    assert "ambiguous" in diagnostic.message
    assert "`a::k`" in diagnostic.message and "`b::k`" in diagnostic.message
    primary = [lb for lb in diagnostic.labels if lb.primary]
    secondary = [lb for lb in diagnostic.labels if not lb.primary]
    assert [lb.span.start_line_col[0] for lb in primary] == [line_of(TWO_MODULES, "fn k", 2)]
    assert [lb.span.start_line_col[0] for lb in secondary] == [line_of(TWO_MODULES, "fn k", 1)]
    assert all(lb.span.text == "k" for lb in diagnostic.labels)
    assert any("module::name" in h for h in diagnostic.help)


@pytest.mark.parametrize("requested", ["nope", "a::deep", "c::k", "inner::k", "::k", "k::"])
def test_unknown_entry_lists_the_available_entries(requested: str) -> None:
    entry, sink = lookup(requested)
    assert entry is None
    (diagnostic,) = sink
    assert diagnostic.code is codes.UNKNOWN_ENTRY
    assert diagnostic.message == f"no entry function named `{requested}`"
    listing = [n for n in diagnostic.notes if n.startswith("entries in this request:")]
    assert listing == [
        "entries in this request: `a::k`, `a::only_a`, `b::k`, `b::inner::deep`",
    ]


def test_unknown_entry_with_no_entries_at_all() -> None:
    text = "#[cutile::module]\nmod m {\n    fn helper() {}\n}\n"
    _, sink = lookup("main", text)
    (diagnostic,) = sink
    assert diagnostic.notes == ("entries in this request: none",)
    assert diagnostic.primary_span is None


def test_device_function_requested_as_entry_gets_a_note_and_help() -> None:
    entry, sink = lookup("helper")
    assert entry is None
    (diagnostic,) = sink
    assert diagnostic.code is codes.UNKNOWN_ENTRY
    assert where(diagnostic) == (line_of(TWO_MODULES, "fn helper"), 8)
    assert diagnostic.primary_span.text == "helper"  # type: ignore[union-attr]
    assert diagnostic.notes[0] == "`a::helper` is a device function, not an entry"
    assert diagnostic.help == ("mark the function with `#[cutile::entry()]`",)


def test_unknown_module_path_does_not_call_an_entry_a_device_function() -> None:
    _, sink = lookup("c::k")
    (diagnostic,) = sink
    assert not any("device function" in n for n in diagnostic.notes)


def test_entry_in_a_second_file_is_found() -> None:
    entry, sink = lookup(
        "e",
        "#[cutile::module]\nmod a { fn h() {} }",
        "#[cutile::module]\nmod z {\n    #[cutile::entry()]\n    fn e() {}\n}\n",
    )
    assert list(sink) == []
    assert entry is not None and entry.span.file_name == "f1.rs"


@pytest.mark.parametrize(
    ("requested", "suggestion"),
    [("only_b", "only_a"), ("onlya", "only_a"), ("a::onyl_a", "a::only_a"), ("dep", "deep")],
)
def test_a_misspelled_entry_gets_the_closest_name(requested: str, suggestion: str) -> None:
    _, sink = lookup(requested)
    (diagnostic,) = sink
    assert diagnostic.help == (f"a similar name exists: `{suggestion}`",)


def test_a_name_like_no_entry_gets_no_suggestion() -> None:
    _, sink = lookup("softmax")
    (diagnostic,) = sink
    assert diagnostic.help == ()
