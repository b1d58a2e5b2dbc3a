"""Reuse the `SourceFile`s of sources the server has seen recently.

Building a `SourceFile` indexes every line start in Python, which for a repeated request
(a cache hit) costs more than the rest of the hit. `SourcePool.get(name, text)` returns
the same immutable `SourceFile` for the same name and text while it is among the most
recently used (bounded by what they hold in memory: text, bytes, room for a line table), so
a hit hashes the text instead.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from parser.spans import SourceFile

DEFAULT_POOL_BYTES = 32 << 20


class SourcePool:
    def __init__(self, max_bytes: int = DEFAULT_POOL_BYTES) -> None:
        self.max_bytes = max_bytes
        self._files: OrderedDict[tuple[str, str], SourceFile] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, name: str, text: str) -> SourceFile:
        ident = (name, text)
        with self._lock:
            found = self._files.get(ident)
            if found is not None:
                self._files.move_to_end(ident)
                return found
        source = SourceFile(name, text)
        size = _footprint(source)
        if size > self.max_bytes:
            return source
        with self._lock:
            if ident not in self._files:
                self._files[ident] = source
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, evicted = self._files.popitem(last=False)
                self._bytes -= _footprint(evicted)
        return source

    def __len__(self) -> int:
        return len(self._files)

    @property
    def bytes(self) -> int:
        """What the pooled files hold, as accounted."""
        return self._bytes


def _footprint(source: SourceFile) -> int:
    """What a pooled file keeps in memory: its text and its UTF-8 bytes (a line table is
    built only for diagnostics, 4 bytes a line; counted as one byte a character, its upper
    bound for lines of at least four characters)."""
    return len(source.text) + 2 * len(source.data)
