"""A Redis artifact store shared by several `cutile-serve` replicas (`--cache redis://…`).

Values are the disk store's checksummed encoding (`service.cache.disk.encode_entry`), so every
read re-verifies the SHA-256 and the key inside the value; a corrupt value is deleted and
reported as a miss. Keys are `<prefix>a:<hex key>`.

Policy. Every entry is written with a TTL (`ttl_s`, default 7 days) that a hit renews
(GETEX), so entries nobody reads expire; entries over `max_entry_bytes` (default 64 MiB)
are not stored. The total size is Redis's to bound: run it with `maxmemory` and
`maxmemory-policy allkeys-lru` (or `volatile-lru`). Needs Redis 6.2 or later (GETEX).

Lease. `acquire_lease(key, owner)` is `SET <prefix>lease:<key> owner NX PX lease_ms`: the
replica that gets it compiles, the others poll the store until the result appears or the
lease is gone (released after a failed compile, or expired because its owner died), then
try for the lease themselves. `release_lease` deletes it only while `owner` still holds
it (a compare-and-delete script); `renew_lease` extends it the same way, which the engine
does every third of `lease_ms` while a compile runs (`service.cache.lease`), so a compile
longer than the lease still runs once.

Faults. Redis errors never fail a compile: each one is logged, reported to the error
observer (the server's `cutile_serve_cache_errors_total{layer="redis"}`) and read as a miss,
a skipped write or a granted lease. Each command ends within `deadline_s` however slowly a
reply comes (`service.cache.redis_deadline`). After a connection error or a timeout Redis is left
alone for `retry_after_s`, so an unreachable server costs one timeout, not one per request;
any other failure (an error reply, such as a key of the wrong type, or a reply that does not
parse) concerns that command only: a read that fails so deletes its key, and anything but
bytes in an artifact's place is deleted as corrupt.

Leases. A lease key without a TTL, or with one longer than `lease_ms` (left by another
tool, never by this code), would block every replica for good: it is taken as stale and
deleted.

Trust. A hit is executable device code, so the Redis database must be writable only by
the service: give it its own user (Redis ACL) or password and put the credentials in the
URL (`redis://user:password@host:6379/0`; `rediss://` for TLS); never share it with
clients.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import redis

from service.cache.disk import MAX_ENTRY_BYTES, check_key, decode_entry, encode_entry
from service.cache.redis_deadline import deadline_client
from service.cache.store import CacheEntry, ErrorObserver

log = logging.getLogger(__name__)

DEFAULT_PREFIX = "cutile-serve:v1:"
DEFAULT_TTL_S = 7 * 24 * 3600
DEFAULT_LEASE_MS = 3_000  # renewed every second while its compile runs
DEFAULT_MAX_ENTRY_BYTES = MAX_ENTRY_BYTES
DEFAULT_TIMEOUT_S = 0.5
DEFAULT_DEADLINE_S = 5.0  # a whole command, reply included (a 64 MiB entry at ~100 MB/s)
DEFAULT_RETRY_AFTER_S = 2.0

_FAILED = object()  # what `_call` returns for a command that failed (not for a miss)
_UNREACHABLE = (redis.ConnectionError, redis.TimeoutError)

_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
_RENEW = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
return 0
"""


