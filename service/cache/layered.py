"""A local disk layer in front of a shared store: the cache of a replica with Redis.

Lookups try the local layer first, then the shared one; a shared hit is copied into the
local layer so the next one is local. Writes go to both. `find` says which layer answered
(the server counts hits and misses by layer). The compile lease is the shared store's.
"""

from __future__ import annotations

from service.cache.disk import DiskCache
from service.cache.redis import RedisCache
from service.cache.store import CacheEntry, ErrorObserver


class LayeredCache:
    def __init__(self, local: DiskCache, shared: RedisCache) -> None:
        self.local = local
        self.shared = shared
        self.layers = (*local.layers, *shared.layers)

    def get(self, key: str) -> CacheEntry | None:
        found = self.find(key)
        return None if found is None else found[0]

    def find(self, key: str) -> tuple[CacheEntry, str] | None:
        found = self.local.find(key)
        if found is not None:
            return found
        found = self.shared.find(key)
        if found is not None:
            self.local.put(key, found[0])
        return found

    def put(self, key: str, entry: CacheEntry) -> bool:
        local = self.local.put(key, entry)
        shared = self.shared.put(key, entry)
        return local or shared

    def delete(self, key: str) -> None:
        self.local.delete(key)
        self.shared.delete(key)

    def contains(self, key: str) -> bool:
        return self.local.contains(key) or self.shared.contains(key)

    def observe_errors(self, observer: ErrorObserver) -> None:
        self.local.observe_errors(observer)
        self.shared.observe_errors(observer)

    def acquire_lease(self, key: str, owner: str) -> bool:
        return self.shared.acquire_lease(key, owner)

    def lease_held(self, key: str) -> bool:
        return self.shared.lease_held(key)

    def renew_lease(self, key: str, owner: str) -> bool:
        return self.shared.renew_lease(key, owner)

    def release_lease(self, key: str, owner: str) -> None:
        self.shared.release_lease(key, owner)

    @property
    def lease_ms(self) -> int:
        return self.shared.lease_ms

    def close(self) -> None:
        self.shared.close()
