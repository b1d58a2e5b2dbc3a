"""Parse a file once per `SourceFile`, not once per compile.

A batch compile of one `.rs` file builds every entry at every specialization from the same
`SourceFile` object, and the daemon's `SourcePool` hands the same object to every request with
the same file: each compile used to turn the whole file into an AST again (on decoder.rs,
26 functions, about 40 of a kernel's 45 ms in the front end). The AST is immutable (frozen
dataclasses whose spans point at that very `SourceFile`), so the parse of a file that parsed
cleanly is reused as is. A parse that reported anything (a syntax error, a nesting or time
limit) is not kept: its diagnostics belong to each compile, and the next one parses again.

Files are recognized by identity, not by content: a new `SourceFile` of the same text is
parsed again, so spans always name the compile's own file. A kept parse holds its file (the
AST's spans do), so an id is never another file's while it is kept. The least recently used
go once the kept ASTs pass `budget_bytes`, estimated from the sources' sizes (an AST holds
about 50 bytes per byte of source).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from parser import ast_nodes as A
from parser.cst_to_ast import ParseDeadline, parse_file
from parser.diagnostics import DiagnosticSink
from parser.spans import SourceFile

AST_BYTES_PER_SOURCE_BYTE = 50  # measured: decoder.rs, 35 KB of source, 1.7 MB of AST
DEFAULT_BUDGET_BYTES = 64 << 20


class ParsedFiles:
    """Clean parses by source file (identity), least recently used first."""

    def __init__(self, budget_bytes: int = DEFAULT_BUDGET_BYTES) -> None:
        self.budget_bytes = budget_bytes
        self._lock = threading.Lock()
        self._parses: OrderedDict[int, A.ParsedFile] = OrderedDict()
        self._bytes = 0

    def parse(
        self, source: SourceFile, sink: DiagnosticSink, deadline: ParseDeadline | None = None
    ) -> A.ParsedFile:
        """`parse_file(source, sink, deadline=deadline)`, reused for the same `source`."""
        key = id(source)
        with self._lock:
            kept = self._parses.get(key)
            if kept is not None:  # it holds `source`: the id is that file's
                self._parses.move_to_end(key)
                return kept
        reported = DiagnosticSink()
        parsed = parse_file(source, reported, deadline=deadline)
        sink.extend(reported.items)
        if not reported.items and footprint(source) <= self.budget_bytes:
            self._keep(key, parsed)
        return parsed

    def _keep(self, key: int, parsed: A.ParsedFile) -> None:
        with self._lock:
            if key in self._parses:  # another thread parsed it meanwhile
                return
            self._parses[key] = parsed
            self._bytes += footprint(parsed.source)
            while self._bytes > self.budget_bytes:
                _, oldest = self._parses.popitem(last=False)
                self._bytes -= footprint(oldest.source)

    def __len__(self) -> int:
        return len(self._parses)

    @property
    def bytes(self) -> int:
        """The estimated size of the kept ASTs."""
        return self._bytes


def footprint(source: SourceFile) -> int:
    """The estimated size of `source`'s AST."""
    return AST_BYTES_PER_SOURCE_BYTE * max(len(source.data), 1)


PARSED_FILES = ParsedFiles()
