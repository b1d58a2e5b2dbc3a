"""parser.render_lsp: diagnostics as LSP objects (0-based lines, UTF-16 characters)."""

from __future__ import annotations

from parser.codes import AMBIGUOUS_ENTRY, UNKNOWN_ENTRY
from parser.diagnostics import Diagnostic, Label, Severity, error
from parser.render_lsp import to_lsp, utf16_column
from parser.spans import SourceFile, Span


def test_utf16_columns_count_surrogate_pairs() -> None:
    assert utf16_column("abc", 3) == 2
    assert utf16_column("é = x", 3) == 2  # é is one unit
    assert utf16_column("🙂 = x", 3) == 3  # 🙂 is two units


def test_primary_span_severity_code_notes_and_related_labels() -> None:
    source = SourceFile("k.rs", "// 🙂\nfn k() {}\nfn k() {}\n")
    second = Span(
        source, source.text.encode().rindex(b"k("), source.text.encode().rindex(b"k(") + 1
    )
    first = Span(source, source.text.encode().index(b"k("), source.text.encode().index(b"k(") + 1)
    diagnostic = error(
        AMBIGUOUS_ENTRY,
        "entry name `k` is ambiguous",
        second,
        "also defined here",
        secondary=((first, "first defined here"),),
        notes=("a note",),
        help=("qualify it",),
    )
    lsp = to_lsp(diagnostic, lambda name: f"file:///src/{name}")
    assert lsp["range"] == {
        "start": {"line": 2, "character": 3},
        "end": {"line": 2, "character": 4},
    }
    assert (lsp["severity"], lsp["code"], lsp["source"]) == (1, AMBIGUOUS_ENTRY.id, "cutile")
    assert lsp["message"] == "entry name `k` is ambiguous\nnote: a note\nhelp: qualify it"
    (related,) = lsp["relatedInformation"]  # type: ignore[misc]
    assert related["location"]["uri"] == "file:///src/k.rs"
    assert related["location"]["range"]["start"] == {"line": 1, "character": 3}
    assert related["message"] == "first defined here"


def test_a_diagnostic_without_a_span_sits_at_the_start() -> None:
    lsp = to_lsp(Diagnostic(Severity.WARNING, UNKNOWN_ENTRY, "no entry"), str)
    assert lsp["range"]["start"] == {"line": 0, "character": 0}  # type: ignore[index]
    assert lsp["severity"] == 2 and "relatedInformation" not in lsp


def test_labels_keep_their_primary_flag() -> None:
    source = SourceFile("k.rs", "abc")
    label = Label(Span(source, 0, 1), "here", primary=True)
    diagnostic = Diagnostic(Severity.NOTE, UNKNOWN_ENTRY, "m", (label,))
    assert to_lsp(diagnostic, str)["severity"] == 3
