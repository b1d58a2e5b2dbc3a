"""Render diagnostics as rustc-style text or as JSON-ready dicts."""

from __future__ import annotations

from parser.diagnostics import Diagnostic, Label
from parser.spans import Span


def render(diagnostic: Diagnostic) -> str:
    """rustc-style text: header, `--> file:line:col`, source lines with carets, notes."""
    lines = [f"{diagnostic.severity.value}[{diagnostic.code.id}]: {diagnostic.message}"]
    primary = diagnostic.primary_span
    if primary is not None:
        gutter = len(str(_last_line(diagnostic.labels)))
        pad = " " * gutter
        lines.append(f"{pad}--> {primary.location()}")
        lines.append(f"{pad} |")
        lines.extend(_excerpts(diagnostic.labels, gutter))
        lines.append(f"{pad} |")
        lines.extend(_call_sites(primary, pad))
    else:
        pad = " "
    lines.extend(f"{pad} = note: {note}" for note in diagnostic.notes)
    lines.extend(f"{pad} = help: {text}" for text in diagnostic.help)
    return "\n".join(lines)


def render_all(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic]) -> str:
    """All diagnostics, blank-line separated, with rustc's closing summary line."""
    parts = [render(d) for d in diagnostics]
    errors = sum(1 for d in diagnostics if d.is_error)
    if errors:
        noun = "1 previous error" if errors == 1 else f"{errors} previous errors"
        parts.append(f"error: aborting due to {noun}")
    return "\n\n".join(parts)


def _last_line(labels: tuple[Label, ...]) -> int:
    return max(label.span.end_line_col[0] for label in labels)


def _excerpts(labels: tuple[Label, ...], gutter: int) -> list[str]:
    """Each labelled source line once, with one underline row per label on it."""
    by_line: dict[tuple[str, int], list[Label]] = {}
    for label in sorted(labels, key=lambda lb: (lb.span.start, not lb.primary)):
        by_line.setdefault((label.span.file_name, label.span.start_line_col[0]), []).append(label)
    lines: list[str] = []
    for (_, line), on_line in by_line.items():
        text = on_line[0].span.file.line_text(line)
        lines.append(f"{line:>{gutter}} | {text}")
        lines.extend(f"{' ' * gutter} | {_underline(label, text)}" for label in on_line)
    return lines


def _underline(label: Label, text: str) -> str:
    line, col = label.span.start_line_col
    end_line, end_col = label.span.end_line_col
    if end_line != line:
        end_col = len(text) + 1
    mark = "^" if label.primary else "-"
    underline = " " * (col - 1) + mark * max(1, end_col - col)
    return f"{underline} {label.message}" if label.message else underline


def _call_sites(span: Span, pad: str) -> list[str]:
    lines = []
    site = span.call_site
    while site is not None:
        lines.append(f"{pad} = note: inlined from the call at {site.location()}")
        site = site.call_site
    return lines


def to_json(diagnostic: Diagnostic) -> dict[str, object]:
    """The rustc-JSON-like shape the service and `--message-format=json` use."""
    return {
        "severity": diagnostic.severity.value,
        "code": diagnostic.code.id,
        "code_name": diagnostic.code.name,
        "message": diagnostic.message,
        "spans": [_span_json(label) for label in diagnostic.labels],
        "notes": list(diagnostic.notes),
        "help": list(diagnostic.help),
        "rendered": render(diagnostic),
    }


def _span_json(label: Label) -> dict[str, object]:
    line_start, col_start = label.span.start_line_col
    line_end, col_end = label.span.end_line_col
    return {
        "source_name": label.span.file_name,
        "byte_start": label.span.start,
        "byte_end": label.span.end,
        "line_start": line_start,
        "col_start": col_start,
        "line_end": line_end,
        "col_end": col_end,
        "label": label.message,
        "primary": label.primary,
    }
