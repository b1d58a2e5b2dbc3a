"""Diagnostics as a SARIF 2.1.0 log (`cutile-compile --message-format sarif`), the format CI
code scanning ingests.

One run of the tool `cutile-compile`: a rule per diagnostic code that occurs (its id, its
kebab-case name and summary from `parser.codes`), a result per diagnostic with its level, its
message (notes and help appended as rustc prints them), the primary span as the location and
the other labels as related locations. Columns count characters (`columnKind`
`unicodeCodePoints`), 1-based, as in the rustc-style text; a relative file name stays
relative (to the folder the tool ran in, which code scanning takes as the checkout), an
absolute one becomes a `file://` URI; both are percent-encoded. A diagnostic without a span
has no location.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from urllib.parse import quote

from parser.front_end import Diagnostic, Label, Severity, Span

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning"}  # else "note"


def sarif_log(diagnostics: Sequence[Diagnostic], tool: str, version: str) -> dict[str, object]:
    """The SARIF log of `diagnostics` as reported by `tool` at `version`."""
    rules: dict[str, int] = {}
    descriptors: list[dict[str, object]] = []
    results = []
    for diagnostic in diagnostics:
        code = diagnostic.code
        if code.id not in rules:
            rules[code.id] = len(descriptors)
            descriptors.append(
                {"id": code.id, "name": code.name, "shortDescription": {"text": code.summary}}
            )
        results.append(_result(diagnostic, rules[code.id]))
    driver = {"name": tool, "version": version, "rules": descriptors}
    run = {"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _result(diagnostic: Diagnostic, rule_index: int) -> dict[str, object]:
    extra = [f"note: {n}" for n in diagnostic.notes] + [f"help: {h}" for h in diagnostic.help]
    result: dict[str, object] = {
        "ruleId": diagnostic.code.id,
        "ruleIndex": rule_index,
        "level": LEVEL.get(diagnostic.severity, "note"),
        "message": {"text": "\n".join([diagnostic.message, *extra])},
    }
    primary = [label for label in diagnostic.labels if label.primary]
    if primary:
        result["locations"] = [_location(primary[0])]
    related = [label for label in diagnostic.labels if not label.primary]
    if related:
        result["relatedLocations"] = [
            {"id": i, **_location(label)} for i, label in enumerate(related)
        ]
    return result


def _location(label: Label) -> dict[str, object]:
    location: dict[str, object] = {
        "physicalLocation": {
            "artifactLocation": {"uri": artifact_uri(label.span.file_name)},
            "region": _region(label.span),
        }
    }
    if label.message:
        location["message"] = {"text": label.message}
    return location


def _region(span: Span) -> dict[str, object]:
    start_line, start_column = span.start_line_col
    end_line, end_column = span.end_line_col
    return {
        "startLine": start_line,
        "startColumn": start_column,
        "endLine": end_line,
        "endColumn": max(end_column, start_column + 1) if end_line == start_line else end_column,
        "snippet": {"text": span.text},
    }


def artifact_uri(file_name: str) -> str:
    """A relative path as a relative URI reference, an absolute one as a `file://` URI;
    both percent-encoded (`k#1.rs` is `k%231.rs`, not `k` and a fragment; a `:` is escaped
    too, so `c:k.rs` is no scheme)."""
    path = Path(file_name)
    if path.is_absolute():
        return path.as_uri()
    if not path.parts:
        return file_name
    return quote(os.fsencode(PurePosixPath(*path.parts)), safe="/")
