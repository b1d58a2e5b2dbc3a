"""service.cache.memory: recent artifacts in process, bounded by bytes, LRU."""

from __future__ import annotations

from protos.generated.cutile.compile.v1 import contract_pb2
from service.cache.artifact import Artifact
from service.cache.memory import MemoryCache


def _artifact(size: int) -> Artifact:
    return Artifact(b"x" * size, contract_pb2.LaunchContract())


def test_get_put_discard() -> None:
    cache = MemoryCache(1000)
    assert cache.get("a") is None
    artifact = _artifact(10)
    cache.put("a", artifact)
    assert cache.get("a") is artifact
    cache.discard("a")
    assert cache.get("a") is None
    assert cache.total_bytes == 0


def test_least_recently_used_go_first() -> None:
    cache = MemoryCache(300)
    for key in "abc":
        cache.put(key, _artifact(100))
    cache.get("a")  # b is now the oldest
    cache.put("d", _artifact(100))
    assert cache.get("b") is None
    assert all(cache.get(k) is not None for k in "acd")
    assert cache.total_bytes == 300


def test_replacing_and_oversized_entries() -> None:
    cache = MemoryCache(100)
    cache.put("a", _artifact(50))
    cache.put("a", _artifact(60))
    assert cache.total_bytes == 60 and len(cache) == 1
    cache.put("big", _artifact(101))
    assert cache.get("big") is None
    assert cache.get("a") is not None
