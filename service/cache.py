"""Content-addressed artifact cache: the request key and the on-disk store.

The key is SHA-256 over a canonical, length-prefixed encoding of everything that decides
the cubin: a domain tag, the compiler version, every source's text (in order: the entry's
file first), the entry, the generics, target, opt level, host arch, lineinfo and the
tileiras fingerprint. File names are not part of it: they decide no byte of the cubin or the
contract (whose `source_sha256` covers the texts only), so `add.rs`, `/abs/path/add.rs` and
the base name `cutile-compile --server` sends give one key, one cache entry and one bundle
file name; only diagnostics, which are never cached, name the file as the user gave it.
Bump `KEY_DOMAIN` to invalidate every entry at once.

`DiskCache` stores one file per key, `<root>/<key[:2]>/<key>.artifact`, written atomically
(temp file in the same folder, fsync, `os.replace`). Each file starts with a header holding
a magic, the payload length and the payload's SHA-256, re-checked on every read; an entry
that fails the check is removed and reported as a miss. Cache I/O never fails a compile:
errors are logged, reported to the observer set by `observe_errors` (the server counts
them in its metrics) and turn into misses or skipped writes.

The store is bounded: `max_bytes` (default 2 GiB; None = unbounded). Every hit touches its
file's mtime, so mtime is the last use; a write that takes the running total past the bound
rescans the root and deletes least-recently-used entries until the total is at most
`LOW_WATER` of the bound (`client_stubs.lru`, the policy the client's cache shares). A
single entry larger than the bound is not stored.

A hit is executable device code, so the root is private (0700) and a root that other users
can write is refused (the cache then stays disabled). `ArtifactCache` is the interface
every store implements: `service.redis_cache` (shared by replicas) and
`service.layered_cache` (a disk layer in front of Redis) are the others.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import struct
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from client_stubs.lru import LOW_WATER, DiskEntry, evict_least_recent, scan_shards, touch
from lowering.pipeline import COMPILER_VERSION, CompileRequest

log = logging.getLogger(__name__)

KEY_DOMAIN = "cutile-serve-request-v4"  # v4: file names left out
APP_DIR = "cutile-serve"

_MAGIC = b"CTSVART1"
_HEADER = struct.Struct(">8s32sQ")  # magic, sha256(payload), len(payload)
_KEY = re.compile(r"[0-9a-f]{64}")
DEFAULT_MAX_BYTES = 2 << 30
_STALE_TEMP_S = 3600.0  # temp files older than this are leftovers of a crashed write


# --------------------------------------------------------------------------- keys


@dataclass(frozen=True)
class RequestKey:
    sha256: str  # lowercase hex
    size: int  # bytes of the canonical encoding that was hashed

    @property
    def short(self) -> str:
        """The first 8 hex digits, for file names and logs."""
        return self.sha256[:8]


def request_key(
    request: CompileRequest,
    *,
    tileiras_fingerprint: str,
    compiler_version: str = COMPILER_VERSION,
) -> RequestKey:
    """The cache key of `request` compiled by this compiler with this tileiras (the
    encoding is hashed field by field: a source's bytes are never copied)."""
    digest = hashlib.sha256()
    size = 0
    for field in _key_fields(
        request, tileiras_fingerprint=tileiras_fingerprint, compiler_version=compiler_version
    ):
        digest.update(struct.pack(">Q", len(field)))
        digest.update(field)
        size += 8 + len(field)
    return RequestKey(digest.hexdigest(), size)


def canonical_encoding(
    request: CompileRequest, *, tileiras_fingerprint: str, compiler_version: str
) -> bytes:
    """Every key input as u64-length-prefixed UTF-8 fields; lists carry their count."""
    fields = _key_fields(
        request, tileiras_fingerprint=tileiras_fingerprint, compiler_version=compiler_version
    )
    return b"".join(_field(field) for field in fields)


def _key_fields(
    request: CompileRequest, *, tileiras_fingerprint: str, compiler_version: str
) -> list[bytes]:
    sources = [source.data for source in request.sources]  # content, not the path
    fields: list[str] = [request.entry, str(len(request.generics))]
    for name, value in sorted(request.generics):
        fields += [name, value]
    fields += [str(len(request.generic_args)), *request.generic_args]
    fields += [
        request.arch,
        str(request.opt_level),
        request.host_arch,
        "1" if request.lineinfo else "0",
        tileiras_fingerprint,
        str(len(request.specialization)),
    ]
    for facts in sorted(request.specialization, key=lambda f: f.param):
        fields += [facts.param, _axes(facts.dim_divisors), _axes(facts.stride_divisors)]
        fields += [str(facts.base_align), "1" if facts.unit_last_stride else "*"]
    head = [KEY_DOMAIN, compiler_version, str(len(request.sources))]
    return [
        *(text.encode("utf-8") for text in head),
        *sources,
        *(text.encode("utf-8") for text in fields),
    ]


def _axes(divisors: tuple[int, ...]) -> str:
    return ",".join(str(d) for d in divisors)


def _field(data: bytes) -> bytes:
    return struct.pack(">Q", len(data)) + data


# --------------------------------------------------------------------------- store


@dataclass(frozen=True)
class CacheEntry:
    """A successful compile: the cubin and the serialized `contract_pb2.LaunchContract`."""

    cubin: bytes
    contract: bytes


ErrorObserver = Callable[[str], None]  # called with the layer name on every I/O error


class ArtifactCache(Protocol):
    """A store of `CacheEntry`s by hex key; `layers` names its layers, fastest first."""

    layers: tuple[str, ...]

    def get(self, key: str) -> CacheEntry | None: ...

    def find(self, key: str) -> tuple[CacheEntry, str] | None:
        """The entry and the name of the layer that held it."""
        ...

    def put(self, key: str, entry: CacheEntry) -> bool: ...

    def delete(self, key: str) -> None: ...

    def contains(self, key: str) -> bool: ...

    def observe_errors(self, observer: ErrorObserver) -> None: ...


def default_cache_dir() -> Path:
    """`$XDG_CACHE_HOME/cutile-serve`, else `~/.cache/cutile-serve`."""
    base = os.environ.get("XDG_CACHE_HOME")
    root = Path(base) if base and os.path.isabs(base) else Path.home() / ".cache"
    return root / APP_DIR


class DiskCache:
    """One checksummed file per key under a private root; see the module docstring."""

    layers = ("disk",)

    def __init__(
        self, root: Path | str | None = None, *, max_bytes: int | None = DEFAULT_MAX_BYTES
    ) -> None:
        self.root = Path(root) if root is not None else default_cache_dir()
        self.max_bytes = max_bytes
        self._usable: bool | None = None
        self._lock = threading.Lock()
        self._total: int | None = None  # bytes on disk; None until the first scan
        self._observer: ErrorObserver | None = None

    def observe_errors(self, observer: ErrorObserver) -> None:
        self._observer = observer

    def _error(self) -> None:
        if self._observer is not None:
            self._observer("disk")

    def find(self, key: str) -> tuple[CacheEntry, str] | None:
        entry = self.get(key)
        return None if entry is None else (entry, "disk")

    def get(self, key: str) -> CacheEntry | None:
        path = self._path(key)
        if path is None:
            return None
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.warning("cache read failed for %s: %s", key[:8], exc)
            self._error()
            return None
        entry = decode_entry(data, key)
        if entry is None:
            log.warning("cache entry %s is corrupt; removing it", key[:8])
            self.delete(key)
            return None
        touch(path)
        return entry

    def contains(self, key: str) -> bool:
        """Whether an entry for `key` is on disk (not verified: `get` does that)."""
        path = self._path(key)
        return path is not None and path.is_file()

    def put(self, key: str, entry: CacheEntry) -> bool:
        """Store `entry`; False (and a log line) when it could not be written."""
        path = self._path(key)
        if path is None:
            return False
        data = encode_entry(key, entry)
        if self.max_bytes is not None and len(data) > self.max_bytes:
            log.warning("cache entry %s (%d bytes) exceeds the cache bound", key[:8], len(data))
            return False
        try:
            path.parent.mkdir(mode=0o700, exist_ok=True)
            _write_atomically(path, data)
        except OSError as exc:
            log.warning("cache write failed for %s: %s", key[:8], exc)
            self._error()
            return False
        self._account(len(data))
        return True

    def total_bytes(self) -> int:
        """Bytes of entries on disk (a fresh scan)."""
        return sum(entry.size for entry in self._scan())

    def _account(self, written: int) -> None:
        """Add `written` to the running total; evict when it passes the bound."""
        if self.max_bytes is None:
            return
        with self._lock:
            if self._total is None:
                self._total = self.total_bytes()
            else:
                self._total += written
            if self._total > self.max_bytes:
                self._total = self._evict(int(self.max_bytes * LOW_WATER))

    def _evict(self, target: int) -> int:
        """Delete least-recently-used entries until at most `target` bytes remain."""

        def failed(path: Path, exc: OSError) -> None:
            log.warning("cache eviction failed for %s: %s", path.name[:8], exc)

        total, evicted = evict_least_recent(self._scan(), target, failed)
        log.info("cache evicted %d entries; %d bytes remain", evicted, total)
        return total

    def _scan(self) -> list[DiskEntry]:
        """Every entry (last use, size, path); removes stale temp files on the way."""
        if not self._root_usable():
            return []
        _remove_stale_temps(self.root)
        return scan_shards(self.root, ".artifact")

    def delete(self, key: str) -> None:
        path = self._path(key)
        if path is None:
            return
        try:
            path.unlink(missing_ok=True)
        except OSError as exc:
            log.warning("cache delete failed for %s: %s", key[:8], exc)

    def _path(self, key: str) -> Path | None:
        """The file of `key`; None for a malformed key or an unusable root."""
        check_key(key)
        if not self._root_usable():
            return None
        return self.root / key[:2] / f"{key}.artifact"

    def _root_usable(self) -> bool:
        if self._usable is None:
            self._usable = self._prepare_root()
        return self._usable

    def _prepare_root(self) -> bool:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = self.root.stat()
        except OSError as exc:
            log.warning("cache disabled: cannot create %s: %s", self.root, exc)
            return False
        if info.st_mode & 0o022 or info.st_uid != os.getuid():
            log.warning(
                "cache disabled: %s is writable by other users or not owned by this user",
                self.root,
            )
            return False
        return True


def check_key(key: str) -> None:
    """ValueError unless `key` is 64 lowercase hex digits."""
    if not _KEY.fullmatch(key):
        raise ValueError(f"not a sha256 hex key: {key!r}")


def encode_entry(key: str, entry: CacheEntry) -> bytes:
    """The stored form of `entry`: a header with its checksum, then key, cubin, contract."""
    payload = b"".join(_field(part) for part in (key.encode("ascii"), entry.cubin, entry.contract))
    return _HEADER.pack(_MAGIC, hashlib.sha256(payload).digest(), len(payload)) + payload


def decode_entry(data: bytes, key: str) -> CacheEntry | None:
    """The entry in `data` if its header, checksum and key all check out."""
    if len(data) < _HEADER.size:
        return None
    magic, checksum, length = _HEADER.unpack_from(data)
    payload = data[_HEADER.size :]
    if magic != _MAGIC or length != len(payload):
        return None
    if hashlib.sha256(payload).digest() != checksum:
        return None
    parts = _split_fields(payload)
    if parts is None or len(parts) != 3 or parts[0] != key.encode("ascii"):
        return None
    return CacheEntry(cubin=parts[1], contract=parts[2])


def _split_fields(payload: bytes) -> list[bytes] | None:
    parts, offset = [], 0
    while offset < len(payload):
        if offset + 8 > len(payload):
            return None
        (length,) = struct.unpack_from(">Q", payload, offset)
        offset += 8
        if offset + length > len(payload):
            return None
        parts.append(payload[offset : offset + length])
        offset += length
    return parts


def _remove_stale_temps(root: Path) -> None:
    """Delete temp files left by writes that crashed (older than `_STALE_TEMP_S`)."""
    cutoff = time.time() - _STALE_TEMP_S
    for temp in root.glob("*/.tmp-*"):
        with contextlib.suppress(OSError):
            if temp.stat().st_mtime < cutoff:
                temp.unlink()


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".artifact")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
