"""One compiled case of the compatibility runner, as the report reads it."""

from __future__ import annotations

from dataclasses import dataclass, field

from parser.diagnostics import Diagnostic
from tests.compat.table import Case


@dataclass(frozen=True)
class Result:
    case: Case
    compiled: bool
    diagnostics: tuple[Diagnostic, ...]
    cubin_bytes: int = 0
    # (cubin, serialized contract) of the general kernel, then of each variant built
    builds: tuple[tuple[bytes, bytes], ...] = field(default=(), compare=False, repr=False)

    @property
    def agrees(self) -> bool:
        """Whether the outcome is the one cutile-rs expects (an unused entry must compile)."""
        if self.case.verdict == "reject":
            return not self.compiled
        return self.compiled

    def first_error(self) -> str:
        error = next((d for d in self.diagnostics if d.is_error), None)
        return "" if error is None else one_line(error)


def one_line(diagnostic: Diagnostic) -> str:
    """`error[CT0004]: message (file:line:col)` on one line, table-safe."""
    span = diagnostic.primary_span
    where = "" if span is None else f" ({span.location()})"
    message = diagnostic.message.splitlines()[0] if diagnostic.message else ""
    text = f"`error[{diagnostic.code.id}]`: {message}{where}"
    return text.replace("|", "\\|")
