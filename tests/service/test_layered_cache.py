"""The disk layer in front of Redis."""

from __future__ import annotations

import hashlib
from pathlib import Path

from service.cache.disk import DiskCache
from service.cache.layered import LayeredCache
from service.cache.redis import RedisCache
from service.cache.store import CacheEntry

KEY = hashlib.sha256(b"one").hexdigest()
ENTRY = CacheEntry(cubin=b"\x7fELF cubin", contract=b"contract bytes")


def test_writes_reach_both_layers(redis_server, tmp_path: Path) -> None:
    disk, shared = DiskCache(tmp_path / "c"), RedisCache(redis_server.url)
    cache = LayeredCache(disk, shared)
    assert cache.layers == ("disk", "redis")
    assert cache.put(KEY, ENTRY)
    assert disk.get(KEY) == ENTRY
    assert shared.get(KEY) == ENTRY
    assert cache.find(KEY) == (ENTRY, "disk")


def test_a_redis_hit_is_copied_to_disk(redis_server, tmp_path: Path) -> None:
    shared = RedisCache(redis_server.url)
    shared.put(KEY, ENTRY)  # stored by another replica
    disk = DiskCache(tmp_path / "c")
    cache = LayeredCache(disk, shared)
    assert cache.find(KEY) == (ENTRY, "redis")
    assert disk.get(KEY) == ENTRY
    assert cache.find(KEY) == (ENTRY, "disk")


def test_delete_and_contains_cover_both(redis_server, tmp_path: Path) -> None:
    shared = RedisCache(redis_server.url)
    cache = LayeredCache(DiskCache(tmp_path / "c"), shared)
    shared.put(KEY, ENTRY)
    assert cache.contains(KEY)
    cache.put(KEY, ENTRY)
    cache.delete(KEY)
    assert not cache.contains(KEY)
    assert cache.get(KEY) is None


def test_the_lease_is_the_shared_stores(redis_server, tmp_path: Path) -> None:
    cache = LayeredCache(DiskCache(tmp_path / "a"), RedisCache(redis_server.url))
    other = LayeredCache(DiskCache(tmp_path / "b"), RedisCache(redis_server.url))
    assert cache.acquire_lease(KEY, "a")
    assert other.lease_held(KEY)
    assert not other.acquire_lease(KEY, "b")
    cache.release_lease(KEY, "a")
    assert not other.lease_held(KEY)


def test_redis_down_leaves_the_disk_layer_working(unused_redis_url, tmp_path: Path) -> None:
    errors: list[str] = []
    cache = LayeredCache(DiskCache(tmp_path / "c"), RedisCache(unused_redis_url))
    cache.observe_errors(errors.append)
    assert cache.put(KEY, ENTRY)
    assert cache.find(KEY) == (ENTRY, "disk")
    assert errors == ["redis"]
