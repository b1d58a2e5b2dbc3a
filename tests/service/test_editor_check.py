"""service.cli.editor_check: what cutile-lsp reports for one document."""

from __future__ import annotations

from pathlib import Path

from parser.render import render
from service.cli.editor_check import check_document

REPO_ROOT = Path(__file__).resolve().parents[2]
ADD = (REPO_ROOT / "rust_examples" / "add.rs").read_text()


def test_every_example_is_clean_with_sample_generics() -> None:
    """Sample values could break a kernel meant for others (a hint's range): only what
    every sample check reports is shown, so the examples show nothing."""
    for path in sorted((REPO_ROOT / "rust_examples").glob("*.rs")):
        result = check_document(path.name, path.read_text())
        assert [render(d) for d in result.diagnostics] == [], path.name


def test_a_rule_broken_for_every_value_is_reported_once_with_the_samples_named() -> None:
    bad = ADD.replace("z.store(tx + ty);", "x.store(tx + ty);", 1)
    (diagnostic,) = check_document("add.rs", bad).diagnostics
    assert diagnostic.code.id == "E0596"
    assert diagnostic.notes[-1].startswith("checked with the sample generic arguments B=16")


def test_configured_generics_are_used_and_named_in_hover() -> None:
    result = check_document("add.rs", ADD, {"add": "B=256"})
    found = result.type_at(ADD.encode().index(b"tx + ty"))
    assert found is not None
    assert (found.text, found.type, found.generics) == ("tx", "Tile<f32, {[256]}>", "B=256")
    whole = result.type_at(ADD.encode().index(b"+ ty"))
    assert whole is not None and whole.text == "tx + ty"


def test_configured_generics_report_their_own_errors() -> None:
    result = check_document("add.rs", ADD, {"add": "B=abc"})
    assert [d.code.id for d in result.diagnostics] == ["CT0102"]


def test_a_syntax_error_is_reported() -> None:
    result = check_document("k.rs", "#[cutile::module]\nmod kernel {\n    fn add( {\n}\n")
    assert result.diagnostics and result.diagnostics[0].severity.value == "error"


def test_no_cutile_module_no_check() -> None:
    assert check_document("main.rs", "fn main() { 1 + }").diagnostics == []


def test_generics_with_nested_scopes_are_an_unusable_spec_not_a_crash() -> None:
    """`a:a:...:B=128` recursed once per scope (RecursionError: cutile-lsp published
    nothing); a second scope is refused, so the entry is checked without generic arguments
    and the missing ones reported, as for any spec that does not parse."""
    result = check_document("add.rs", ADD, {"add": "a:" * 1000 + "B=128"})
    assert [d.code.id for d in result.diagnostics] == ["CT0102"]
