"""The parse-time limit: every source of a compile must parse within `max_parse_ms`.

The front end's own parse cannot be interrupted, so before a compile (on a cache miss
only) the server parses the sources once more with tree-sitter's progress callback, which
halts a parse past its deadline (the callback works with the read-callback form of
`Parser.parse` only). A request over the limit is answered INVALID_ARGUMENT with a
BadRequest naming the file: retrying the same source would not help. Parsing is
tree-sitter's C code, so the check costs a few ms per MiB.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import tree_sitter
import tree_sitter_rust

from parser.spans import SourceFile

_CHUNK = 64 * 1024


class ParseTooSlow(Exception):
    """Source `index` did not parse within the limit."""

    def __init__(self, index: int, limit_ms: int) -> None:
        super().__init__(f"parsing took longer than the limit of {limit_ms} ms")
        self.index = index
        self.limit_ms = limit_ms


def check_parse_time(sources: Sequence[SourceFile], limit_ms: int) -> None:
    """ParseTooSlow unless all `sources` together parse within `limit_ms`."""
    parser = tree_sitter.Parser(tree_sitter.Language(tree_sitter_rust.language()))
    deadline = time.monotonic() + limit_ms / 1000.0
    for index, source in enumerate(sources):
        data = source.data

        def read(offset: int, _point: object, data: bytes = data) -> bytes:
            return data[offset : offset + _CHUNK]

        try:
            parser.parse(read, progress_callback=lambda *_state: time.monotonic() > deadline)
        except ValueError:  # tree-sitter halted the parse
            raise ParseTooSlow(index, limit_ms) from None
        finally:
            parser.reset()
        if time.monotonic() > deadline:
            raise ParseTooSlow(index, limit_ms)
