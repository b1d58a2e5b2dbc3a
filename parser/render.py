"""Render diagnostics as rustc-style text or as JSON-ready dicts.

What one diagnostic renders is capped, so a hostile source cannot make its diagnostics
larger than itself (a 0.8 MB source once rendered 1.6 MB):
- a source line longer than MAX_LINE_CHARS characters is shown as a window of that many
  characters around its labels, with `...` where it was cut;
- at most MAX_LABELS labels (the primary first), MAX_NOTES notes and MAX_NOTES helps, and
  MAX_CALL_SITES "inlined from" notes; a last note says how many were left out;
- the message, each label's text and each note keep at most MAX_TEXT_CHARS characters.
`render_all` shows at most MAX_DIAGNOSTICS diagnostics and counts the rest. The JSON form
lists the same labels, notes and helps as the text.
"""

from __future__ import annotations

from dataclasses import replace

from parser.diagnostics import Diagnostic, Label
from parser.spans import Span

MAX_LINE_CHARS = 160
MAX_LABELS = 8
MAX_NOTES = 8
MAX_CALL_SITES = 8
MAX_TEXT_CHARS = 1000
MAX_DIAGNOSTICS = 100
_ELLIPSIS = "..."


def render(diagnostic: Diagnostic) -> str:
    """rustc-style text: header, `--> file:line:col`, source lines with carets, notes."""
    diagnostic, left_out = _capped(diagnostic)
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
    lines.extend(f"{pad} = note: {text}" for text in left_out)
    return "\n".join(lines)


def _capped(diagnostic: Diagnostic) -> tuple[Diagnostic, list[str]]:
    """`diagnostic` cut to the caps, and notes that say what was left out."""
    primary = [label for label in diagnostic.labels if label.primary][:1]
    labels = primary + [label for label in diagnostic.labels if label not in primary]
    kept = tuple(replace(lb, message=_clip(lb.message)) for lb in labels[:MAX_LABELS])
    capped = replace(
        diagnostic,
        message=_clip(diagnostic.message),
        labels=kept,
        notes=tuple(_clip(n) for n in diagnostic.notes[:MAX_NOTES]),
        help=tuple(_clip(h) for h in diagnostic.help[:MAX_NOTES]),
    )
    counts = (
        (len(labels) - len(kept), "label"),
        (len(diagnostic.notes) - len(capped.notes), "note"),
        (len(diagnostic.help) - len(capped.help), "help"),
    )
    left_out = [f"{n} more {what}{'s' * (n > 1)} not shown" for n, what in counts if n > 0]
    return capped, left_out


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT_CHARS else text[: MAX_TEXT_CHARS - 3] + _ELLIPSIS


def render_all(diagnostics: tuple[Diagnostic, ...] | list[Diagnostic]) -> str:
    """All diagnostics (up to MAX_DIAGNOSTICS), blank-line separated, with rustc's closing
    summary line."""
    parts = [render(d) for d in diagnostics[:MAX_DIAGNOSTICS]]
    if len(diagnostics) > MAX_DIAGNOSTICS:
        parts.append(f"note: {len(diagnostics) - MAX_DIAGNOSTICS} more diagnostics not shown")
    errors = sum(1 for d in diagnostics if d.is_error)
    if errors:
        noun = "1 previous error" if errors == 1 else f"{errors} previous errors"
        parts.append(f"error: aborting due to {noun}")
    return "\n\n".join(parts)


def _last_line(labels: tuple[Label, ...]) -> int:
    return max(label.span.end_line_col[0] for label in labels)


def _excerpts(labels: tuple[Label, ...], gutter: int) -> list[str]:
    """Each labelled source line once, with one underline row per label on it; the
    primary label's file first, each other file after a `::: file:line:col` header."""
    primary_file = next((lb.span.file_name for lb in labels if lb.primary), None)
    by_line: dict[tuple[str, int], list[Label]] = {}
    ordered = sorted(
        labels, key=lambda lb: (lb.span.file_name != primary_file, lb.span.start, not lb.primary)
    )
    for label in ordered:
        by_line.setdefault((label.span.file_name, label.span.start_line_col[0]), []).append(label)
    lines: list[str] = []
    current = primary_file
    for (file_name, line), on_line in by_line.items():
        if file_name != current:
            lines.append(f"{' ' * gutter}::: {on_line[0].span.location()}")
            current = file_name
        text = on_line[0].span.file.line_text(line)
        columns = [_columns(label, text) for label in on_line]
        shown, first = _window(text, columns)
        lines.append(f"{line:>{gutter}} | {shown}")
        lines.extend(
            f"{' ' * gutter} | {_underline(label, cols, first, len(shown))}"
            for label, cols in zip(on_line, columns, strict=True)
        )
    return lines


def _columns(label: Label, text: str) -> tuple[int, int]:
    """0-based [start, end) character columns of a label on its first line."""
    line, col = label.span.start_line_col
    end_line, end_col = label.span.end_line_col
    if end_line != line:
        end_col = len(text) + 1
    return col - 1, max(col, end_col - 1)


def _window(text: str, columns: list[tuple[int, int]]) -> tuple[str, int]:
    """The part of a line to show and the column where it starts: the whole line when it
    is short, else MAX_LINE_CHARS characters around the labels' starts, with `...`."""
    if len(text) <= MAX_LINE_CHARS:
        return text, 0
    starts = [start for start, _ in columns]
    first = max(0, min(min(starts) - 20, max(starts) - MAX_LINE_CHARS + 40))
    first = min(first, len(text) - MAX_LINE_CHARS)
    shown = text[first : first + MAX_LINE_CHARS]
    prefix = _ELLIPSIS if first > 0 else ""
    suffix = _ELLIPSIS if first + MAX_LINE_CHARS < len(text) else ""
    return prefix + shown + suffix, first - len(prefix)


def _underline(label: Label, columns: tuple[int, int], first: int, width: int) -> str:
    """Carets under the label's columns, shifted to the shown window and cut to it."""
    start, end = columns
    start = min(max(start - first, 0), width)
    end = min(max(end - first, start + 1), max(width, start + 1))
    mark = "^" if label.primary else "-"
    underline = " " * start + mark * max(1, end - start)
    return f"{underline} {label.message}" if label.message else underline


def _call_sites(span: Span, pad: str) -> list[str]:
    lines = []
    site = span.call_site
    while site is not None and len(lines) < MAX_CALL_SITES:
        lines.append(f"{pad} = note: inlined from the call at {site.location()}")
        site = site.call_site
    hidden = 0
    while site is not None:
        hidden, site = hidden + 1, site.call_site
    if hidden:
        lines.append(f"{pad} = note: and {hidden} more calls that inlined it")
    return lines


def to_json(diagnostic: Diagnostic) -> dict[str, object]:
    """The rustc-JSON-like shape the service and `--message-format=json` use."""
    rendered = render(diagnostic)
    diagnostic, _ = _capped(diagnostic)
    return {
        "severity": diagnostic.severity.value,
        "code": diagnostic.code.id,
        "code_name": diagnostic.code.name,
        "message": diagnostic.message,
        "spans": [_span_json(label) for label in diagnostic.labels],
        "notes": list(diagnostic.notes),
        "help": list(diagnostic.help),
        "rendered": rendered,
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
