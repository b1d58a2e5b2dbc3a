"""Diagnostics as data: a stable code, a message, labelled spans, notes and help.

Every stage reports problems by appending `Diagnostic`s to a `DiagnosticSink`; nothing
raises on user error. Rendering lives in `parser.render`.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

from parser.codes import DiagnosticCode
from parser.spans import Span


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"
    HELP = "help"


@dataclass(frozen=True)
class Label:
    span: Span
    message: str = ""
    primary: bool = False


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    code: DiagnosticCode
    message: str
    labels: tuple[Label, ...] = ()
    notes: tuple[str, ...] = ()
    help: tuple[str, ...] = ()

    @property
    def primary_span(self) -> Span | None:
        for label in self.labels:
            if label.primary:
                return label.span
        return self.labels[0].span if self.labels else None

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR


def error(
    code: DiagnosticCode,
    message: str,
    span: Span | None,
    label: str = "",
    *,
    secondary: tuple[tuple[Span, str], ...] = (),
    notes: tuple[str, ...] = (),
    help: tuple[str, ...] = (),
) -> Diagnostic:
    """Shorthand for an error with one primary span and optional secondary spans."""
    labels = () if span is None else (Label(span, label, primary=True),)
    labels += tuple(Label(s, text) for s, text in secondary)
    return Diagnostic(Severity.ERROR, code, message, labels, notes, help)


def warning(code: DiagnosticCode, message: str, span: Span, label: str = "") -> Diagnostic:
    return Diagnostic(Severity.WARNING, code, message, (Label(span, label, primary=True),))


@dataclass
class DiagnosticSink:
    """Collects the diagnostics of one compile, in the order they were found."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.items.append(diagnostic)

    def extend(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> None:
        self.items.extend(diagnostics)

    @property
    def has_errors(self) -> bool:
        return any(d.is_error for d in self.items)

    def __iter__(self) -> Iterator[Diagnostic]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)
