"""Reuse the `SourceFile`s of sources the server has seen recently.

Building a `SourceFile` indexes every line start in Python, which for a repeated request
(a cache hit) costs more than the rest of the hit. `SourcePool.get(name, text)` returns
the same immutable `SourceFile` for the same name and text while it is among the most
recently used (bounded by what they hold in memory: text, bytes, room for a line table), so
a hit hashes the text instead (a `client_stubs.lru.ByteLRU`).
"""

from __future__ import annotations

from client_stubs.lru import ByteLRU
from parser.front_end import SourceFile

DEFAULT_POOL_BYTES = 32 << 20
ENTRY_OVERHEAD_BYTES = 512  # the SourceFile, its key tuple and the pool's own bookkeeping


class SourcePool:
    def __init__(self, max_bytes: int = DEFAULT_POOL_BYTES) -> None:
        self.max_bytes = max_bytes
        self._files: ByteLRU[tuple[str, str], SourceFile] = ByteLRU(max_bytes, _footprint)

    def get(self, name: str, text: str) -> SourceFile:
        ident = (name, text)
        found = self._files.get(ident)
        if found is not None:
            return found
        source = SourceFile(name, text)
        self._files.put(ident, source)
        return source

    def __len__(self) -> int:
        return len(self._files)

    @property
    def bytes(self) -> int:
        """What the pooled files hold, as accounted."""
        return self._files.total_bytes


def _footprint(source: SourceFile) -> int:
    """What a pooled file keeps in memory: its name (in the file and the key), its text and
    its UTF-8 bytes (a line table is built only for diagnostics, 4 bytes a line; counted as
    one byte a character, its upper bound for lines of at least four characters), and the
    objects around them; an empty file is not free."""
    return 2 * len(source.name) + len(source.text) + 2 * len(source.data) + ENTRY_OVERHEAD_BYTES