class RedisCache:
    """Artifacts in Redis; see the module docstring."""

    layers = ("redis",)

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        ttl_s: int = DEFAULT_TTL_S,
        lease_ms: int = DEFAULT_LEASE_MS,
        max_entry_bytes: int = DEFAULT_MAX_ENTRY_BYTES,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        deadline_s: float = DEFAULT_DEADLINE_S,
        retry_after_s: float = DEFAULT_RETRY_AFTER_S,
    ) -> None:
        self.url = url
        self.prefix = prefix
        self.ttl_ms = ttl_s * 1000
        self.lease_ms = lease_ms
        self.max_entry_bytes = max_entry_bytes
        self.retry_after_s = retry_after_s
        self._client = deadline_client(url, deadline_s=deadline_s, timeout_s=timeout_s)
        self._release = self._client.register_script(_RELEASE)
        self._renew = self._client.register_script(_RENEW)
        self._observer: ErrorObserver | None = None
        self._lock = threading.Lock()
        self._resume_at = 0.0  # time.monotonic() before which Redis is left alone

    @property
    def where(self) -> str:
        """The URL without credentials, for logs."""
        kwargs = self._client.connection_pool.connection_kwargs
        return f"redis {kwargs.get('host', '?')}:{kwargs.get('port', '?')}/{kwargs.get('db', 0)}"

    def observe_errors(self, observer: ErrorObserver) -> None:
        self._observer = observer

    # ------------------------------------------------------------------ artifacts

    def get(self, key: str) -> CacheEntry | None:
        check_key(key)
        data = self._call("read", _FAILED, lambda c: c.getex(self._artifact(key), px=self.ttl_ms))
        if data is None:
            return None
        if data is _FAILED:  # resting (the delete is skipped too), or an error of this key
            self.delete(key)
            return None
        entry = decode_entry(data, key) if isinstance(data, bytes) else None
        if entry is None:
            log.warning("redis entry %s is corrupt; removing it", key[:8])
            self.delete(key)
        return entry

    def find(self, key: str) -> tuple[CacheEntry, str] | None:
        entry = self.get(key)
        return None if entry is None else (entry, "redis")

    def put(self, key: str, entry: CacheEntry) -> bool:
        check_key(key)
        data = encode_entry(key, entry)
        if len(data) > self.max_entry_bytes:
            log.warning("cache entry %s (%d bytes) is too large for redis", key[:8], len(data))
            return False
        name = self._artifact(key)
        return bool(self._call("write", None, lambda c: c.set(name, data, px=self.ttl_ms)))

    def delete(self, key: str) -> None:
        check_key(key)
        self._call("delete", None, lambda c: c.delete(self._artifact(key)))

    def contains(self, key: str) -> bool:
        check_key(key)
        return bool(self._call("exists", 0, lambda c: c.exists(self._artifact(key))))

    # ------------------------------------------------------------------ lease

    def acquire_lease(self, key: str, owner: str) -> bool:
        """True when `owner` now holds the compile lease of `key` (or Redis is down)."""
        check_key(key)
        taken = self._call(
            "lease", True, lambda c: c.set(self._lease(key), owner, nx=True, px=self.lease_ms)
        )
        return bool(taken)

    def lease_held(self, key: str) -> bool:
        """Whether some replica holds the lease of `key` (False when Redis is down); a lease
        without a TTL or with one past `lease_ms` is stale, and deleted."""
        check_key(key)
        left = self._call("lease", -2, lambda c: c.pttl(self._lease(key)))
        if not isinstance(left, int) or left == -2:
            return False
        if left == -1 or left > self.lease_ms:
            log.warning("lease of %s has no TTL a replica gives; deleting it", key[:8])
            self._call("lease", None, lambda c: c.delete(self._lease(key)))
            return False
        return True

    def renew_lease(self, key: str, owner: str) -> bool:
        """Extend `owner`'s lease of `key` by `lease_ms`; False when it no longer holds it
        (or Redis is down)."""
        check_key(key)
        renewed = self._call(
            "lease", 0, lambda c: self._renew(keys=[self._lease(key)], args=[owner, self.lease_ms])
        )
        return bool(renewed)

    def release_lease(self, key: str, owner: str) -> None:
        check_key(key)
        self._call("lease", None, lambda c: self._release(keys=[self._lease(key)], args=[owner]))

    # ------------------------------------------------------------------ plumbing

    def ping(self) -> bool:
        return bool(self._call("ping", False, lambda c: c.ping()))

    def close(self) -> None:
        self._client.close()

    def _artifact(self, key: str) -> str:
        return f"{self.prefix}a:{key}"

    def _lease(self, key: str) -> str:
        return f"{self.prefix}lease:{key}"

    def _call(self, what: str, fallback: Any, operation: Any) -> Any:
        """`operation(client)`, or `fallback` when Redis is failing or resting."""
        if time.monotonic() < self._resume_at:
            return fallback
        try:
            return operation(self._client)
        except _UNREACHABLE as exc:
            with self._lock:
                self._resume_at = time.monotonic() + self.retry_after_s
            log.warning(
                "%s failed on %s: %s (redis skipped for %.1f s)",
                what,
                self.where,
                exc,
                self.retry_after_s,
            )
        except Exception as exc:  # an error reply or an unparsable one: this command only
            log.warning("%s failed on %s: %s: %s", what, self.where, type(exc).__name__, exc)
        if self._observer is not None:
            self._observer("redis")
        return fallback
