"""The in-process layer in front of the artifact cache: recent hits served from memory.

A cache hit from disk costs a thread hop, a file read, a SHA-256 check and a contract
parse; for the hottest kernels that is most of a hit's latency. `MemoryCache` keeps the
verified `Artifact`s of recent hits and compiles (least recently used first out, bounded
by the bytes of their cubins and contracts), so a repeated hit is a dict lookup on the
event loop. Entries come only from verified disk/Redis reads or from this process's own
compiles, so they are not re-checked. The bound and eviction are `client_stubs.lru`'s.
"""

from __future__ import annotations

from client_stubs.lru import ByteLRU
from service.cache.artifact import Artifact

DEFAULT_MEMORY_BYTES = 64 << 20


def _artifact_bytes(artifact: Artifact) -> int:
    return len(artifact.cubin) + artifact.contract.ByteSize()


class MemoryCache(ByteLRU[str, Artifact]):
    """Verified artifacts by request key, bounded by their cubins' and contracts' bytes."""

    def __init__(self, max_bytes: int = DEFAULT_MEMORY_BYTES) -> None:
        super().__init__(max_bytes, _artifact_bytes)
