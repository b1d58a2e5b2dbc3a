"""The Redis artifact store against a private redis-server (and an unreachable one)."""

from __future__ import annotations

import hashlib
import time

import redis

from service.cache.redis import RedisCache
from service.cache.store import CacheEntry

KEY = hashlib.sha256(b"one").hexdigest()
OTHER = hashlib.sha256(b"two").hexdigest()
ENTRY = CacheEntry(cubin=b"\x7fELF cubin", contract=b"contract bytes")


def test_round_trip_with_a_ttl(redis_server) -> None:
    cache = RedisCache(redis_server.url, ttl_s=100)
    assert cache.get(KEY) is None
    assert not cache.contains(KEY)
    assert cache.put(KEY, ENTRY)
    assert cache.contains(KEY)
    assert cache.get(KEY) == ENTRY
    assert cache.find(KEY) == (ENTRY, "redis")
    raw = redis.Redis.from_url(redis_server.url)
    assert 0 < raw.pttl(f"cutile-serve:v1:a:{KEY}") <= 100_000
    cache.delete(KEY)
    assert cache.get(KEY) is None


def test_a_corrupt_value_is_a_miss_and_is_removed(redis_server) -> None:
    cache = RedisCache(redis_server.url)
    cache.put(KEY, ENTRY)
    raw = redis.Redis.from_url(redis_server.url)
    name = f"cutile-serve:v1:a:{KEY}"
    value = bytearray(raw.get(name))
    value[-1] ^= 0xFF  # flip a bit of the contract
    raw.set(name, bytes(value))
    assert cache.get(KEY) is None
    assert raw.exists(name) == 0


def test_a_value_stored_under_another_key_is_rejected(redis_server) -> None:
    cache = RedisCache(redis_server.url)
    cache.put(KEY, ENTRY)
    raw = redis.Redis.from_url(redis_server.url)
    raw.set(f"cutile-serve:v1:a:{OTHER}", raw.get(f"cutile-serve:v1:a:{KEY}"))
    assert cache.get(OTHER) is None


def test_entries_over_the_size_bound_are_not_stored(redis_server) -> None:
    cache = RedisCache(redis_server.url, max_entry_bytes=64)
    assert not cache.put(KEY, CacheEntry(cubin=b"x" * 100, contract=b""))
    assert not cache.contains(KEY)


def test_the_lease_goes_to_one_owner_at_a_time(redis_server) -> None:
    first = RedisCache(redis_server.url, lease_ms=10_000)
    second = RedisCache(redis_server.url, lease_ms=10_000)
    assert first.acquire_lease(KEY, "replica-a")
    assert not second.acquire_lease(KEY, "replica-b")
    assert second.lease_held(KEY)
    second.release_lease(KEY, "replica-b")  # not its lease: nothing happens
    assert first.lease_held(KEY)
    first.release_lease(KEY, "replica-a")
    assert not second.lease_held(KEY)


def test_only_the_owner_renews_a_lease(redis_server) -> None:
    first = RedisCache(redis_server.url, lease_ms=300)
    second = RedisCache(redis_server.url, lease_ms=300)
    assert first.acquire_lease(KEY, "replica-a")
    assert not second.renew_lease(KEY, "replica-b")
    for _ in range(4):  # 0.6 s in all: twice the lease, kept alive by renewals
        time.sleep(0.15)
        assert first.renew_lease(KEY, "replica-a")
    assert second.lease_held(KEY)
    time.sleep(0.45)  # no more renewals: it expires
    assert not second.lease_held(KEY)
    assert not first.renew_lease(KEY, "replica-a")
    assert second.acquire_lease(KEY, "replica-b")


def test_an_expired_lease_can_be_taken(redis_server) -> None:
    cache = RedisCache(redis_server.url, lease_ms=50)
    assert cache.acquire_lease(KEY, "dead-replica")
    raw = redis.Redis.from_url(redis_server.url)
    assert 0 < raw.pttl(f"cutile-serve:v1:lease:{KEY}") <= 50
    raw.pexpire(f"cutile-serve:v1:lease:{KEY}", 1)
    time.sleep(0.05)
    assert cache.acquire_lease(KEY, "live-replica")


def test_an_unreachable_redis_is_a_miss_and_counts_errors(unused_redis_url) -> None:
    errors: list[str] = []
    cache = RedisCache(unused_redis_url, retry_after_s=60)
    cache.observe_errors(errors.append)
    assert cache.get(KEY) is None
    assert errors == ["redis"]
    # resting: no new attempts (and no new errors) until retry_after_s has passed
    assert not cache.put(KEY, ENTRY)
    assert cache.acquire_lease(KEY, "me")  # nobody to coordinate with: compile
    assert not cache.lease_held(KEY)
    assert not cache.contains(KEY)
    assert errors == ["redis"]
    assert not cache.ping()


def test_after_the_rest_redis_is_tried_again(redis_server) -> None:
    errors: list[str] = []
    cache = RedisCache(redis_server.url, retry_after_s=0.0)
    cache.observe_errors(errors.append)
    redis_server.stop()
    assert not cache.put(KEY, ENTRY)
    assert not cache.put(KEY, ENTRY)
    assert errors == ["redis", "redis"]


def test_a_key_of_another_type_is_a_miss_and_does_not_rest_redis(redis_server) -> None:
    errors: list[str] = []
    cache = RedisCache(redis_server.url)
    cache.observe_errors(errors.append)
    raw = redis.Redis.from_url(redis_server.url)
    raw.rpush(f"cutile-serve:v1:a:{KEY}", b"not an artifact")  # WRONGTYPE for GETEX
    assert cache.get(KEY) is None
    assert errors == ["redis"]
    assert raw.exists(f"cutile-serve:v1:a:{KEY}") == 0  # deleted: the next read is clean
    assert cache.put(OTHER, ENTRY) and cache.get(OTHER) == ENTRY  # Redis is not resting
    assert cache.put(KEY, ENTRY) and cache.get(KEY) == ENTRY


def test_a_reply_that_is_not_bytes_is_a_miss(redis_server, monkeypatch) -> None:
    cache = RedisCache(redis_server.url)
    for reply in (7, [b"a"] * 3, "text"):
        monkeypatch.setattr(cache._client, "getex", lambda *a, reply=reply, **k: reply)
        assert cache.get(KEY) is None


def test_an_unparsable_reply_counts_as_an_error_not_an_exception(redis_server, monkeypatch) -> None:
    errors: list[str] = []
    cache = RedisCache(redis_server.url)
    cache.observe_errors(errors.append)

    def broken(*args: object, **kwargs: object) -> bytes:
        raise ValueError("invalid literal for int() with base 10: b'abc'")

    monkeypatch.setattr(cache._client, "getex", broken)
    assert cache.get(KEY) is None
    assert "redis" in errors


def test_a_lease_without_a_ttl_is_stale_and_removed(redis_server) -> None:
    cache = RedisCache(redis_server.url, lease_ms=3000)
    raw = redis.Redis.from_url(redis_server.url)
    name = f"cutile-serve:v1:lease:{KEY}"
    raw.set(name, b"someone")  # no PX: never expires
    assert not cache.lease_held(KEY)
    assert raw.exists(name) == 0
    assert cache.acquire_lease(KEY, "me")
    assert cache.lease_held(KEY)  # a lease this code takes is a lease
    raw.set(name, b"someone", px=3_600_000)  # longer than any replica gives
    assert not cache.lease_held(KEY)
