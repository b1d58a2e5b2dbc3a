"""Source files and spans.

A `SourceFile` owns the text of one `.rs` file and converts byte offsets to 1-based
line/column pairs (columns count characters, as rustc does). A `Span` is a byte range in
one file; every AST node, IR op and diagnostic carries one. Spans of inlined code keep
the call site in `call_site`.
"""

from __future__ import annotations

import bisect
import functools
import re
from array import array
from dataclasses import dataclass, field

_NEWLINE = re.compile(b"\n")


@dataclass(frozen=True, eq=False)
class SourceFile:
    """The text of one source file. Its line-start table is built on first use (only
    diagnostics need lines and columns), so a source that compiles cleanly, or is a cache
    hit, never pays for it; the table is an array of 4-byte offsets."""

    name: str
    text: str
    data: bytes = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "data", self.text.encode("utf-8"))

    @functools.cached_property
    def _line_starts(self) -> array[int]:
        starts = array("I", [0])
        starts.extend(match.end() for match in _NEWLINE.finditer(self.data))
        return starts

    def line_col(self, byte_offset: int) -> tuple[int, int]:
        """1-based line and 1-based character column of a byte offset."""
        offset = max(0, min(byte_offset, len(self.data)))
        line_index = bisect.bisect_right(self._line_starts, offset) - 1
        line_start = self._line_starts[line_index]
        column = len(self.data[line_start:offset].decode("utf-8", errors="replace")) + 1
        return line_index + 1, column

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        start = self._line_starts[line - 1]
        end = self._line_starts[line] - 1 if line < len(self._line_starts) else len(self.data)
        return self.data[start:end].decode("utf-8", errors="replace").rstrip("\r")

    @property
    def line_count(self) -> int:
        return len(self._line_starts)

    def snippet(self, span: Span) -> str:
        return self.data[span.start : span.end].decode("utf-8", errors="replace")


@dataclass(frozen=True)
class Span:
    """A byte range `[start, end)` in `file`; `call_site` is set for inlined code."""

    file: SourceFile = field(compare=False, repr=False)
    start: int
    end: int
    call_site: Span | None = None

    @property
    def file_name(self) -> str:
        return self.file.name

    @property
    def start_line_col(self) -> tuple[int, int]:
        return self.file.line_col(self.start)

    @property
    def end_line_col(self) -> tuple[int, int]:
        return self.file.line_col(self.end)

    @property
    def text(self) -> str:
        return self.file.snippet(self)

    def location(self) -> str:
        """`file:line:col`, the form editors and terminals link to."""
        line, col = self.start_line_col
        return f"{self.file.name}:{line}:{col}"

    def to(self, other: Span) -> Span:
        """The span covering `self` through `other` (same file)."""
        return Span(self.file, min(self.start, other.start), max(self.end, other.end))

    def inlined_at(self, call_site: Span) -> Span:
        return Span(self.file, self.start, self.end, call_site)

    def inlined_within(self, call_site: Span) -> Span:
        """This span inside a body inlined at `call_site`, keeping any inner call sites
        (so a chain reads innermost call first, then the calls that led to it)."""
        if self.call_site is None:
            return self.inlined_at(call_site)
        return Span(self.file, self.start, self.end, self.call_site.inlined_within(call_site))
