"""The in-process layer in front of the artifact cache: recent hits served from memory.

A cache hit from disk costs a thread hop, a file read, a SHA-256 check and a contract
parse; for the hottest kernels that is most of a hit's latency. `MemoryCache` keeps the
verified `Artifact`s of recent hits and compiles (least recently used first out, bounded
by the bytes of their cubins and contracts), so a repeated hit is a dict lookup on the
event loop. Entries come only from verified disk/Redis reads or from this process's own
compiles, so they are not re-checked.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from service.engine import Artifact

DEFAULT_MEMORY_BYTES = 64 << 20


class MemoryCache:
    def __init__(self, max_bytes: int = DEFAULT_MEMORY_BYTES) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, tuple[Artifact, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str) -> Artifact | None:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def put(self, key: str, artifact: Artifact) -> None:
        size = len(artifact.cubin) + artifact.contract.ByteSize()
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]
            self._entries[key] = (artifact, size)
            self._bytes += size
            while self._bytes > self.max_bytes:
                _, (_, evicted) = self._entries.popitem(last=False)
                self._bytes -= evicted

    def discard(self, key: str) -> None:
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self._bytes -= old[1]

    @property
    def total_bytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._entries)
