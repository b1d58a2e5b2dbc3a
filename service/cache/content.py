"""The content key: Tile IR bytecode → cubin, shared by every request that lowers alike.

Two requests can differ (file names, comments, formatting, an unused function) and still
lower to the same bytecode; the request key tells them apart, the content key does not.
`ContentCachedAssembler` stands in for the assembler `compile_kernel` is given: before
running tileiras it looks the bytecode's content key up in the artifact cache, and after a
successful run it stores the cubin there (an entry with an empty contract). The key is
SHA-256 over u64-length-prefixed fields: a domain tag, the bytecode, the target, opt level,
host arch, lineinfo and the tileiras fingerprint, the inputs that decide the cubin (as in
cutile-rs's L2 key). Cache errors never fail the assemble.

Nothing unchecked goes in or comes out: given the entry's `symbol`, a cubin is checked
(`lowering.cubin_info.check_cubin`: a cubin for the target holding the symbol) before it is
stored, and a cached one that fails the check is dropped and assembled anew, so one bad
tileiras run cannot fail that bytecode for later requests.
"""

from __future__ import annotations

import hashlib
import logging
import struct
from collections.abc import Callable
from typing import Protocol

from lowering.cubin_info import check_cubin
from service.cache.store import ArtifactCache, CacheEntry

log = logging.getLogger(__name__)

CONTENT_DOMAIN = "cutile-serve-cubin-v1"


class Assembler(Protocol):
    @property
    def version(self) -> str: ...

    @property
    def fingerprint(self) -> str: ...

    def assemble(
        self,
        bytecode: bytes,
        *,
        arch: str,
        opt_level: int,
        host_arch: str,
        lineinfo: bool,
        symbol: str | None = None,
    ) -> bytes: ...


def content_key(
    bytecode: bytes,
    *,
    arch: str,
    opt_level: int,
    host_arch: str,
    lineinfo: bool,
    tileiras_fingerprint: str,
) -> str:
    fields = (
        CONTENT_DOMAIN.encode(),
        bytecode,
        arch.encode(),
        str(opt_level).encode(),
        host_arch.encode(),
        b"1" if lineinfo else b"0",
        tileiras_fingerprint.encode(),
    )
    digest = hashlib.sha256()
    for field in fields:
        digest.update(struct.pack(">Q", len(field)))
        digest.update(field)
    return digest.hexdigest()


class ContentCachedAssembler:
    """`inner` with the content-key cache in front; `runs` and `hits` count assembles."""

    def __init__(
        self,
        inner: Assembler,
        cache: ArtifactCache,
        observer: Callable[[str], None] | None = None,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.observer = observer  # called with "hit" or "miss" (a tileiras run) per assemble
        self.runs = 0
        self.hits = 0

    @property
    def version(self) -> str:
        return self.inner.version

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    def assemble(
        self,
        bytecode: bytes,
        *,
        arch: str,
        opt_level: int = 3,
        host_arch: str = "x86_64",
        lineinfo: bool = False,
        symbol: str | None = None,
    ) -> bytes:
        key = content_key(
            bytecode,
            arch=arch,
            opt_level=opt_level,
            host_arch=host_arch,
            lineinfo=lineinfo,
            tileiras_fingerprint=self.inner.fingerprint,
        )
        found = self.cache.get(key)
        if found is not None and found.cubin and not found.contract:
            if _valid(found.cubin, arch, symbol):
                self.hits += 1
                log.debug("content key %s: cubin from the cache", key[:8])
                self._observe("hit")
                return found.cubin
            log.warning("content key %s holds no valid cubin; assembling anew", key[:8])
            self.cache.delete(key)
        self.runs += 1
        self._observe("miss")
        options: dict[str, object] = dict(arch=arch, opt_level=opt_level, host_arch=host_arch)
        options.update(lineinfo=lineinfo, **({"symbol": symbol} if symbol else {}))
        cubin = self.inner.assemble(bytecode, **options)  # type: ignore[arg-type]
        if _valid(cubin, arch, symbol):
            self.cache.put(key, CacheEntry(cubin, b""))
        return cubin

    def _observe(self, result: str) -> None:
        if self.observer is not None:
            self.observer(result)


def _valid(cubin: bytes, arch: str, symbol: str | None) -> bool:
    """Whether `cubin` may be cached or served: checked when the entry's symbol is known."""
    if symbol is None:
        return True
    try:
        check_cubin(cubin, arch, symbol)
    except ValueError:
        return False
    return True
