"""Diagnostics as Language Server Protocol objects (`cutile-lsp` publishes them).

`to_lsp` gives the JSON shape of an LSP `Diagnostic`: the primary span as a `range` (0-based
lines, characters in UTF-16 code units, LSP's default position encoding), the severity as
LSP's number, the code (`E0596`, `CT0102`) with the same id `render` prints, the message, and
the other labels as `relatedInformation`. Notes and help follow the message as rustc prints
them (`note: ...`, `help: ...`). A diagnostic without a span (an unknown entry, say) is
placed at the start of the file.
"""

from __future__ import annotations

from collections.abc import Callable

from parser.diagnostics import Diagnostic, Severity
from parser.spans import Span

LSP_SEVERITY = {Severity.ERROR: 1, Severity.WARNING: 2, Severity.NOTE: 3, Severity.HELP: 4}
SOURCE = "cutile"
START = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}


def utf16_column(line_text: str, column: int) -> int:
    """The UTF-16 offset of 1-based character `column` in `line_text`."""
    return len(line_text[: max(0, column - 1)].encode("utf-16-le")) // 2


def lsp_position(span: Span, offset: int) -> dict[str, int]:
    line, column = span.file.line_col(offset)
    return {"line": line - 1, "character": utf16_column(span.file.line_text(line), column)}


def lsp_range(span: Span) -> dict[str, dict[str, int]]:
    return {"start": lsp_position(span, span.start), "end": lsp_position(span, span.end)}


def to_lsp(diagnostic: Diagnostic, uri_of: Callable[[str], str]) -> dict[str, object]:
    """The LSP `Diagnostic` of `diagnostic`; `uri_of(file name)` names the documents of
    secondary labels."""
    primary = diagnostic.primary_span
    extra = [f"note: {n}" for n in diagnostic.notes] + [f"help: {h}" for h in diagnostic.help]
    message = "\n".join([diagnostic.message, *extra])
    related = [
        {
            "location": {"uri": uri_of(label.span.file_name), "range": lsp_range(label.span)},
            "message": label.message or diagnostic.message,
        }
        for label in diagnostic.labels
        if not label.primary
    ]
    result: dict[str, object] = {
        "range": lsp_range(primary) if primary is not None else START,
        "severity": LSP_SEVERITY[diagnostic.severity],
        "code": diagnostic.code.id,
        "source": SOURCE,
        "message": message,
    }
    if related:
        result["relatedInformation"] = related
    return result
